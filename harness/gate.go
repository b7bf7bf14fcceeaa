package harness

import (
	"fmt"
	"slices"
	"strings"

	"github.com/algal-assay/assay/engine/bench"
	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/foundry"
	"gopkg.in/yaml.v3"
)

// Gate rule kinds.
const (
	// Bench rules.
	RuleMinPassed   = "min-passed"       // {system: n}: the system passes at least n cases
	RuleOnPareto    = "on-pareto"        // [system]: the system is on the Pareto set
	RuleMaxTokens   = "max-tokens"       // {system: n}: tokens in + out at most n
	RuleMaxCalls    = "max-effect-calls" // {system: n}: effect calls at most n
	RuleOutcomes    = "outcomes"         // bench {system: {case: pass|fail}}, foundry {case: pass|fail}
	RulePromoted    = "promoted"         // manifest key of the expected promoted candidate
	RuleHoldout     = "min-holdout-rate" // holdout pass rate of the promoted candidate, 0..1
	RuleValidation  = "min-validation-rate"
	RuleTrain       = "min-train-rate"
	RuleMinPopulate = "min-population" // at least n candidates were evaluated

	// Rules over repeated samples (repeats.go).
	RuleMinPassRate = "min-pass-rate"  // {system: r}: passes over all samples at least r
	RuleMinPassHatK = "min-pass-hat-k" // {system: {k, rate}}: pass^k at least rate
	RuleMaxFlaky    = "max-flaky"      // {system: n} (foundry: n): at most n flaky cases

	// OutcomeFlaky is the outcome of a case that passed in some repeats
	// and failed in others.
	OutcomeFlaky = "flaky"
)

var (
	benchGateKeys   = append([]string{RuleMinPassed, RuleOnPareto, RuleMaxTokens, RuleMaxCalls, RuleOutcomes}, repeatKeys(KindBench)...)
	foundryGateKeys = append([]string{RulePromoted, RuleHoldout, RuleValidation, RuleTrain, RuleMinPopulate, RuleOutcomes}, repeatKeys(KindFoundry)...)
)

// Gate is what must hold for a workload to pass, besides verification.
type Gate struct{ Rules []Rule }

// Rule is one gate requirement.
type Rule struct {
	Kind   string
	System string  // bench rules about one system
	Case   string  // outcome rules
	Number float64 // thresholds
	K      int     // min-pass-hat-k's k
	Text   string  // promoted key; outcome "pass" or "fail"
	Pos    Pos
}

// Name is a short stable title for the rule, used as a spec name.
func (r Rule) Name() string {
	switch r.Kind {
	case RuleMinPassed:
		return fmt.Sprintf("%s passes at least %s cases", r.System, num(r.Number))
	case RuleOnPareto:
		return fmt.Sprintf("%s is on the Pareto set", r.System)
	case RuleMaxTokens:
		return fmt.Sprintf("%s uses at most %s tokens", r.System, num(r.Number))
	case RuleMaxCalls:
		return fmt.Sprintf("%s makes at most %s effect calls", r.System, num(r.Number))
	case RuleOutcomes:
		if r.System != "" {
			return fmt.Sprintf("%s case %s is expected to %s", r.System, r.Case, r.Text)
		}
		return fmt.Sprintf("promoted candidate case %s is expected to %s", r.Case, r.Text)
	case RulePromoted:
		return fmt.Sprintf("promotes %s", r.Text)
	case RuleHoldout:
		return fmt.Sprintf("holdout pass rate is at least %s", num(r.Number))
	case RuleValidation:
		return fmt.Sprintf("promoted validation pass rate is at least %s", num(r.Number))
	case RuleTrain:
		return fmt.Sprintf("promoted train pass rate is at least %s", num(r.Number))
	case RuleMinPopulate:
		return fmt.Sprintf("evaluates at least %s candidates", num(r.Number))
	case RuleMinPassRate, RuleMinPassHatK, RuleMaxFlaky:
		return repeatRuleName(r)
	}
	return r.Kind
}

func num(f float64) string { return string(canon.FormatNumber(nil, f)) }

func (w *Workload) parseGate(d *decoder, n *yaml.Node) error {
	allowed := benchGateKeys
	if w.Kind == KindFoundry {
		allowed = foundryGateKeys
	}
	f, order, err := d.mapping(n, "gate", allowed, nil)
	if err != nil {
		return err
	}
	// An empty gate, list or map would hold whatever the run measured; it
	// is almost always a rule the author meant to fill in.
	if len(order) == 0 {
		return d.fail(n, "gate", "has no rules; remove the gate key or add a rule (%s)", strings.Join(allowed, ", "))
	}
	splits := map[string]int{}
	for _, c := range w.Cases {
		splits[c.Split]++
	}
	perSystem := func(key string, n *yaml.Node) error {
		at := "gate." + key
		sf, sorder, err := d.entries(n, at, "names no system; write {system: n} or remove the rule")
		if err != nil {
			return err
		}
		for _, sys := range sorder {
			// min-passed 0 always holds and above the case count never
			// does; token and call ceilings are whole counts.
			lo, hi := 0, maxSafe
			if key == RuleMinPassed {
				lo, hi = 1, len(w.Cases)
			}
			v, err := d.integer(sf[sys].value, at+"."+sys, lo, hi)
			if err != nil {
				if key == RuleMinPassed {
					if rn := resolve(sf[sys].value); rn != nil && rn.Tag == "!!int" {
						return d.fail(sf[sys].value, at+"."+sys, "must be an integer from 1 to %d: the workload has %d case(s), and 0 would always hold", len(w.Cases), len(w.Cases))
					}
				}
				return err
			}
			w.Gate.Rules = append(w.Gate.Rules, Rule{Kind: key, System: sys, Number: float64(v), Pos: d.pos(sf[sys].key)})
		}
		return nil
	}
	outcomes := func(n *yaml.Node, at, system string) error {
		cf, corder, err := d.entries(n, at, "names no case; write {case: pass|fail} or remove it")
		if err != nil {
			return err
		}
		for _, c := range corder {
			v, err := d.str(cf[c].value, at+"."+c)
			if err != nil {
				return err
			}
			if v != "pass" && v != "fail" && v != OutcomeFlaky {
				return d.fail(cf[c].value, at+"."+c, `must be "pass", "fail" or "flaky"`)
			}
			w.Gate.Rules = append(w.Gate.Rules, Rule{Kind: RuleOutcomes, System: system, Case: c, Text: v, Pos: d.pos(cf[c].key)})
		}
		return nil
	}
	rate := func(key string, n *yaml.Node) error {
		v, err := d.number(n, "gate."+key)
		if err != nil {
			return err
		}
		if v <= 0 || v > 1 {
			return d.fail(n, "gate."+key, "is a pass rate: a number above 0 (which would always hold) and at most 1")
		}
		split := map[string]string{RuleHoldout: "holdout", RuleValidation: "validation", RuleTrain: "train"}[key]
		if splits[split] == 0 {
			return d.fail(n, "gate."+key, "the workload has no %s case, so this rate cannot be measured", split)
		}
		w.Gate.Rules = append(w.Gate.Rules, Rule{Kind: key, Number: v, Pos: d.pos(n)})
		return nil
	}
	for _, key := range order {
		v := f[key].value
		switch key {
		case RuleMinPassed, RuleMaxTokens, RuleMaxCalls:
			if err := perSystem(key, v); err != nil {
				return err
			}
		case RuleOnPareto:
			items, err := d.seq(v, "gate."+key)
			if err != nil {
				return err
			}
			if len(items) == 0 {
				return d.fail(v, "gate."+key, "names no system; list at least one or remove the rule")
			}
			for i, it := range items {
				s, err := d.str(it, index("gate."+key, i))
				if err != nil {
					return err
				}
				w.Gate.Rules = append(w.Gate.Rules, Rule{Kind: key, System: s, Pos: d.pos(it)})
			}
		case RuleOutcomes:
			if w.Kind == KindFoundry {
				if err := outcomes(v, "gate.outcomes", ""); err != nil {
					return err
				}
				continue
			}
			sf, sorder, err := d.entries(v, "gate.outcomes", "names no system; write {system: {case: pass|fail}} or remove the rule")
			if err != nil {
				return err
			}
			for _, sys := range sorder {
				if err := outcomes(sf[sys].value, "gate.outcomes."+sys, sys); err != nil {
					return err
				}
			}
		case RulePromoted:
			s, err := d.nonEmpty(v, "gate.promoted")
			if err != nil {
				return err
			}
			w.Gate.Rules = append(w.Gate.Rules, Rule{Kind: key, Text: s, Pos: d.pos(v)})
		case RuleHoldout, RuleValidation, RuleTrain:
			if err := rate(key, v); err != nil {
				return err
			}
		case RuleMinPopulate:
			i, err := d.integer(v, "gate."+key, 1, foundry.MaxCandidates)
			if err != nil {
				return err
			}
			w.Gate.Rules = append(w.Gate.Rules, Rule{Kind: key, Number: float64(i), Pos: d.pos(v)})
		case RuleMinPassRate, RuleMinPassHatK, RuleMaxFlaky:
			if err := w.parseRepeatRule(d, key, v); err != nil {
				return err
			}
		}
	}
	return w.checkRepeatRules()
}

// GateResult is one rule's verdict.
type GateResult struct {
	Rule   Rule
	Passed bool
	// Message explains the verdict for someone who has never seen the
	// workload: what was required, what was measured, where the rule is.
	Message string
}

// EvaluateBench judges the gate against a bench report.
func EvaluateBench(w *Workload, r *bench.Report) []GateResult {
	out := make([]GateResult, 0, len(w.Gate.Rules))
	system := func(id string) *bench.SystemResult {
		for i := range r.Systems {
			if r.Systems[i].ID == id {
				return &r.Systems[i]
			}
		}
		return nil
	}
	var single *Repeats
	for _, rule := range w.Gate.Rules {
		res := GateResult{Rule: rule}
		s := system(rule.System)
		if s != nil && slices.Contains(repeatRuleKeys, rule.Kind) {
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
		case RuleMinPassed:
			res.Passed = float64(s.Passed) >= rule.Number
			res.Message = fmt.Sprintf("system %q passed %d of %d cases; the gate at %s requires at least %s.", s.ID, s.Passed, s.Total, rule.Pos, num(rule.Number))
			if !res.Passed {
				res.Message += " Failing cases: " + failingBenchCases(s) + "."
			}
		case RuleOnPareto:
			res.Passed = slices.Contains(r.Pareto, s.ID)
			if res.Passed {
				res.Message = fmt.Sprintf("system %q is on the Pareto set [%s], as the gate at %s requires.", s.ID, strings.Join(r.Pareto, ", "), rule.Pos)
			} else {
				res.Message = fmt.Sprintf("system %q is not on the Pareto set [%s]: another system is at least as good on every axis and better on one; the gate at %s requires it to be on the set.", s.ID, strings.Join(r.Pareto, ", "), rule.Pos)
			}
		case RuleMaxTokens:
			tokens := s.Usage.TokensIn + s.Usage.TokensOut
			res.Passed = float64(tokens) <= rule.Number
			res.Message = fmt.Sprintf("system %q used %d tokens (%d in, %d out); the gate at %s allows at most %s.", s.ID, tokens, s.Usage.TokensIn, s.Usage.TokensOut, rule.Pos, num(rule.Number))
		case RuleMaxCalls:
			res.Passed = float64(s.EffectCalls) <= rule.Number
			res.Message = fmt.Sprintf("system %q made %d effect calls; the gate at %s allows at most %s.", s.ID, s.EffectCalls, rule.Pos, num(rule.Number))
		case RuleOutcomes:
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
		if !c.Passed && (s.Total <= PartCases || len(parts) < maxListedFailures) {
			parts = append(parts, failingBenchCase(c))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	if more := int(s.Total-s.Passed) - len(parts); s.Total > PartCases && more > 0 {
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
func EvaluateFoundry(w *Workload, res *foundry.Result) []GateResult {
	out := make([]GateResult, 0, len(w.Gate.Rules))
	for _, rule := range w.Gate.Rules {
		g := GateResult{Rule: rule}
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
		case RulePromoted:
			g.Passed = key == rule.Text
			g.Message = fmt.Sprintf("the foundry promoted %s (%s); the gate at %s expects %s.", key, r.Promoted, rule.Pos, rule.Text)
			if !g.Passed {
				g.Message += " Ranking: " + ranking(r) + "."
			}
		case RuleHoldout:
			g.Passed = rateAtLeast(r.Holdout.Score, rule.Number)
			g.Message = fmt.Sprintf("the promoted candidate %s passed %d of %d holdout cases; the gate at %s requires a rate of at least %s.", key, r.Holdout.Passed, r.Holdout.Total, rule.Pos, num(rule.Number))
			if !g.Passed {
				g.Message += " Failing holdout cases: " + failingFoundryCases(r.Holdout.Cases) + "."
			}
		case RuleValidation, RuleTrain:
			if promoted == nil {
				g.Message = "the report names no promoted candidate among its candidates"
				break
			}
			score, split := promoted.Validation, "validation"
			if rule.Kind == RuleTrain {
				score, split = promoted.Train, "train"
			}
			g.Passed = rateAtLeast(score, rule.Number)
			g.Message = fmt.Sprintf("the promoted candidate %s passed %d of %d %s cases; the gate at %s requires a rate of at least %s.", key, score.Passed, score.Total, split, rule.Pos, num(rule.Number))
		case RuleMinPopulate:
			g.Passed = float64(len(r.Candidates)) >= rule.Number
			g.Message = fmt.Sprintf("the foundry evaluated %d candidates; the gate at %s requires at least %s.", len(r.Candidates), rule.Pos, num(rule.Number))
		case RuleOutcomes:
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

// GatesPassed reports whether every rule holds.
func GatesPassed(results []GateResult) bool {
	for _, r := range results {
		if !r.Passed {
			return false
		}
	}
	return true
}
