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
	p := &gateParser{w: w, d: d, splits: map[string]int{}}
	for _, c := range w.Cases {
		p.splits[c.Split]++
	}
	for _, key := range order {
		if err := gateRuleReaders[key](p, key, f[key].value); err != nil {
			return err
		}
	}
	return w.checkRepeatRules()
}

// gateParser reads one workload's gate: block into w.Gate.Rules.
type gateParser struct {
	w *Workload
	d *decoder
	// splits counts the workload's cases per split, for the rate rules.
	splits map[string]int
}

// gateRuleReaders reads each gate key (benchGateKeys, foundryGateKeys)
// into its rules.
var gateRuleReaders = map[string]func(p *gateParser, key string, n *yaml.Node) error{
	RuleMinPassed:   (*gateParser).perSystem,
	RuleMaxTokens:   (*gateParser).perSystem,
	RuleMaxCalls:    (*gateParser).perSystem,
	RuleOnPareto:    (*gateParser).onPareto,
	RuleOutcomes:    (*gateParser).outcomes,
	RulePromoted:    (*gateParser).promoted,
	RuleHoldout:     (*gateParser).rate,
	RuleValidation:  (*gateParser).rate,
	RuleTrain:       (*gateParser).rate,
	RuleMinPopulate: (*gateParser).minPopulation,
	RuleMinPassRate: (*gateParser).repeatRule,
	RuleMinPassHatK: (*gateParser).repeatRule,
	RuleMaxFlaky:    (*gateParser).repeatRule,
}

func (p *gateParser) add(r Rule) { p.w.Gate.Rules = append(p.w.Gate.Rules, r) }

// perSystem reads {system: n}: min-passed, max-tokens, max-effect-calls.
func (p *gateParser) perSystem(key string, n *yaml.Node) error {
	d, at := p.d, "gate."+key
	sf, sorder, err := d.entries(n, at, "names no system; write {system: n} or remove the rule")
	if err != nil {
		return err
	}
	for _, sys := range sorder {
		v, err := p.systemBound(key, sf[sys].value, at+"."+sys)
		if err != nil {
			return err
		}
		p.add(Rule{Kind: key, System: sys, Number: float64(v), Pos: d.pos(sf[sys].key)})
	}
	return nil
}

// systemBound reads one system's n: min-passed 0 always holds and above
// the case count never does; token and call ceilings are whole counts.
func (p *gateParser) systemBound(key string, n *yaml.Node, at string) (int, error) {
	cases := len(p.w.Cases)
	if key != RuleMinPassed {
		return p.d.integer(n, at, 0, maxSafe)
	}
	v, err := p.d.integer(n, at, 1, cases)
	if err != nil {
		if rn := resolve(n); rn != nil && rn.Tag == "!!int" {
			return 0, p.d.fail(n, at, "must be an integer from 1 to %d: the workload has %d case(s), and 0 would always hold", cases, cases)
		}
	}
	return v, err
}

// onPareto reads [system].
func (p *gateParser) onPareto(key string, n *yaml.Node) error {
	d := p.d
	items, err := d.seq(n, "gate."+key)
	if err != nil {
		return err
	}
	if len(items) == 0 {
		return d.fail(n, "gate."+key, "names no system; list at least one or remove the rule")
	}
	for i, it := range items {
		s, err := d.str(it, index("gate."+key, i))
		if err != nil {
			return err
		}
		p.add(Rule{Kind: key, System: s, Pos: d.pos(it)})
	}
	return nil
}

// outcomes reads a foundry's {case: outcome} or a bench's
// {system: {case: outcome}}.
func (p *gateParser) outcomes(_ string, n *yaml.Node) error {
	if p.w.Kind == KindFoundry {
		return p.caseOutcomes(n, "gate.outcomes", "")
	}
	sf, sorder, err := p.d.entries(n, "gate.outcomes", "names no system; write {system: {case: pass|fail}} or remove the rule")
	if err != nil {
		return err
	}
	for _, sys := range sorder {
		if err := p.caseOutcomes(sf[sys].value, "gate.outcomes."+sys, sys); err != nil {
			return err
		}
	}
	return nil
}

// caseOutcomes reads {case: pass|fail|flaky} for system ("" for a
// foundry's promoted candidate).
func (p *gateParser) caseOutcomes(n *yaml.Node, at, system string) error {
	d := p.d
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
		p.add(Rule{Kind: RuleOutcomes, System: system, Case: c, Text: v, Pos: d.pos(cf[c].key)})
	}
	return nil
}

// promoted reads the manifest key the foundry is expected to promote.
func (p *gateParser) promoted(key string, n *yaml.Node) error {
	s, err := p.d.nonEmpty(n, "gate.promoted")
	if err != nil {
		return err
	}
	p.add(Rule{Kind: key, Text: s, Pos: p.d.pos(n)})
	return nil
}

// rateSplits is the split each pass-rate rule measures.
var rateSplits = map[string]string{RuleHoldout: "holdout", RuleValidation: "validation", RuleTrain: "train"}

// rate reads a pass rate over one split: above 0 (which would always
// hold), at most 1, over a split the workload has cases in.
func (p *gateParser) rate(key string, n *yaml.Node) error {
	d := p.d
	v, err := d.number(n, "gate."+key)
	if err != nil {
		return err
	}
	if v <= 0 || v > 1 {
		return d.fail(n, "gate."+key, "is a pass rate: a number above 0 (which would always hold) and at most 1")
	}
	split := rateSplits[key]
	if p.splits[split] == 0 {
		return d.fail(n, "gate."+key, "the workload has no %s case, so this rate cannot be measured", split)
	}
	p.add(Rule{Kind: key, Number: v, Pos: d.pos(n)})
	return nil
}

// minPopulation reads the least number of candidates a foundry evaluates.
func (p *gateParser) minPopulation(key string, n *yaml.Node) error {
	i, err := p.d.integer(n, "gate."+key, 1, foundry.MaxCandidates)
	if err != nil {
		return err
	}
	p.add(Rule{Kind: key, Number: float64(i), Pos: p.d.pos(n)})
	return nil
}

// repeatRule reads a rule over repeated samples (repeats.go).
func (p *gateParser) repeatRule(key string, n *yaml.Node) error {
	return p.w.parseRepeatRule(p.d, key, n)
}
