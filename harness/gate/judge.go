package gate

import (
	"fmt"
	"slices"
	"strings"

	"github.com/algal-assay/assay/engine/bench"
	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/foundry"
	"github.com/algal-assay/assay/harness/repeats"
	"github.com/algal-assay/assay/harness/workload"
)

// Result is one rule's verdict.
type Result struct {
	Rule   workload.Rule
	Passed bool
	// Message explains the verdict for someone who has never seen the
	// workload: what was required, what was measured, where the rule is.
	Message string
}

// EvaluateBench judges the gate against a bench report.
func EvaluateBench(w *workload.Workload, r *bench.Report) []Result {
	out := make([]Result, 0, len(w.Gate.Rules))
	system := func(id string) *bench.SystemResult {
		for i := range r.Systems {
			if r.Systems[i].ID == id {
				return &r.Systems[i]
			}
		}
		return nil
	}
	var single *repeats.Aggregate
	for _, rule := range w.Gate.Rules {
		res := Result{Rule: rule}
		s := system(rule.System)
		if s != nil && slices.Contains(workload.RepeatRuleKeys, rule.Kind) {
			if single == nil {
				single = singleRepeat(w, r)
			}
			if c := single.Contender(s.ID); c != nil {
				out = append(out, judgeRepeatRule(rule, c, 1))
				continue
			}
		}
		if s == nil {
			res.Message = fmt.Sprintf("gate %s (%s): system %q is not in the report", rule.Kind, rule.Pos, rule.System)
			out = append(out, res)
			continue
		}
		switch rule.Kind {
		case workload.RuleMinPassed:
			res.Passed = float64(s.Passed) >= rule.Number
			res.Message = fmt.Sprintf("system %q passed %d of %d cases; the gate at %s requires at least %s.", s.ID, s.Passed, s.Total, rule.Pos, workload.Num(rule.Number))
			if !res.Passed {
				res.Message += " Failing cases: " + failingBenchCases(s) + "."
			}
		case workload.RuleOnPareto:
			res.Passed = slices.Contains(r.Pareto, s.ID)
			if res.Passed {
				res.Message = fmt.Sprintf("system %q is on the Pareto set [%s], as the gate at %s requires.", s.ID, strings.Join(r.Pareto, ", "), rule.Pos)
			} else {
				res.Message = fmt.Sprintf("system %q is not on the Pareto set [%s]: another system is at least as good on every axis and better on one; the gate at %s requires it to be on the set.", s.ID, strings.Join(r.Pareto, ", "), rule.Pos)
			}
		case workload.RuleMaxTokens:
			tokens := s.Usage.TokensIn + s.Usage.TokensOut
			res.Passed = float64(tokens) <= rule.Number
			res.Message = fmt.Sprintf("system %q used %d tokens (%d in, %d out); the gate at %s allows at most %s.", s.ID, tokens, s.Usage.TokensIn, s.Usage.TokensOut, rule.Pos, workload.Num(rule.Number))
		case workload.RuleMaxCalls:
			res.Passed = float64(s.EffectCalls) <= rule.Number
			res.Message = fmt.Sprintf("system %q made %d effect calls; the gate at %s allows at most %s.", s.ID, s.EffectCalls, rule.Pos, workload.Num(rule.Number))
		case workload.RuleOutcomes:
			c := benchCase(s, rule.Case)
			if c == nil {
				res.Message = fmt.Sprintf("case %q is not in system %q's results", rule.Case, s.ID)
				break
			}
			res.Passed = c.Passed == (rule.Text == "pass")
			res.Message = fmt.Sprintf("system %q case %q %s (outcome %s, expected %s, got %s); the gate at %s expects it to %s.",
				s.ID, c.ID, passWord(c.Passed), c.Outcome, ShortJSON(c.Expect), ShortJSON(c.Outputs), rule.Pos, rule.Text)
		}
		out = append(out, res)
	}
	return out
}

func benchCase(s *bench.SystemResult, id string) *bench.CaseResult {
	for i := range s.Cases {
		if s.Cases[i].ID == id {
			return &s.Cases[i]
		}
	}
	return nil
}

func failingBenchCases(s *bench.SystemResult) string {
	var parts []string
	for _, c := range s.Cases {
		if !c.Passed && (s.Total <= workload.PartCases || len(parts) < MaxListedFailures) {
			parts = append(parts, failingBenchCase(c))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	if more := int(s.Total-s.Passed) - len(parts); s.Total > workload.PartCases && more > 0 {
		// An aggregate over parts names its first failures; the part
		// reports hold the rest.
		parts = append(parts, fmt.Sprintf("and %d more (the part reports hold them)", more))
	}
	return strings.Join(parts, "; ")
}

func passWord(p bool) string {
	if p {
		return "passed"
	}
	return "failed"
}

// ShortJSON renders a JSON value for a message, shortened to 120 bytes
// (ci/verify names disagreeing fields with it too).
func ShortJSON(v any) string {
	b, err := canon.Encode(v)
	if err != nil {
		return "?"
	}
	s := string(b)
	if len(s) > 120 {
		s = s[:117] + "..."
	}
	return s
}

// EvaluateFoundry judges the gate against a foundry result. An exhausted
// budget fails every rule that needs a promotion.
func EvaluateFoundry(w *workload.Workload, res *foundry.Result) []Result {
	out := make([]Result, 0, len(w.Gate.Rules))
	for _, rule := range w.Gate.Rules {
		g := Result{Rule: rule}
		if res == nil || res.Report == nil {
			g.Message = fmt.Sprintf("the habitat budget was exhausted before a candidate was promoted, so the gate at %s cannot hold.", rule.Pos)
			out = append(out, g)
			continue
		}
		r := res.Report
		var promoted *foundry.CandidateResult
		for i := range r.Candidates {
			if r.Candidates[i].ManifestDigest == r.Promoted {
				promoted = &r.Candidates[i]
			}
		}
		key := "?"
		if promoted != nil {
			key = promoted.ManifestKey
		}
		switch rule.Kind {
		case workload.RulePromoted:
			g.Passed = key == rule.Text
			g.Message = fmt.Sprintf("the foundry promoted %s (%s); the gate at %s expects %s.", key, r.Promoted, rule.Pos, rule.Text)
			if !g.Passed {
				g.Message += " Ranking: " + ranking(r) + "."
			}
		case workload.RuleHoldout:
			g.Passed = rateAtLeast(r.Holdout.Score, rule.Number)
			g.Message = fmt.Sprintf("the promoted candidate %s passed %d of %d holdout cases; the gate at %s requires a rate of at least %s.", key, r.Holdout.Passed, r.Holdout.Total, rule.Pos, workload.Num(rule.Number))
			if !g.Passed {
				g.Message += " Failing holdout cases: " + failingFoundryCases(r.Holdout.Cases) + "."
			}
		case workload.RuleValidation, workload.RuleTrain:
			if promoted == nil {
				g.Message = "the report names no promoted candidate among its candidates"
				break
			}
			score, split := promoted.Validation, "validation"
			if rule.Kind == workload.RuleTrain {
				score, split = promoted.Train, "train"
			}
			g.Passed = rateAtLeast(score, rule.Number)
			g.Message = fmt.Sprintf("the promoted candidate %s passed %d of %d %s cases; the gate at %s requires a rate of at least %s.", key, score.Passed, score.Total, split, rule.Pos, workload.Num(rule.Number))
		case workload.RuleMinPopulate:
			g.Passed = float64(len(r.Candidates)) >= rule.Number
			g.Message = fmt.Sprintf("the foundry evaluated %d candidates; the gate at %s requires at least %s.", len(r.Candidates), rule.Pos, workload.Num(rule.Number))
		case workload.RuleOutcomes:
			var c *foundry.CaseResult
			lists := [][]foundry.CaseResult{r.Holdout.Cases}
			if promoted != nil {
				lists = append(lists, promoted.Cases)
			}
			for _, list := range lists {
				for i := range list {
					if list[i].ID == rule.Case {
						c = &list[i]
					}
				}
			}
			if c == nil {
				g.Message = fmt.Sprintf("case %q is not in the promoted candidate's results", rule.Case)
				break
			}
			g.Passed = c.Passed == (rule.Text == "pass")
			g.Message = fmt.Sprintf("the promoted candidate %s %s %s case %q (outcome %s, expected %s, got %s); the gate at %s expects it to %s.",
				key, passWord(c.Passed), c.Split, c.ID, c.Outcome, ShortJSON(c.Expect), ShortJSON(c.Outputs), rule.Pos, rule.Text)
		}
		out = append(out, g)
	}
	return out
}

func rateAtLeast(s foundry.Score, min float64) bool {
	return s.Total > 0 && float64(s.Passed) >= min*float64(s.Total)
}

func failingFoundryCases(cases []foundry.CaseResult) string {
	var parts []string
	for _, c := range cases {
		if !c.Passed {
			parts = append(parts, fmt.Sprintf("%s (outcome %s, expected %s, got %s)", c.ID, c.Outcome, ShortJSON(c.Expect), ShortJSON(c.Outputs)))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, "; ")
}

func ranking(r *foundry.Report) string {
	var parts []string
	for place, i := range foundry.Rank(r.Candidates) {
		c := &r.Candidates[i]
		parts = append(parts, fmt.Sprintf("%d. %s (validation %d/%d, train %d/%d)", place+1, c.ManifestKey, c.Validation.Passed, c.Validation.Total, c.Train.Passed, c.Train.Total))
	}
	return strings.Join(parts, ", ")
}

// Passed reports whether every rule holds.
func Passed(results []Result) bool {
	for _, r := range results {
		if !r.Passed {
			return false
		}
	}
	return true
}

// MaxListedFailures bounds the failing cases a min-passed message of an
// aggregate names.
const MaxListedFailures = 20

// failingBenchCase describes one failing case; an aggregate keeps only a
// case's verdict and outcome (its part report holds the rest).
func failingBenchCase(c bench.CaseResult) string {
	if c.Expect == nil && c.Outputs == nil {
		return fmt.Sprintf("%s (outcome %s)", c.ID, c.Outcome)
	}
	return fmt.Sprintf("%s (outcome %s, expected %s, got %s)", c.ID, c.Outcome, ShortJSON(c.Expect), ShortJSON(c.Outputs))
}
