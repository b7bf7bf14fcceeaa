package memoryquery

import (
	"sort"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
)

// admitted is a decoded query: the canonical bytes of its two inputs, the
// facts, the rules, the query literal and the limits.
type admitted struct {
	sn, pn string
	facts  []Fact
	rules  []Rule
	wanted Literal
	limits Limits
}

// admit decodes the snapshot and the program, in the order the reference
// reports the first fault: sizes, keys, contracts, facts, rules, query,
// limits.
func admit(snapshot, program any) (*admitted, *fault.Error) {
	in := &admitted{}
	snap, prog, err := in.envelopes(snapshot, program)
	if err != nil {
		return nil, err
	}
	if in.facts, err = decodeList(snap["facts"], MaxFacts, decodeFact); err != nil {
		return nil, err
	}
	if in.rules, err = decodeList(prog["rules"], MaxRules, decodeRule); err != nil {
		return nil, err
	}
	if in.wanted, err = decodeLiteral(prog["query"]); err != nil {
		return nil, err
	}
	if in.limits, err = programLimits(prog); err != nil {
		return nil, err
	}
	return in, nil
}

// envelopes admits the two inputs' sizes, keys and contracts.
func (in *admitted) envelopes(snapshot, program any) (map[string]any, map[string]any, *fault.Error) {
	var err *fault.Error
	if in.sn, err = encode(snapshot); err != nil {
		return nil, nil, err
	}
	if in.pn, err = encode(program); err != nil {
		return nil, nil, err
	}
	if len(in.sn) > MaxSnapshotBytes || len(in.pn) > MaxProgramBytes {
		return nil, nil, limit("memory/query input bytes")
	}
	if err := closedKeys(snapshot, "contract", "facts"); err != nil {
		return nil, nil, err
	}
	if err := closedKeys(program, "contract", "rules", "query", "limits"); err != nil {
		return nil, nil, err
	}
	snap, prog := snapshot.(map[string]any), program.(map[string]any)
	if snap["contract"] != MemoryContract || prog["contract"] != QueryContract {
		return nil, nil, invalid("memory/query contract")
	}
	return snap, prog, nil
}

// decodeList decodes a bounded list entry by entry.
func decodeList[T any](v any, max int, decode func(any) (T, *fault.Error)) ([]T, *fault.Error) {
	l, err := boundedList(v, max)
	if err != nil {
		return nil, err
	}
	return decodeEach(l, decode)
}

// programLimits reads the program's limits (the defaults when absent),
// none above its default nor zero.
func programLimits(prog map[string]any) (Limits, *fault.Error) {
	limits := DefaultLimits()
	if raw, ok := prog["limits"]; ok {
		var err *fault.Error
		if limits, err = decodeLimits(raw); err != nil {
			return limits, err
		}
	}
	return limits, checkLimits(limits)
}

// identified is a fact with its digest.
type identified struct {
	id   string
	fact Fact
}

// check sorts the rules by id and checks them, the query literal and the
// facts against one arity per relation; it returns the facts in digest
// order.
func (in *admitted) check() ([]identified, *fault.Error) {
	sort.SliceStable(in.rules, func(i, j int) bool { return in.rules[i].ID < in.rules[j].ID })
	arities := map[string]int{}
	for i := range in.rules {
		if err := checkRule(in.rules, i, arities); err != nil {
			return nil, err
		}
	}
	if _, err := checkLiteral(in.wanted, arities); err != nil {
		return nil, err
	}
	ordered := make([]identified, 0, len(in.facts))
	for _, f := range in.facts {
		id, err := checkFact(f, arities)
		if err != nil {
			return nil, err
		}
		ordered = append(ordered, identified{id, f})
	}
	sort.SliceStable(ordered, func(i, j int) bool { return ordered[i].id < ordered[j].id })
	return ordered, nil
}

// checkRule checks rule i of the sorted rules: a unique id, a bounded
// body, and safety (every head variable occurs in the body).
func checkRule(rules []Rule, i int, arities map[string]int) *fault.Error {
	rule := rules[i]
	if err := checkID(rule.ID); err != nil {
		return err
	}
	if (i > 0 && rules[i-1].ID == rule.ID) || len(rule.Body) == 0 || len(rule.Body) > MaxBody {
		return invalid("rule id/body bound")
	}
	head, err := checkLiteral(rule.Head, arities)
	if err != nil {
		return err
	}
	bound, err := bodyVariables(rule.Body, arities)
	if err != nil {
		return err
	}
	for v := range head {
		if !bound[v] {
			return invalid("unsafe rule: every head variable must occur in the body")
		}
	}
	return nil
}

// bodyVariables checks a rule body's literals and returns the variables
// they bind.
func bodyVariables(body []Literal, arities map[string]int) (map[string]bool, *fault.Error) {
	bound := map[string]bool{}
	for _, b := range body {
		vars, err := checkLiteral(b, arities)
		if err != nil {
			return nil, err
		}
		for v := range vars {
			bound[v] = true
		}
	}
	return bound, nil
}

// checkFact checks a fact's tuple and sources and returns its digest.
func checkFact(f Fact, arities map[string]int) (string, *fault.Error) {
	if _, err := checkLiteral(Literal{Relation: f.Relation, Terms: f.Tuple}, arities); err != nil {
		return "", err
	}
	for _, v := range f.Tuple {
		if err := checkAtom(v); err != nil {
			return "", err
		}
	}
	if len(f.Sources) == 0 || len(f.Sources) > MaxSources {
		return "", invalid("fact requires 1..16 source digests")
	}
	for _, s := range f.Sources {
		if !isDigest(s) {
			return "", invalid("expected sha256:<64 lowercase hex> digest")
		}
	}
	return digest(f.value())
}

func checkLimits(l Limits) *fault.Error {
	// Byte order of the field names, the order the reference checks them.
	ceilings := DefaultLimits()
	for _, name := range []string{"maxBindings", "maxDerived", "maxOutputBytes", "maxRounds", "maxRows", "maxWork"} {
		n, ceiling := *l.field(name), *ceilings.field(name)
		if n == 0 || n > ceiling {
			return invalid("invalid memory limit %s", name)
		}
	}
	return nil
}

// checkLiteral validates a literal, records its relation's arity (one
// arity per relation across facts, rules and query) and returns its
// variables.
func checkLiteral(l Literal, arities map[string]int) (map[string]bool, *fault.Error) {
	if err := checkID(l.Relation); err != nil {
		return nil, err
	}
	if len(l.Terms) > MaxArity {
		return nil, limit("relation arity")
	}
	if a, ok := arities[l.Relation]; ok && a != len(l.Terms) {
		return nil, invalid("inconsistent relation arity")
	}
	arities[l.Relation] = len(l.Terms)
	vars := map[string]bool{}
	for _, term := range l.Terms {
		if name, ok := variable(term); ok {
			if err := closedKeys(term, "var"); err != nil {
				return nil, err
			}
			if err := checkID(name); err != nil {
				return nil, err
			}
			vars[name] = true
		} else if err := checkAtom(term); err != nil {
			return nil, err
		}
	}
	return vars, nil
}

func checkAtom(v any) *fault.Error {
	switch v.(type) {
	case []any, map[string]any:
		return invalid("memory atoms must be JSON primitives")
	}
	s, err := encode(v)
	if err != nil {
		return err
	}
	if len(s) > MaxAtomBytes {
		return limit("memory atom bytes")
	}
	return nil
}

// checkID admits a lowercase kebab-case id of at most 64 UTF-16 units.
func checkID(s string) *fault.Error {
	if utf16Len(s) > 64 {
		return invalid("text exceeds bound")
	}
	if s == "" || s[0] < 'a' || s[0] > 'z' || !allKebab(s) {
		return invalid("expected lowercase kebab-case id")
	}
	return nil
}

// utf16Len counts s in UTF-16 code units (an invalid byte as one).
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n++
		if r >= 0x10000 {
			n++
		}
	}
	return n
}

// allKebab reports whether every byte of s is a lowercase letter, a digit
// or a hyphen.
func allKebab(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

func isDigest(s string) bool {
	if len(s) != 71 || s[:7] != "sha256:" {
		return false
	}
	for i := 7; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// closedKeys rejects a non-object or an object key outside allowed, the
// first unknown key in byte order.
func closedKeys(v any, allowed ...string) *fault.Error {
	m, ok := v.(map[string]any)
	if !ok {
		return invalid("expected object")
	}
	if k, bad := canon.UnknownKey(m, allowed...); bad {
		return invalid("unknown key %s", k)
	}
	return nil
}

func boundedList(v any, max int) ([]any, *fault.Error) {
	l, ok := v.([]any)
	if !ok {
		return nil, invalid("expected array")
	}
	if len(l) > max {
		return nil, limit("array count")
	}
	return l, nil
}
