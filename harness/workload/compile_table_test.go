package workload

import (
	"bytes"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/harness/synth"
)

// oldDeclaredCalls is declaredCalls as it was, from the decoded responses.
func oldDeclaredCalls(w *Workload, rep int) map[string]map[string]map[string]int {
	out := map[string]map[string]map[string]int{}
	for _, cs := range w.Cases {
		for ex, cells := range cs.responsesAt(rep) {
			for cell, vals := range cells {
				if out[cs.ID] == nil {
					out[cs.ID] = map[string]map[string]int{}
				}
				if out[cs.ID][ex] == nil {
					out[cs.ID][ex] = map[string]int{}
				}
				out[cs.ID][ex][cell] = len(vals)
			}
		}
	}
	return out
}

// A scripted table assembled from the cases' packed values is byte for
// byte the encoding of the decoded table (or is left to that encoding),
// for every executor, repeat and part of the fixtures, of a synthetic
// workload in parts, of a repeated workload and of responses nested to the
// limit; and the declared call counts read from the packed values are the
// ones the decoded responses give.
func TestScriptedTablesAssembleAsEncoded(t *testing.T) {
	t.Parallel()
	var ws []*Workload
	for _, name := range []string{"ticket-triage.bench.yaml", "invoice-extraction.bench.yaml", "intent-select.foundry.yaml"} {
		ws = append(ws, loadWorkload(t, suitePath(name)))
	}
	p, err := synth.Write(t.TempDir(), synth.Spec{Systems: 3, Cases: 600, Triage: filepath.Join("..", "..", "fixtures", "triage")})
	if err != nil {
		t.Fatal(err)
	}
	ws = append(ws, loadWorkload(t, p), loadWorkload(t, writeFlaky(t, "")))
	// Values the walk accepts but a table must encode carefully: keys
	// ordered by UTF-16 code units, numbers as JavaScript writes them,
	// escapes, and nesting up to what the table can hold.
	deep := func(levels int, leaf any) any {
		for range levels {
			leaf = map[string]any{"k": leaf}
		}
		return leaf
	}
	edge := &Workload{Name: "edge", Kind: KindBench, positions: map[string]Pos{},
		Systems: []System{{ID: "one", Executors: []Executor{{Name: "cheap", Spec: CasesExecutor}, {Name: "x", Spec: CasesExecutor}}}},
		Usage:   map[string]any{"cheap": map[string]any{"route": map[string]any{"model": "m", "tokensIn": 3.0}}}}
	for i, resp := range []map[string]map[string][]any{
		{"cheap": {"route": {"billing", "technical"}, "é": {[]any{1.0, 2.5, 0.0, 1e21, 1e-7, "é\n\u2028"}}, "a\U0001F600": {3.0}, "\uE000": {"x"}, "10": {true}, "9": {nil}, "d61": {deep(61, 1.0)}},
			"x": {"d62": {deep(62, []any{})}}},
		{"cheap": {"route": {"other"}, "é": {map[string]any{}}}},
		nil,
	} {
		c := Case{ID: string(rune('a' + i))}
		if err := c.pack(map[string]any{}, map[string]any{}, resp); err != nil {
			t.Fatal(err)
		}
		edge.Cases = append(edge.Cases, c)
	}
	tooDeep := &Workload{Name: "deep", Kind: KindBench, positions: map[string]Pos{},
		Systems: []System{{ID: "one", Executors: []Executor{{Name: "cheap", Spec: CasesExecutor}}}}}
	c := Case{ID: "a"}
	if err := c.pack(map[string]any{}, map[string]any{}, map[string]map[string][]any{"cheap": {"d63": {deep(63, 1.0)}}}); err != nil {
		t.Fatal(err)
	}
	tooDeep.Cases = []Case{c}
	ws = append(ws, edge, tooDeep)
	assembled, declined := 0, 0
	for _, w := range ws {
		for _, v := range views(w) {
			order := caseOrder(v)
			for _, name := range slices.Sorted(maps.Keys(w.caseExecutors())) {
				for rep := 1; rep <= max(1, w.Repeats); rep++ {
					want, werr := v.encodeScriptedTable(order, name, rep)
					got, gerr := v.scriptedTableAt(order, name, rep)
					if !bytes.Equal(got, want) || (werr == nil) != (gerr == nil) {
						t.Fatalf("%s, executor %s, repeat %d: assembled %s (%v)\nencoded %s (%v)", w.Name, name, rep, got, gerr, want, werr)
					}
					if _, ok := v.assembleScriptedTable(order, name, rep); ok {
						assembled++
					} else {
						declined++
					}
				}
			}
			for rep := 1; rep <= max(1, w.Repeats); rep++ {
				if got, want := DeclaredCalls(v, rep), oldDeclaredCalls(v, rep); !reflect.DeepEqual(got, want) {
					t.Fatalf("%s, repeat %d: declared %v, want %v", w.Name, rep, got, want)
				}
			}
		}
	}
	// Repeats 2 and 3 of the flaky workload's two executors, the table
	// with a value nested past the limit and the one with a value at the
	// limit (the depth check is conservative by one level) are encoded.
	if declined != 6 || assembled < 10 {
		t.Errorf("%d tables assembled, %d encoded", assembled, declined)
	}
}

// A config assembled from the cases' packed args and expectations is byte
// for byte the encoding of the config's value, for every part of the
// fixtures and of a synthetic workload in parts, for a foundry (whose
// cases carry a split), for cases whose data was released and for args
// nested to the limit and past it.
func TestConfigsAssembleAsEncoded(t *testing.T) {
	t.Parallel()
	var ws []*Workload
	for _, name := range []string{"ticket-triage.bench.yaml", "invoice-extraction.bench.yaml", "intent-select.foundry.yaml", "code-normalizer.foundry.yaml"} {
		ws = append(ws, loadWorkload(t, suitePath(name)))
	}
	p, err := synth.Write(t.TempDir(), synth.Spec{Systems: 9, Cases: 600, Triage: filepath.Join("..", "..", "fixtures", "triage")})
	if err != nil {
		t.Fatal(err)
	}
	ws = append(ws, loadWorkload(t, p))
	released := *ws[0]
	released.Cases = nil
	for _, c := range ws[0].Cases {
		released.Cases = append(released.Cases, c.WithoutArgs())
	}
	deep := func(levels int) any {
		v := any("bottom")
		for range levels {
			v = map[string]any{"k": v}
		}
		return v
	}
	deepArgs := func(levels int) *Workload {
		w := *ws[0]
		c := Case{ID: "deep", Pos: w.Cases[0].Pos}
		if err := c.pack(map[string]any{"a": deep(levels)}, map[string]any{"queue": "billing"}, nil); err != nil {
			t.Fatal(err)
		}
		w.Cases = append(slices.Clone(w.Cases), c)
		return &w
	}
	ws = append(ws, &released, deepArgs(59), deepArgs(60), deepArgs(63))
	frames := []func(string) string{func(s string) string { return s }, func(s string) string { return rel("/elsewhere/runs", s) }}
	for _, w := range ws {
		for _, v := range views(w) {
			for _, frame := range frames {
				want, werr := canon.Encode(v.config(frame, ScriptedFile))
				got, gerr := v.configBytes(frame, ScriptedFile)
				if !bytes.Equal(got, want) || (werr == nil) != (gerr == nil) || (werr != nil && werr.Error() != gerr.Error()) {
					t.Fatalf("%s: assembled %.300s (%v)\nencoded %.300s (%v)", w.Name, got, gerr, want, werr)
				}
			}
		}
	}
}

// views are what a workload compiles tables and configs for: itself, or
// each of its parts.
func views(w *Workload) []*Workload {
	if !w.InParts() {
		return []*Workload{w}
	}
	var out []*Workload
	for _, part := range w.Parts() {
		out = append(out, w.PartView(part))
	}
	return out
}
