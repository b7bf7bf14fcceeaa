package workload

import (
	"path/filepath"
	"reflect"
	"runtime"
	"testing"

	"github.com/algal-assay/assay/engine/foundry"
	"github.com/algal-assay/assay/engine/heaptest"
	"github.com/algal-assay/assay/harness/synth"
)

// A packed case decodes to the values it was packed from, a response
// nested as deeply as any value may be included, and withoutArgs keeps
// only the responses.
func TestCasePacksLosslessly(t *testing.T) {
	t.Parallel()
	deep := any("bottom")
	for range 63 {
		deep = map[string]any{"k": deep}
	}
	args := map[string]any{"ticket": "Ticket 1", "n": 2.5, "tags": []any{"a", nil, true}}
	expect := map[string]any{"queue": "billing"}
	responses := map[string]map[string][]any{
		"cheap":    {"route": {"billing", "technical"}, "screen": {map[string]any{"tool": "lookup", "inputs": map[string]any{}}}},
		"frontier": {"deep": {deep}},
	}
	c := Case{ID: "t1", Pos: Pos{File: "cases.jsonl", Line: 3, Column: 1}}
	if err := c.pack(args, expect, responses); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c.Args(), args) || !reflect.DeepEqual(c.Expect(), expect) || !reflect.DeepEqual(c.Responses(), responses) {
		t.Fatalf("unpacked %v / %v / %v", c.Args(), c.Expect(), c.Responses())
	}
	slim := c.WithoutArgs()
	if slim.Args() != nil || slim.Expect() != nil || !reflect.DeepEqual(slim.Responses(), responses) || len(slim.data.b) >= len(c.data.b) {
		t.Fatalf("without args: %v / %v / %v (%d bytes)", slim.Args(), slim.Expect(), slim.Responses(), len(slim.data.b))
	}
	none := Case{ID: "t2"}
	if err := none.pack(args, map[string]any{}, nil); err != nil {
		t.Fatal(err)
	}
	slimNone := none.WithoutArgs()
	if none.Responses() != nil || !reflect.DeepEqual(none.Expect(), map[string]any{}) || slimNone.Args() != nil || slimNone.data.b != nil {
		t.Fatalf("a case without responses: %v / %v", none.Responses(), none.Expect())
	}
}

// A loaded and compiled workload holds its cases in a few hundred bytes
// each, not the ~2.5 KB each that decoded maps, per-case position entries
// and per-case maps of declared calls took (issue 19: peak memory flat in
// the number of cases). The live heap is measured after a collection, so
// the bound is about what stays reachable, not about timing.
func TestLoadedCasesStayCompact(t *testing.T) {
	const cases, perCase = 4000, 1024
	path, err := synth.Write(t.TempDir(), synth.Spec{Systems: 8, Cases: cases, Triage: filepath.Join("..", "..", "fixtures", "triage")})
	if err != nil {
		t.Fatal(err)
	}
	before := heaptest.Live()
	w, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Compile(w, t.TempDir(), foundry.AdmitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	after := heaptest.Live()
	runtime.KeepAlive(c)
	if len(w.Cases) != cases || len(c.Parts) != cases/PartCases+1 {
		t.Fatalf("%d cases, %d parts", len(w.Cases), len(c.Parts))
	}
	if grown := int64(after) - int64(before); grown > cases*perCase {
		t.Errorf("the loaded and compiled workload holds %d bytes live, %d per case; want at most %d per case", grown, grown/cases, perCase)
	}
}
