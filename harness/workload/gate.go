package workload

import (
	"fmt"
	"strings"

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
		return fmt.Sprintf("%s passes at least %s cases", r.System, Num(r.Number))
	case RuleOnPareto:
		return fmt.Sprintf("%s is on the Pareto set", r.System)
	case RuleMaxTokens:
		return fmt.Sprintf("%s uses at most %s tokens", r.System, Num(r.Number))
	case RuleMaxCalls:
		return fmt.Sprintf("%s makes at most %s effect calls", r.System, Num(r.Number))
	case RuleOutcomes:
		if r.System != "" {
			return fmt.Sprintf("%s case %s is expected to %s", r.System, r.Case, r.Text)
		}
		return fmt.Sprintf("promoted candidate case %s is expected to %s", r.Case, r.Text)
	case RulePromoted:
		return fmt.Sprintf("promotes %s", r.Text)
	case RuleHoldout:
		return fmt.Sprintf("holdout pass rate is at least %s", Num(r.Number))
	case RuleValidation:
		return fmt.Sprintf("promoted validation pass rate is at least %s", Num(r.Number))
	case RuleTrain:
		return fmt.Sprintf("promoted train pass rate is at least %s", Num(r.Number))
	case RuleMinPopulate:
		return fmt.Sprintf("evaluates at least %s candidates", Num(r.Number))
	case RuleMinPassRate, RuleMinPassHatK, RuleMaxFlaky:
		return repeatRuleName(r)
	}
	return r.Kind
}

func repeatRuleName(r Rule) string {
	switch r.Kind {
	case RuleMinPassRate:
		return fmt.Sprintf("%s passes at least %s of its case runs", r.System, Num(r.Number))
	case RuleMinPassHatK:
		return fmt.Sprintf("%s has pass^%d at least %s", r.System, r.K, Num(r.Number))
	case RuleMaxFlaky:
		if r.System == "" {
			return fmt.Sprintf("the promoted candidate has at most %s flaky cases", Num(r.Number))
		}
		return fmt.Sprintf("%s has at most %s flaky cases", r.System, Num(r.Number))
	}
	return r.Kind
}

// num writes a threshold as the canonical JSON number it is.
func Num(f float64) string { return string(canon.FormatNumber(nil, f)) }

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
