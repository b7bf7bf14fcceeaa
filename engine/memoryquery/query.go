// Package memoryquery is the bounded Datalog evaluator behind the
// memory.query.v1 builtin: it answers an algal.query.v1 program (positive
// rules plus one query literal) over an algal.memory.v1 snapshot of
// source-attributed facts, and returns an algal.query-result.v1 whose rows
// carry proofs (a DAG of fact and rule derivations down to the source
// digests).
//
// Evaluation is deterministic and byte-exact with the reference runtime:
// facts are ordered by their digest (the first canonical one wins a
// duplicate tuple), tuples by the canonical text of [relation, values],
// rules by id, and the naive fixpoint runs whole rounds. Every bound is
// fail-closed: running out of work, rounds, derived tuples, join bindings,
// rows or output bytes rejects the query instead of returning a partial
// answer. The result's work counter is what the run charges beyond the
// builtin's fixed cost.
package memoryquery

import (
	"fmt"
	"sort"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
)

// Wire names.
const (
	MemoryContract = "algal.memory.v1"
	QueryContract  = "algal.query.v1"
	ResultContract = "algal.query-result.v1"
	WitnessPolicy  = "first-canonical-derivation"
)

// Input bounds.
const (
	MaxSnapshotBytes = 262_144
	MaxProgramBytes  = 65_536
	MaxFacts         = 2048
	MaxRules         = 64
	MaxBody          = 8
	MaxArity         = 8
	MaxAtomBytes     = 1024
	MaxSources       = 16
)

func invalid(format string, a ...any) *fault.Error {
	return &fault.Error{Code: fault.Parse, Message: fmt.Sprintf(format, a...)}
}

func limit(msg string) *fault.Error { return &fault.Error{Code: fault.BudgetExhausted, Message: msg} }

// Limits bound one evaluation. A program may lower any of them; none may
// exceed DefaultLimits or be zero.
type Limits struct {
	MaxWork        int
	MaxRounds      int
	MaxDerived     int
	MaxBindings    int
	MaxRows        int
	MaxOutputBytes int
}

// DefaultLimits returns the limits that are both the defaults and the
// ceilings (a fresh value each call, so no caller can move them).
func DefaultLimits() Limits {
	return Limits{
		MaxWork:        250_000,
		MaxRounds:      32,
		MaxDerived:     4096,
		MaxBindings:    4096,
		MaxRows:        256,
		MaxOutputBytes: 262_144,
	}
}

// Literal is relation(terms...). A term is a JSON primitive or a variable
// {"var": name}.
type Literal struct {
	Relation string
	Terms    []any
}

// Fact is a ground tuple with the digests of the sources that attest it.
type Fact struct {
	Relation string
	Tuple    []any
	Sources  []string
}

// Rule derives Head when every Body literal matches.
type Rule struct {
	ID   string
	Head Literal
	Body []Literal
}

func (l Literal) value() map[string]any {
	return map[string]any{"relation": l.Relation, "terms": l.Terms}
}

func (r Rule) value() map[string]any {
	body := make([]any, len(r.Body))
	for i, b := range r.Body {
		body[i] = b.value()
	}
	return map[string]any{"id": r.ID, "head": r.Head.value(), "body": body}
}

func (f Fact) value() map[string]any {
	sources := make([]any, len(f.Sources))
	for i, s := range f.Sources {
		sources[i] = s
	}
	return map[string]any{"relation": f.Relation, "tuple": f.Tuple, "sources": sources}
}

type tuple struct {
	relation string
	values   []any
	proof    string
}

type binding struct {
	values   map[string]any
	premises []string
}

func (b binding) clone() binding {
	v := make(map[string]any, len(b.values)+1)
	for k, x := range b.values {
		v[k] = x
	}
	p := make([]string, len(b.premises), len(b.premises)+1)
	copy(p, b.premises)
	return binding{v, p}
}

// variable returns the name of a {"var": name} term.
func variable(term any) (string, bool) {
	m, ok := term.(map[string]any)
	if !ok {
		return "", false
	}
	name, ok := m["var"].(string)
	return name, ok
}

func encode(v any) (string, *fault.Error) {
	b, err := canon.Encode(v)
	if err != nil {
		return "", codedError(err)
	}
	return string(b), nil
}

func digest(v any) (string, *fault.Error) {
	d, err := canon.Digest(v)
	if err != nil {
		return "", codedError(err)
	}
	return d, nil
}

func codedError(err error) *fault.Error { return fault.Flat(err, fault.Parse) }

// Query evaluates program over snapshot. The result is a JSON value
// (float64 numbers) whose "work" field is the evaluation's work.
func Query(snapshot, program any) (map[string]any, error) {
	r, err := query(snapshot, program)
	if err != nil {
		return nil, err
	}
	return r, nil
}

// Work returns a result's work counter.
func Work(result map[string]any) int {
	f, _ := result["work"].(float64)
	return int(f)
}

type evaluator struct {
	limits Limits
	work   int
	tuples map[string]*tuple
	order  []string // keys of tuples, byte order
}

func (e *evaluator) charge() *fault.Error {
	e.work++
	if e.work > e.limits.MaxWork {
		return limit("Datalog work exhausted; no complete answer")
	}
	return nil
}

func query(snapshot, program any) (map[string]any, *fault.Error) {
	sn, err := encode(snapshot)
	if err != nil {
		return nil, err
	}
	pn, err := encode(program)
	if err != nil {
		return nil, err
	}
	if len(sn) > MaxSnapshotBytes || len(pn) > MaxProgramBytes {
		return nil, limit("memory/query input bytes")
	}
	if err := closedKeys(snapshot, "contract", "facts"); err != nil {
		return nil, err
	}
	if err := closedKeys(program, "contract", "rules", "query", "limits"); err != nil {
		return nil, err
	}
	snap, prog := snapshot.(map[string]any), program.(map[string]any)
	if snap["contract"] != MemoryContract || prog["contract"] != QueryContract {
		return nil, invalid("memory/query contract")
	}
	rawFacts, err := boundedList(snap["facts"], MaxFacts)
	if err != nil {
		return nil, err
	}
	facts, err := decodeEach(rawFacts, decodeFact)
	if err != nil {
		return nil, err
	}
	rawRules, err := boundedList(prog["rules"], MaxRules)
	if err != nil {
		return nil, err
	}
	rules, err := decodeEach(rawRules, decodeRule)
	if err != nil {
		return nil, err
	}
	wanted, err := decodeLiteral(prog["query"])
	if err != nil {
		return nil, err
	}
	limits := DefaultLimits()
	if raw, ok := prog["limits"]; ok {
		if limits, err = decodeLimits(raw); err != nil {
			return nil, err
		}
	}
	if err := checkLimits(limits); err != nil {
		return nil, err
	}

	sort.SliceStable(rules, func(i, j int) bool { return rules[i].ID < rules[j].ID })
	arities := map[string]int{}
	for i, rule := range rules {
		if err := checkID(rule.ID); err != nil {
			return nil, err
		}
		if (i > 0 && rules[i-1].ID == rule.ID) || len(rule.Body) == 0 || len(rule.Body) > MaxBody {
			return nil, invalid("rule id/body bound")
		}
		head, err := checkLiteral(rule.Head, arities)
		if err != nil {
			return nil, err
		}
		bound := map[string]bool{}
		for _, b := range rule.Body {
			vars, err := checkLiteral(b, arities)
			if err != nil {
				return nil, err
			}
			for v := range vars {
				bound[v] = true
			}
		}
		for v := range head {
			if !bound[v] {
				return nil, invalid("unsafe rule: every head variable must occur in the body")
			}
		}
	}
	if _, err := checkLiteral(wanted, arities); err != nil {
		return nil, err
	}

	type identified struct {
		id   string
		fact Fact
	}
	ordered := make([]identified, 0, len(facts))
	for _, f := range facts {
		if _, err := checkLiteral(Literal{Relation: f.Relation, Terms: f.Tuple}, arities); err != nil {
			return nil, err
		}
		for _, v := range f.Tuple {
			if err := checkAtom(v); err != nil {
				return nil, err
			}
		}
		if len(f.Sources) == 0 || len(f.Sources) > MaxSources {
			return nil, invalid("fact requires 1..16 source digests")
		}
		for _, s := range f.Sources {
			if !isDigest(s) {
				return nil, invalid("expected sha256:<64 lowercase hex> digest")
			}
		}
		id, err := digest(f.value())
		if err != nil {
			return nil, err
		}
		ordered = append(ordered, identified{id, f})
	}
	sort.SliceStable(ordered, func(i, j int) bool { return ordered[i].id < ordered[j].id })

	ev := &evaluator{limits: limits, tuples: map[string]*tuple{}}
	proofs := map[string]map[string]any{}
	for _, o := range ordered {
		key, err := encode([]any{o.fact.Relation, o.fact.Tuple})
		if err != nil {
			return nil, err
		}
		if _, dup := ev.tuples[key]; dup {
			continue
		}
		sources := make([]any, len(o.fact.Sources))
		for i, s := range o.fact.Sources {
			sources[i] = s
		}
		proof := map[string]any{"kind": "fact", "fact": o.id, "sources": sources}
		pid, err := digest(proof)
		if err != nil {
			return nil, err
		}
		proofs[pid] = proof
		ev.tuples[key] = &tuple{relation: o.fact.Relation, values: o.fact.Tuple, proof: pid}
	}
	ev.reorder()
	base := len(ev.tuples)

	ruleDigests := make([]string, len(rules))
	for i, rule := range rules {
		if ruleDigests[i], err = digest(rule.value()); err != nil {
			return nil, err
		}
	}
	rounds := 0
	for {
		if rounds >= limits.MaxRounds {
			return nil, limit("Datalog rounds exhausted; no complete answer")
		}
		rounds++
		additions := map[string]*tuple{}
		for i, rule := range rules {
			bindings, err := ev.join(rule.Body)
			if err != nil {
				return nil, err
			}
			for _, b := range bindings {
				if err := ev.charge(); err != nil {
					return nil, err
				}
				values := instantiate(rule.Head, b)
				key, err := encode([]any{rule.Head.Relation, values})
				if err != nil {
					return nil, err
				}
				if _, ok := ev.tuples[key]; ok {
					continue
				}
				if _, ok := additions[key]; ok {
					continue
				}
				if len(ev.tuples)-base+len(additions) >= limits.MaxDerived {
					return nil, limit("Datalog derived tuples")
				}
				premises := make([]any, len(b.premises))
				for j, p := range b.premises {
					premises[j] = p
				}
				proof := map[string]any{"kind": "rule", "rule": ruleDigests[i], "premises": premises}
				pid, err := digest(proof)
				if err != nil {
					return nil, err
				}
				proofs[pid] = proof
				additions[key] = &tuple{relation: rule.Head.Relation, values: values, proof: pid}
			}
		}
		if len(additions) == 0 {
			break
		}
		for k, t := range additions {
			ev.tuples[k] = t
		}
		ev.reorder()
	}

	bindings, err := ev.join([]Literal{wanted})
	if err != nil {
		return nil, err
	}
	type row struct {
		values []any
		proof  string
	}
	rows := map[string]row{}
	for _, b := range bindings {
		values := instantiate(wanted, b)
		key, err := encode(values)
		if err != nil {
			return nil, err
		}
		if _, ok := rows[key]; !ok {
			rows[key] = row{values, b.premises[0]}
		}
		if len(rows) > limits.MaxRows {
			return nil, limit("Datalog result rows; no truncated answer returned")
		}
	}
	rowKeys := make([]string, 0, len(rows))
	for k := range rows {
		rowKeys = append(rowKeys, k)
	}
	sort.Strings(rowKeys)

	needed := map[string]bool{}
	pending := make([]string, 0, len(rows))
	for _, k := range rowKeys {
		pending = append(pending, rows[k].proof)
	}
	for len(pending) > 0 {
		p := pending[len(pending)-1]
		pending = pending[:len(pending)-1]
		if needed[p] {
			continue
		}
		needed[p] = true
		if premises, ok := proofs[p]["premises"].([]any); ok {
			for _, q := range premises {
				pending = append(pending, q.(string))
			}
		}
	}
	outRows := make([]any, len(rowKeys))
	for i, k := range rowKeys {
		outRows[i] = map[string]any{"tuple": rows[k].values, "proof": rows[k].proof}
	}
	outProofs := map[string]any{}
	for p := range needed {
		outProofs[p] = proofs[p]
	}
	result := map[string]any{
		"contract":      ResultContract,
		"snapshot":      canon.DigestBytes([]byte(sn)), // the bytes admitted above
		"program":       canon.DigestBytes([]byte(pn)),
		"complete":      true,
		"witnessPolicy": WitnessPolicy,
		"rows":          outRows,
		"proofs":        outProofs,
		"work":          float64(ev.work),
		"rounds":        float64(rounds),
		"baseFacts":     float64(base),
		"derivedFacts":  float64(len(ev.tuples) - base),
	}
	out, err := encode(result)
	if err != nil {
		return nil, err
	}
	if len(out) > limits.MaxOutputBytes {
		return nil, limit("Datalog result bytes")
	}
	return result, nil
}

// reorder rebuilds the tuple scan order: byte order of the canonical
// [relation, values] keys.
func (e *evaluator) reorder() {
	e.order = e.order[:0]
	for k := range e.tuples {
		e.order = append(e.order, k)
	}
	sort.Strings(e.order)
}

// join matches literals left to right against the tuple set, returning
// every binding in scan order with the proofs of the tuples it used.
// Work is charged per candidate tuple examined and, when the literal
// shares variables with the bindings so far, per candidate indexed on
// those positions (a hash join: a binding only scans the bucket of tuples
// agreeing with it there).
func (e *evaluator) join(literals []Literal) ([]binding, *fault.Error) {
	byRelation := map[string][]*tuple{}
	for _, k := range e.order {
		t := e.tuples[k]
		byRelation[t.relation] = append(byRelation[t.relation], t)
	}
	bindings := []binding{{values: map[string]any{}}}
	for _, lit := range literals {
		candidates := byRelation[lit.Relation]
		// Every binding at this step came through the same literals, so
		// the first one tells which variables are bound for all.
		type probe struct {
			at   int
			name string
		}
		var probes []probe
		if len(bindings) > 0 {
			for at, term := range lit.Terms {
				if name, ok := variable(term); ok {
					if _, bound := bindings[0].values[name]; bound {
						probes = append(probes, probe{at, name})
					}
				}
			}
		}
		var index map[string][]*tuple
		if len(probes) > 0 {
			index = map[string][]*tuple{}
			for _, t := range candidates {
				if err := e.charge(); err != nil {
					return nil, err
				}
				parts := make([]any, len(probes))
				for i, p := range probes {
					if p.at < len(t.values) {
						parts[i] = t.values[p.at]
					}
				}
				key, err := encode(parts)
				if err != nil {
					return nil, err
				}
				index[key] = append(index[key], t)
			}
		}
		var next []binding
		for _, b := range bindings {
			bucket := candidates
			if len(probes) > 0 {
				parts := make([]any, len(probes))
				for i, p := range probes {
					parts[i] = b.values[p.name]
				}
				key, err := encode(parts)
				if err != nil {
					return nil, err
				}
				bucket = index[key]
			}
			for _, t := range bucket {
				if err := e.charge(); err != nil {
					return nil, err
				}
				cand, ok := match(lit, t, b)
				if !ok {
					continue
				}
				if len(next) >= e.limits.MaxBindings {
					return nil, limit("Datalog join bindings")
				}
				cand.premises = append(cand.premises, t.proof)
				next = append(next, cand)
			}
		}
		bindings = next
	}
	return bindings, nil
}

// match extends b so that lit matches t. Terms and tuple values are JSON
// primitives, so Go equality is JSON equality.
func match(lit Literal, t *tuple, b binding) (binding, bool) {
	cand := b.clone()
	for i, term := range lit.Terms {
		if i >= len(t.values) {
			break
		}
		v := t.values[i]
		if name, ok := variable(term); ok {
			if bound, ok := cand.values[name]; ok {
				if bound != v {
					return binding{}, false
				}
			} else {
				cand.values[name] = v
			}
		} else if term != v {
			return binding{}, false
		}
	}
	return cand, true
}

// instantiate grounds a literal under a binding. Rule safety and the
// query's own join guarantee every variable is bound.
func instantiate(lit Literal, b binding) []any {
	out := make([]any, len(lit.Terms))
	for i, term := range lit.Terms {
		if name, ok := variable(term); ok {
			out[i] = b.values[name]
		} else {
			out[i] = term
		}
	}
	return out
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
	n := 0
	for _, r := range s {
		n++
		if r >= 0x10000 {
			n++
		}
	}
	if n > 64 {
		return invalid("text exceeds bound")
	}
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return invalid("expected lowercase kebab-case id")
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return invalid("expected lowercase kebab-case id")
		}
	}
	return nil
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
