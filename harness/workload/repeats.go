package workload

import (
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// Repeats: a workload may run every contender on every case k times
// (`repeats: k`, or `assay run --repeats k`) as independent samples, to
// measure how often an answer holds rather than whether it held once.
// Each repeat is one ordinary algal.bench.v1 / algal.foundry.v1 report
// that verifies on its own (report.json is repeat 1, report-r02.json
// repeat 2, ...); repeats.json aggregates them (repeats_aggregate.go) and
// is re-derived from the verified reports by every reader, so a forged
// pass^k or flaky list fails verification.
//
// Repeats never collapse into one sample: the effect memo is not
// consulted in a repeated run, every repeat opens its own sessions (so
// scripted queues and live recorders start afresh), and the recording
// archive keeps one recording per repeat, replaying recording i for
// repeat i.

// MaxRepeats bounds repeats: a repeated run costs k times a single one.
const MaxRepeats = 32

// RepeatResponse is a response tagged !repeats: the values one cell gets
// in each repeat of a case (each a plain value's one call or a !queue's
// several).
type RepeatResponse struct {
	Executor, Cell string
	Values         [][]any
	Pos            Pos
}

func (w *Workload) parseRepeats(d *decoder, f map[string]field) error {
	w.Repeats = 1
	x, ok := f["repeats"]
	if !ok {
		return nil
	}
	k, err := d.integer(x.value, "repeats", 1, MaxRepeats)
	if err != nil {
		return err
	}
	w.Repeats = k
	w.positions["repeats"] = d.pos(x.value)
	return nil
}

// checkPerRepeat requires every !repeats list to name one response per
// repeat.
func (w *Workload) checkPerRepeat() error {
	if w.Repeats > 1 && w.InParts() {
		return errAt(w.positions["repeats"], "repeats", "a workload of more than %d cases or %d systems runs in parts, and parts do not repeat yet; run at most %d cases and %d systems per repeated workload",
			PartCases, PartSystems, PartCases, PartSystems)
	}
	for _, c := range w.Cases {
		for _, rr := range c.PerRepeat {
			if len(rr.Values) != w.Repeats {
				return errAt(rr.Pos, "cases["+c.ID+"].responses."+rr.Executor+"."+rr.Cell,
					"%s lists %d response(s), one per repeat, but the workload runs %d repeat(s) (repeats: %d); list exactly %d",
					RepeatsTag, len(rr.Values), w.Repeats, w.Repeats, w.Repeats)
			}
		}
	}
	return nil
}

// WithRepeats returns a copy of w that runs k repeats (`--repeats k`),
// or w itself when k is 0 or already w's.
func (w *Workload) WithRepeats(k int) (*Workload, error) {
	if k == 0 || k == w.Repeats {
		return w, nil
	}
	if k < 1 || k > MaxRepeats {
		return nil, errAt(w.pos, "repeats", "--repeats %d: want 1 to %d", k, MaxRepeats)
	}
	c := *w
	c.Repeats = k
	if err := c.checkPerRepeat(); err != nil {
		return nil, fmt.Errorf("--repeats %d: %w", k, err)
	}
	if err := c.checkRepeatRules(); err != nil {
		return nil, fmt.Errorf("--repeats %d: %w", k, err)
	}
	return &c, nil
}

// scriptedRepeats is how many scripted tables the cases executor name
// compiles to: one per repeat when some case's responses for it differ
// per repeat, else one that every repeat reads.
func (w *Workload) ScriptedRepeats(name string) int {
	for _, c := range w.Cases {
		for _, rr := range c.PerRepeat {
			if rr.Executor == name {
				return w.Repeats
			}
		}
	}
	return 1
}

// responsesAt is the case's responses in repeat rep (1-based).
func (c Case) responsesAt(rep int) map[string]map[string][]any {
	out := c.Responses()
	if rep == 1 || len(c.PerRepeat) == 0 {
		return out
	}
	for _, rr := range c.PerRepeat {
		if rep <= len(rr.Values) {
			out[rr.Executor][rr.Cell] = rr.Values[rep-1]
		}
	}
	return out
}

// declaredCalls counts, per case, executor and cell, the responses the
// case declares in repeat rep, for the alignment check.
func DeclaredCalls(w *Workload, rep int) map[string]map[string]map[string]int {
	out := map[string]map[string]map[string]int{}
	for _, cs := range w.Cases {
		// Counted from the packed values, which need no decoding for it.
		set := func(ex, cell string, n int) {
			if out[cs.ID] == nil {
				out[cs.ID] = map[string]map[string]int{}
			}
			if out[cs.ID][ex] == nil {
				out[cs.ID][ex] = map[string]int{}
			}
			out[cs.ID][ex][cell] = n
		}
		cs.responseCounts(set)
		if rep > 1 {
			for _, rr := range cs.PerRepeat {
				if rep <= len(rr.Values) {
					set(rr.Executor, rr.Cell, len(rr.Values[rep-1]))
				}
			}
		}
	}
	return out
}

// RepeatScriptedFile names the table of executor in repeat rep:
// ScriptedFile for repeat 1 (and for executors whose responses do not
// differ per repeat), scripted-<executor>-r02.json for repeat 2, ...
func RepeatScriptedFile(executor string, rep int) string {
	if rep <= 1 {
		return ScriptedFile(executor)
	}
	return fmt.Sprintf("scripted-%s-r%02d.json", executor, rep)
}

// RepeatFile names repeat rep's copy of a run directory file (report.json,
// budget.json): the file itself for repeat 1, <stem>-r02.json for repeat
// 2, and so on.
func RepeatFile(name string, rep int) string {
	if rep <= 1 {
		return name
	}
	stem, ext, _ := strings.Cut(name, ".")
	return fmt.Sprintf("%s-r%02d.%s", stem, rep, ext)
}

// repeatRuleKeys are the gate rules that read repeated samples.
var RepeatRuleKeys = []string{RuleMinPassRate, RuleMinPassHatK, RuleMaxFlaky}

// checkRepeatRules rejects rules that cannot be measured with w's
// repeats: flakiness needs two samples of a case, pass^k needs k.
func (w *Workload) checkRepeatRules() error {
	for _, r := range w.Gate.Rules {
		switch {
		case (r.Kind == RuleMaxFlaky || r.Kind == RuleOutcomes && r.Text == OutcomeFlaky) && w.Repeats < 2:
			return errAt(r.Pos, "gate."+r.Kind, "a case run once cannot be flaky, so this rule would always hold; set repeats: 2 or more (the workload runs %d)", w.Repeats)
		case r.Kind == RuleMinPassHatK && r.K > w.Repeats:
			return errAt(r.Pos, "gate."+r.Kind, "pass^%d needs at least %d samples of every case, but the workload runs %d repeat(s); set repeats: %d or more, or lower k", r.K, r.K, w.Repeats, r.K)
		}
	}
	return nil
}

// parseRepeatRule reads min-pass-rate {system: r}, min-pass-hat-k
// {system: {k, rate}} and max-flaky {system: n} (bench), or max-flaky n
// (foundry: the promoted candidate).
func (w *Workload) parseRepeatRule(d *decoder, key string, n *yaml.Node) error {
	at := "gate." + key
	if w.Kind == KindFoundry {
		v, err := d.integer(n, at, 0, len(w.Cases)-1)
		if err != nil {
			return err
		}
		w.Gate.Rules = append(w.Gate.Rules, Rule{Kind: key, Number: float64(v), Pos: d.pos(n)})
		return nil
	}
	sf, sorder, err := d.entries(n, at, "names no system; write {system: ...} or remove the rule")
	if err != nil {
		return err
	}
	rate := func(n *yaml.Node, at string) (float64, error) {
		v, err := d.number(n, at)
		if err != nil {
			return 0, err
		}
		if v <= 0 || v > 1 {
			return 0, d.fail(n, at, "is a rate: a number above 0 (which would always hold) and at most 1")
		}
		return v, nil
	}
	for _, sys := range sorder {
		sat := at + "." + sys
		val := sf[sys].value
		rule := Rule{Kind: key, System: sys, Pos: d.pos(sf[sys].key)}
		switch key {
		case RuleMinPassRate:
			if rule.Number, err = rate(val, sat); err != nil {
				return err
			}
		case RuleMaxFlaky:
			// n = cases would always hold: no more cases than that exist.
			v, err := d.integer(val, sat, 0, len(w.Cases)-1)
			if err != nil {
				return err
			}
			rule.Number = float64(v)
		case RuleMinPassHatK:
			f, _, err := d.mapping(val, sat, []string{"k", "rate"}, []string{"k", "rate"})
			if err != nil {
				return err
			}
			if rule.K, err = d.integer(f["k"].value, sat+".k", 1, MaxRepeats); err != nil {
				return err
			}
			if rule.Number, err = rate(f["rate"].value, sat+".rate"); err != nil {
				return err
			}
		}
		w.Gate.Rules = append(w.Gate.Rules, rule)
	}
	return nil
}

// repeatKeys lists the repeat rules a kind accepts.
func repeatKeys(k Kind) []string {
	if k == KindFoundry {
		return []string{RuleMaxFlaky}
	}
	return slices.Clone(RepeatRuleKeys)
}
