package memoryquery

import (
	"maps"
	"slices"
	"sort"

	"github.com/algal-assay/assay/engine/fault"
)

// evaluator holds one evaluation: the tuple set and its scan order, the
// proofs by digest, and the counters the result reports.
type evaluator struct {
	limits Limits
	work   int
	tuples map[string]*tuple
	order  []string // keys of tuples, byte order
	proofs map[string]map[string]any
	base   int // tuples from facts
	rounds int
}

func (e *evaluator) charge() *fault.Error {
	e.work++
	if e.work > e.limits.MaxWork {
		return limit("Datalog work exhausted; no complete answer")
	}
	return nil
}

// prove files a proof under its digest.
func (e *evaluator) prove(proof map[string]any) (string, *fault.Error) {
	pid, err := digest(proof)
	if err != nil {
		return "", err
	}
	e.proofs[pid] = proof
	return pid, nil
}

// seed adds the facts, in digest order, as the base tuples: the first
// fact of a tuple wins.
func (e *evaluator) seed(facts []identified) *fault.Error {
	for _, o := range facts {
		if err := e.addFact(o); err != nil {
			return err
		}
	}
	e.reorder()
	e.base = len(e.tuples)
	return nil
}

func (e *evaluator) addFact(o identified) *fault.Error {
	key, err := encode([]any{o.fact.Relation, o.fact.Tuple})
	if err != nil {
		return err
	}
	if _, dup := e.tuples[key]; dup {
		return nil
	}
	pid, err := e.prove(map[string]any{"kind": "fact", "fact": o.id, "sources": anyStrings(o.fact.Sources)})
	if err != nil {
		return err
	}
	e.tuples[key] = &tuple{relation: o.fact.Relation, values: o.fact.Tuple, proof: pid}
	return nil
}

// fixpoint runs whole rounds of every rule until a round derives nothing.
func (e *evaluator) fixpoint(rules []Rule) *fault.Error {
	ruleDigests := make([]string, len(rules))
	for i, rule := range rules {
		var err *fault.Error
		if ruleDigests[i], err = digest(rule.value()); err != nil {
			return err
		}
	}
	for {
		if e.rounds >= e.limits.MaxRounds {
			return limit("Datalog rounds exhausted; no complete answer")
		}
		e.rounds++
		additions, err := e.round(rules, ruleDigests)
		if err != nil {
			return err
		}
		if len(additions) == 0 {
			return nil
		}
		maps.Copy(e.tuples, additions)
		e.reorder()
	}
}

// round derives what every rule derives from the tuples of the rounds
// before; the additions join the tuple set together afterwards.
func (e *evaluator) round(rules []Rule, ruleDigests []string) (map[string]*tuple, *fault.Error) {
	additions := map[string]*tuple{}
	for i, rule := range rules {
		bindings, err := e.join(rule.Body)
		if err != nil {
			return nil, err
		}
		for _, b := range bindings {
			if err := e.derive(rule, ruleDigests[i], b, additions); err != nil {
				return nil, err
			}
		}
	}
	return additions, nil
}

// derive adds the head of rule under binding b to additions unless the
// tuple is known, with a rule proof over the premises b used.
func (e *evaluator) derive(rule Rule, ruleDigest string, b binding, additions map[string]*tuple) *fault.Error {
	if err := e.charge(); err != nil {
		return err
	}
	values := instantiate(rule.Head, b)
	key, err := encode([]any{rule.Head.Relation, values})
	if err != nil {
		return err
	}
	if _, ok := e.tuples[key]; ok {
		return nil
	}
	if _, ok := additions[key]; ok {
		return nil
	}
	if len(e.tuples)-e.base+len(additions) >= e.limits.MaxDerived {
		return limit("Datalog derived tuples")
	}
	pid, err := e.prove(map[string]any{"kind": "rule", "rule": ruleDigest, "premises": anyStrings(b.premises)})
	if err != nil {
		return err
	}
	additions[key] = &tuple{relation: rule.Head.Relation, values: values, proof: pid}
	return nil
}

// row is one answer: the query literal's values and the proof of the
// first binding that gave them.
type row struct {
	values []any
	proof  string
}

// answer joins the query literal and returns its distinct rows in byte
// order of their canonical values.
func (e *evaluator) answer(wanted Literal) ([]row, *fault.Error) {
	bindings, err := e.join([]Literal{wanted})
	if err != nil {
		return nil, err
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
		if len(rows) > e.limits.MaxRows {
			return nil, limit("Datalog result rows; no truncated answer returned")
		}
	}
	keys := slices.Sorted(maps.Keys(rows))
	out := make([]row, len(keys))
	for i, k := range keys {
		out[i] = rows[k]
	}
	return out, nil
}

// neededProofs returns the proofs the rows rest on: each row's own and,
// down the rule premises, every proof below them.
func (e *evaluator) neededProofs(rows []row) map[string]any {
	needed := map[string]any{}
	pending := make([]string, 0, len(rows))
	for _, r := range rows {
		pending = append(pending, r.proof)
	}
	for len(pending) > 0 {
		p := pending[len(pending)-1]
		pending = pending[:len(pending)-1]
		if _, done := needed[p]; done {
			continue
		}
		needed[p] = e.proofs[p]
		if premises, ok := e.proofs[p]["premises"].([]any); ok {
			for _, q := range premises {
				pending = append(pending, q.(string))
			}
		}
	}
	return needed
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
		var err *fault.Error
		if bindings, err = e.joinLiteral(lit, byRelation[lit.Relation], bindings); err != nil {
			return nil, err
		}
	}
	return bindings, nil
}

// joinLiteral extends every binding by each candidate tuple lit matches,
// through the index on the bound positions when there are any.
func (e *evaluator) joinLiteral(lit Literal, candidates []*tuple, bindings []binding) ([]binding, *fault.Error) {
	probes := probesOf(lit, bindings)
	index, err := e.index(candidates, probes)
	if err != nil {
		return nil, err
	}
	var next []binding
	for _, b := range bindings {
		bucket := candidates
		if len(probes) > 0 {
			key, err := encode(probes.ofBinding(b))
			if err != nil {
				return nil, err
			}
			bucket = index[key]
		}
		if next, err = e.extend(lit, bucket, b, next); err != nil {
			return nil, err
		}
	}
	return next, nil
}

// probe is a position of a literal holding a variable already bound.
type probe struct {
	at   int
	name string
}

type probes []probe

// probesOf lists lit's bound positions. Every binding at a join step came
// through the same literals, so the first one tells which variables are
// bound for all.
func probesOf(lit Literal, bindings []binding) probes {
	if len(bindings) == 0 {
		return nil
	}
	var ps probes
	for at, term := range lit.Terms {
		if name, ok := variable(term); ok {
			if _, bound := bindings[0].values[name]; bound {
				ps = append(ps, probe{at, name})
			}
		}
	}
	return ps
}

// ofTuple is a tuple's index key parts: its values at the probes.
func (ps probes) ofTuple(t *tuple) []any {
	parts := make([]any, len(ps))
	for i, p := range ps {
		if p.at < len(t.values) {
			parts[i] = t.values[p.at]
		}
	}
	return parts
}

// ofBinding is a binding's index key parts: the probed variables' values.
func (ps probes) ofBinding(b binding) []any {
	parts := make([]any, len(ps))
	for i, p := range ps {
		parts[i] = b.values[p.name]
	}
	return parts
}

// index buckets the candidates by their values at the probes (nil when
// there are none), charging one work unit per candidate.
func (e *evaluator) index(candidates []*tuple, ps probes) (map[string][]*tuple, *fault.Error) {
	if len(ps) == 0 {
		return nil, nil
	}
	index := map[string][]*tuple{}
	for _, t := range candidates {
		if err := e.charge(); err != nil {
			return nil, err
		}
		key, err := encode(ps.ofTuple(t))
		if err != nil {
			return nil, err
		}
		index[key] = append(index[key], t)
	}
	return index, nil
}

// extend appends to next every extension of b by a tuple of bucket that
// lit matches, charging one work unit per tuple examined.
func (e *evaluator) extend(lit Literal, bucket []*tuple, b binding, next []binding) ([]binding, *fault.Error) {
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
	return next, nil
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
