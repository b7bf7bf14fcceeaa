package evidence

import (
	"errors"
	"testing"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/manifest"
)

const twoPorts = `{"contract":"algal.organism.v1","key":"organism:pair","name":"pair",
 "interface":{"inputs":{"a":{"cell":"in","port":"x"},"b":{"cell":"in","port":"y"}},
  "outputs":{"sum":{"cell":"add","port":"out"},"note":{"cell":"tag","port":"out"}}},
 "cells":[{"id":"in","kind":"input","outputs":{"x":"json","y":"json"}},
  {"id":"add","kind":"expr","inputs":{"x":"json","y":"json"},"expr":{"contract":"algal.expr.v1","program":["add",["get","x"],["get","y"]]},"output":{"kind":"json","schema":{"type":"number"}}},
  {"id":"tag","kind":"expr","inputs":{"x":"json"},"expr":{"contract":"algal.expr.v1","program":"n"},"output":{"kind":"text"}}],
 "edges":[{"from":{"cell":"in","port":"x"},"to":{"cell":"add","port":"x"}},
  {"from":{"cell":"in","port":"y"},"to":{"cell":"add","port":"y"}},
  {"from":{"cell":"in","port":"x"},"to":{"cell":"tag","port":"x"}}]}`

func TestCellArgsAndOutputs(t *testing.T) {
	t.Parallel()
	m, err := manifest.Parse([]byte(twoPorts))
	if err != nil {
		t.Fatal(err)
	}
	args := CellArgs(m, map[string]any{"a": 1.0, "b": 2.0})
	if !canon.Equal(args, map[string]any{"in": map[string]any{"x": 1.0, "y": 2.0}}) {
		t.Errorf("cell args %v", args)
	}
	receipt := map[string]any{"cells": map[string]any{
		"add": map[string]any{"status": "committed", "outputs": map[string]any{"out": 3.0}},
		"tag": map[string]any{"status": "failed", "failure": map[string]any{"code": "X", "message": "y"}},
	}}
	if out := InterfaceOutputs(m, receipt); !canon.Equal(out, map[string]any{"sum": 3.0}) {
		t.Errorf("outputs %v: a failed cell's output must be absent", out)
	}
}

func TestJudge(t *testing.T) {
	t.Parallel()
	expect := map[string]any{"out": "bug"}
	var exact *Scorer
	if ok, _ := exact.Judge("c", nil, expect, "complete", map[string]any{"out": "bug"}); !ok {
		t.Error("exact match failed")
	}
	if ok, _ := exact.Judge("c", nil, expect, "failed", map[string]any{"out": "bug"}); ok {
		t.Error("a failed run passed")
	}
	anyOf, err := CompileScorer(map[string]any{"contract": "algal.expr.v1", "program": []any{"contains", []any{"quote", []any{"bug", "defect"}}, []any{"get", "outputs", "out"}}}, "scorer")
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := anyOf.Judge("c", nil, expect, "complete", map[string]any{"out": "defect"}); err != nil || !ok {
		t.Errorf("scorer: %v %v", ok, err)
	}
	num, _ := CompileScorer(map[string]any{"contract": "algal.expr.v1", "program": 1.0}, "scorer")
	_, err = num.Judge("c7", nil, expect, "complete", nil)
	var e *fault.Error
	if !errors.As(err, &e) || e.Code != fault.ScorerInvalid {
		t.Fatalf("non-boolean scorer: %v", err)
	}
	if _, err := CompileScorer(map[string]any{"contract": "algal.expr.v1", "program": []any{"get", "receipt"}}, "scorer"); err == nil {
		t.Error("a scorer reading an undeclared name was admitted")
	}
}

// Scorer errors reach the person who wrote the workload: they read as a
// sentence with a suggestion, keeping SCORER_INVALID and the field path.
func TestScorerErrorsReadAsSentences(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		program any
		want    string
	}{
		{[]any{"eqq", []any{"get", "outputs"}, []any{"get", "expect"}}, `scorer.program: unknown op "eqq" (did you mean "eq"?)`},
		{[]any{"eq", []any{"get", "output"}, []any{"get", "expect"}}, `scorer.program: unbound name "output" (did you mean "outputs"?)`},
	} {
		_, err := CompileScorer(map[string]any{"contract": "algal.expr.v1", "program": c.program}, "scorer")
		if fault.CodeOf(err) != fault.ScorerInvalid || err.Error() != c.want {
			t.Errorf("CompileScorer(%v) = %v (%s), want %s", c.program, err, fault.CodeOf(err), c.want)
		}
	}
	add, err := CompileScorer(map[string]any{"contract": "algal.expr.v1", "program": []any{"add", []any{"get", "outputs", "n"}, 1.0}}, "scorer")
	if err != nil {
		t.Fatal(err)
	}
	_, err = add.Judge("c1", nil, nil, "complete", map[string]any{"n": "7"})
	if want := `scorer: case "c1": op "add" argument 0 must be a number, got text`; fault.CodeOf(err) != fault.ScorerInvalid || err.Error() != want {
		t.Errorf("Judge = %v, want %s", err, want)
	}
}
