package gate

import (
	"fmt"
	"math/big"
	"slices"
	"strings"

	"github.com/algal-assay/assay/engine/bench"
	"github.com/algal-assay/assay/engine/foundry"
	"github.com/algal-assay/assay/harness/passk"
	"github.com/algal-assay/assay/harness/repeats"
	"github.com/algal-assay/assay/harness/workload"
)

// Judge judges w's gate against a run's evidence: the single report when
// the run has one repeat, the aggregate of the repeats otherwise. With
// repeats, counts are per repeat on average (min-passed, max-tokens,
// max-effect-calls), on-pareto reads the pooled Pareto set, an outcome is
// pass (every repeat), fail (none) or flaky (some), and a foundry's rules
// read the candidate the pooled evidence promotes.
func Judge(w *workload.Workload, b *bench.Report, f *foundry.Result, a *repeats.Aggregate) []Result {
	if a == nil || a.K <= 1 {
		if w.Kind == workload.KindBench {
			return EvaluateBench(w, b)
		}
		return EvaluateFoundry(w, f)
	}
	if w.Kind == workload.KindBench {
		return judgeBenchRepeats(w, a)
	}
	return judgeFoundryRepeats(w, a)
}

// judgeRepeatRule judges min-pass-rate, min-pass-hat-k and max-flaky on
// one contender's samples.
func judgeRepeatRule(rule workload.Rule, c *repeats.Contender, k int) Result {
	res := Result{Rule: rule}
	who := fmt.Sprintf("system %q", c.ID)
	if rule.System == "" {
		who = "the promoted candidate " + c.ID
	}
	over := fmt.Sprintf("%d case runs over %d repeat(s)", c.Samples, k)
	switch rule.Kind {
	case workload.RuleMinPassRate:
		rate := c.PassRate()
		res.Passed = rate.AtLeast(passk.Threshold(rule.Number))
		res.Message = fmt.Sprintf("%s passed %d of %s (pass rate %s); the gate at %s requires at least %s.", who, c.Passes, over, rate, rule.Pos, workload.Num(rule.Number))
	case workload.RuleMinPassHatK:
		est := c.PassHatK(rule.K)
		res.Passed = est.AtLeast(passk.Threshold(rule.Number))
		if !est.Defined() {
			res.Message = fmt.Sprintf("%s: pass^%d is n/a: a case ran %d time(s), fewer than %d; the gate at %s requires pass^%d of at least %s, which these runs cannot show.", who, rule.K, k, rule.K, rule.Pos, rule.K, workload.Num(rule.Number))
			break
		}
		res.Message = fmt.Sprintf("%s has pass^%d %s (%s, from %s); the gate at %s requires at least %s.", who, rule.K, est, est.Fraction(), over, rule.Pos, workload.Num(rule.Number))
	case workload.RuleMaxFlaky:
		flaky := FlakyCases(c.Cases)
		res.Passed = float64(len(flaky)) <= rule.Number
		res.Message = fmt.Sprintf("%s has %d flaky case(s) over %d repeats%s; the gate at %s allows at most %s.", who, len(flaky), k, listed(flaky), rule.Pos, workload.Num(rule.Number))
	}
	if !res.Passed && rule.Kind != workload.RuleMaxFlaky {
		res.Message += " " + caseSpread(c.Cases)
	}
	return res
}

// FlakyCases describes each flaky case with the repeats it passed in.
func FlakyCases(cases []repeats.Case) []string {
	var out []string
	for _, c := range cases {
		if c.Verdict() == repeats.VerdictFlaky {
			out = append(out, fmt.Sprintf("%s (passed in %s of %d)", c.ID, RepeatWord(c.PassedIn), c.Runs))
		}
	}
	return out
}

// caseSpread names the cases that did not pass every time.
func caseSpread(cases []repeats.Case) string {
	var failed []string
	for _, c := range cases {
		if c.Verdict() == repeats.VerdictFail {
			failed = append(failed, c.ID)
		}
	}
	var parts []string
	if f := FlakyCases(cases); len(f) > 0 {
		parts = append(parts, "Flaky: "+strings.Join(f, "; ")+".")
	}
	if len(failed) > 0 {
		parts = append(parts, "Failed in every repeat: "+strings.Join(failed, ", ")+".")
	}
	return strings.Join(parts, " ")
}

func listed(items []string) string {
	if len(items) == 0 {
		return ""
	}
	return ": " + strings.Join(items, "; ")
}

// RepeatWord is "repeat 2" or "repeats 1, 3".
func RepeatWord(rs []int) string {
	if len(rs) == 1 {
		return "repeat " + Ints(rs)
	}
	return "repeats " + Ints(rs)
}

// Ints lists repeat numbers: "1, 3".
func Ints(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}

func judgeBenchRepeats(w *workload.Workload, a *repeats.Aggregate) []Result {
	out := make([]Result, 0, len(w.Gate.Rules))
	k := float64(a.K)
	for _, rule := range w.Gate.Rules {
		res := Result{Rule: rule}
		c := a.Contender(rule.System)
		if c == nil {
			res.Message = fmt.Sprintf("gate %s (%s): system %q is not in the repeats", rule.Kind, rule.Pos, rule.System)
			out = append(out, res)
			continue
		}
		switch rule.Kind {
		case workload.RuleMinPassRate, workload.RuleMinPassHatK, workload.RuleMaxFlaky:
			res = judgeRepeatRule(rule, c, a.K)
		case workload.RuleMinPassed:
			res.Passed = float64(c.Passes) >= rule.Number*k
			res.Message = fmt.Sprintf("system %q passed %d of %d case runs over %d repeats (%s of %d cases per repeat on average); the gate at %s requires at least %s per repeat on average.",
				c.ID, c.Passes, c.Samples, a.K, MeanCount(int64(c.Passes), a.K), len(c.Cases), rule.Pos, workload.Num(rule.Number))
			if !res.Passed {
				res.Message += " " + caseSpread(c.Cases)
			}
		case workload.RuleOnPareto:
			res.Passed = slices.Contains(a.Pareto, c.ID)
			verb := "is"
			if !res.Passed {
				verb = "is not"
			}
			res.Message = fmt.Sprintf("system %q %s on the Pareto set over %d repeats [%s] (mean pass rate, cost or tokens, calls; or the declared axes' means); the gate at %s requires it to be on the set.", c.ID, verb, a.K, strings.Join(a.Pareto, ", "), rule.Pos)
		case workload.RuleMaxTokens:
			tokens := c.TokensIn + c.TokensOut
			res.Passed = float64(tokens) <= rule.Number*k
			res.Message = fmt.Sprintf("system %q used %d tokens over %d repeats (%s per repeat on average); the gate at %s allows at most %s per repeat on average.", c.ID, tokens, a.K, MeanCount(tokens, a.K), rule.Pos, workload.Num(rule.Number))
		case workload.RuleMaxCalls:
			res.Passed = float64(c.EffectCalls) <= rule.Number*k
			res.Message = fmt.Sprintf("system %q made %d effect calls over %d repeats (%s per repeat on average); the gate at %s allows at most %s per repeat on average.", c.ID, c.EffectCalls, a.K, MeanCount(c.EffectCalls, a.K), rule.Pos, workload.Num(rule.Number))
		case workload.RuleOutcomes:
			res = judgeOutcome(rule, fmt.Sprintf("system %q", c.ID), c.Case(rule.Case))
		}
		out = append(out, res)
	}
	return out
}

// MeanCount renders total/k exactly: a whole number as such, else to
// two decimals.
func MeanCount(total int64, k int) string {
	r := big.NewRat(total, int64(k))
	if r.IsInt() {
		return r.Num().String()
	}
	return r.FloatString(2)
}

// judgeOutcome judges an outcomes rule over repeats: pass means every
// repeat passed, fail none, flaky some.
func judgeOutcome(rule workload.Rule, who string, c *repeats.Case) Result {
	res := Result{Rule: rule}
	if c == nil || c.Runs == 0 {
		res.Message = fmt.Sprintf("case %q did not run for %s", rule.Case, who)
		return res
	}
	v := c.Verdict()
	res.Passed = v == rule.Text
	in := "no repeat"
	if len(c.PassedIn) > 0 {
		in = RepeatWord(c.PassedIn)
	}
	res.Message = fmt.Sprintf("%s case %q is %s over %d repeats (passed in %s); the gate at %s expects %s.", who, c.ID, v, c.Runs, in, rule.Pos, rule.Text)
	return res
}

func judgeFoundryRepeats(w *workload.Workload, a *repeats.Aggregate) []Result {
	out := make([]Result, 0, len(w.Gate.Rules))
	win := a.PromotedContender()
	for _, rule := range w.Gate.Rules {
		g := Result{Rule: rule}
		if win == nil {
			g.Message = fmt.Sprintf("repeat %s exhausted the habitat budget before a candidate was promoted, so the gate at %s cannot hold.", Ints(a.Exhausted), rule.Pos)
			out = append(out, g)
			continue
		}
		won := fmt.Sprintf("promoted on validation pooled over %d repeats; its own repeats promoted it in %d of them", a.K, len(win.PromotedIn))
		switch rule.Kind {
		case workload.RulePromoted:
			g.Passed = win.ID == rule.Text
			g.Message = fmt.Sprintf("the foundry promoted %s (%s), %s; the gate at %s expects %s.", win.ID, win.ManifestDigest, won, rule.Pos, rule.Text)
			if !g.Passed {
				g.Message += " Pooled ranking: " + pooledRanking(a) + "."
			}
		case workload.RuleHoldout:
			h := a.Holdout
			g.Passed = h.Samples > 0 && passk.Rate(h.Passes, h.Samples).AtLeast(passk.Threshold(rule.Number))
			if h.Samples == 0 {
				g.Message = fmt.Sprintf("the promoted candidate %s won no repeat of its own, so no holdout ran on it (each repeat runs its holdout on its own winner); the gate at %s requires a holdout rate of at least %s.", win.ID, rule.Pos, workload.Num(rule.Number))
				break
			}
			g.Message = fmt.Sprintf("the promoted candidate %s passed %d of %d holdout runs over the %d repeat(s) it won; the gate at %s requires a rate of at least %s.", win.ID, h.Passes, h.Samples, len(win.PromotedIn), rule.Pos, workload.Num(rule.Number))
			if !g.Passed {
				g.Message += " " + caseSpread(h.Cases)
			}
		case workload.RuleValidation, workload.RuleTrain:
			p, split := win.Validation, "validation"
			if rule.Kind == workload.RuleTrain {
				p, split = win.Train, "train"
			}
			g.Passed = p.Samples > 0 && p.Rate().AtLeast(passk.Threshold(rule.Number))
			g.Message = fmt.Sprintf("the promoted candidate %s passed %d of %d %s runs over %d repeats; the gate at %s requires a rate of at least %s.", win.ID, p.Passes, p.Samples, split, a.K, rule.Pos, workload.Num(rule.Number))
		case workload.RuleMinPopulate:
			g.Passed = float64(len(a.Contenders)) >= rule.Number
			g.Message = fmt.Sprintf("the foundry evaluated %d distinct candidates over %d repeats; the gate at %s requires at least %s.", len(a.Contenders), a.K, rule.Pos, workload.Num(rule.Number))
		case workload.RuleOutcomes:
			c := win.Case(rule.Case)
			if c == nil && a.Holdout != nil {
				for i := range a.Holdout.Cases {
					if a.Holdout.Cases[i].ID == rule.Case {
						c = &a.Holdout.Cases[i]
					}
				}
			}
			g = judgeOutcome(rule, "the promoted candidate "+win.ID, c)
		case workload.RuleMaxFlaky:
			all := append(slices.Clone(win.Cases), a.Holdout.Cases...)
			g = judgeRepeatRule(rule, &repeats.Contender{ID: win.ID, Cases: all, Samples: win.Samples + a.Holdout.Samples}, a.K)
		}
		out = append(out, g)
	}
	return out
}

func pooledRanking(a *repeats.Aggregate) string {
	var parts []string
	for place, i := range a.PromotionOrder() {
		c := &a.Contenders[i]
		parts = append(parts, fmt.Sprintf("%d. %s (validation %d/%d, train %d/%d)", place+1, c.ID, c.Validation.Passes, c.Validation.Samples, c.Train.Passes, c.Train.Samples))
	}
	return strings.Join(parts, ", ")
}

// singleRepeat aggregates a one-repeat bench report for the repeat rules
// a workload without repeats may still state (min-pass-rate, pass^1).
func singleRepeat(w *workload.Workload, r *bench.Report) *repeats.Aggregate {
	a, err := repeats.AggregateBench(w.Name, []*bench.Report{r})
	if err != nil {
		return nil
	}
	return a
}
