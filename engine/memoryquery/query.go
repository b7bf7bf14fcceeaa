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
	return map[string]any{"relation": f.Relation, "tuple": f.Tuple, "sources": anyStrings(f.Sources)}
}

// anyStrings is ss as a JSON list.
func anyStrings(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
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

// query runs the three phases apart: admit (decode and check the snapshot
// and the program), evaluate (seed the base facts, run the fixpoint, join
// the query literal), then build the result with the proofs its rows rest
// on.
func query(snapshot, program any) (map[string]any, *fault.Error) {
	in, err := admit(snapshot, program)
	if err != nil {
		return nil, err
	}
	facts, err := in.check()
	if err != nil {
		return nil, err
	}
	ev := &evaluator{limits: in.limits, tuples: map[string]*tuple{}, proofs: map[string]map[string]any{}}
	if err := ev.seed(facts); err != nil {
		return nil, err
	}
	if err := ev.fixpoint(in.rules); err != nil {
		return nil, err
	}
	rows, err := ev.answer(in.wanted)
	if err != nil {
		return nil, err
	}
	return ev.result(in, rows)
}

// result is the algal.query-result.v1 value of an evaluation, bounded by
// the output limit.
func (e *evaluator) result(in *admitted, rows []row) (map[string]any, *fault.Error) {
	outRows := make([]any, len(rows))
	for i, r := range rows {
		outRows[i] = map[string]any{"tuple": r.values, "proof": r.proof}
	}
	result := map[string]any{
		"contract":      ResultContract,
		"snapshot":      canon.DigestBytes([]byte(in.sn)), // the bytes admitted
		"program":       canon.DigestBytes([]byte(in.pn)),
		"complete":      true,
		"witnessPolicy": WitnessPolicy,
		"rows":          outRows,
		"proofs":        e.neededProofs(rows),
		"work":          float64(e.work),
		"rounds":        float64(e.rounds),
		"baseFacts":     float64(e.base),
		"derivedFacts":  float64(len(e.tuples) - e.base),
	}
	out, err := encode(result)
	if err != nil {
		return nil, err
	}
	if len(out) > e.limits.MaxOutputBytes {
		return nil, limit("Datalog result bytes")
	}
	return result, nil
}
