package vm

import (
	"testing"

	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/receipt"

	"github.com/algal-assay/assay/engine/store"
)

const echoChild = `{"contract":"algal.organism.v1","key":"organism:echo-child","name":"E",
 "interface":{"inputs":{"q":{"cell":"src","port":"v"}},"outputs":{"out":{"cell":"echo","port":"value"}}},
 "cells":[{"id":"src","kind":"input","outputs":{"v":"text"}},{"id":"echo","kind":"fn","fn":"tag.v1"},
  {"id":"k","kind":"const","outputs":{"t":{"type":"text","value":"seen"}}}],
 "edges":[{"from":{"cell":"src","port":"v"},"to":{"cell":"echo","port":"value"}},
  {"from":{"cell":"k","port":"t"},"to":{"cell":"echo","port":"tag"}}]}`

func TestOrganismCell(t *testing.T) {
	t.Parallel()
	st := store.NewMemStore()
	tri := storedManifest(t, st, triageJSON)
	m := mustManifest(t, organism("inbox",
		`{"id":"in","kind":"input","outputs":{"t":"text"}},{"id":"tri","kind":"organism","manifest":"`+tri.Digest+`"}`,
		edge("in", "t", "tri", "ticket")))
	rec := runAndVerify(t, m, `{"in":{"t":"crash"}}`, scriptedHost(t, st, `{"route":"bug"}`))
	c := cell(t, rec, "tri")
	want(t, "outputs", c["outputs"], `{"summary":"BUG: crash"}`)
	want(t, "inner path", cell(t, rec, "tri/route")["outputs"], `{"out":"bug"}`)
	// The organism cell's work is its whole subtree plus its activation.
	inner := 0.0
	for _, p := range []string{"tri/ticket", "tri/route", "tri/as-bug", "tri/result"} {
		inner += cell(t, rec, p)["work"].(float64)
	}
	if c["work"] != 100+inner {
		t.Fatalf("subtree work %v, want %v", c["work"], 100+inner)
	}
	// An inner unhandled failure fails the enclosing cell and names the
	// inner path in the run failure.
	rec = runAndVerify(t, m, `{"in":{"t":"crash"}}`, &Host{Store: st})
	f := rec["failure"].(map[string]any)
	if f["path"] != "tri/route" || f["code"] != "EFFECT_UNBOUND" || cell(t, rec, "tri")["status"] != "failed" {
		t.Fatalf("inner failure: %s", enc(rec["failure"]))
	}
	// Depth is bounded by the root's maxDepth.
	shallow := mustManifest(t, organism("shallow",
		`{"id":"in","kind":"input","outputs":{"t":"text"}},{"id":"tri","kind":"organism","manifest":"`+tri.Digest+`"}`,
		edge("in", "t", "tri", "ticket"), `"budgets":{"maxDepth":0}`))
	rec = runAndVerify(t, shallow, `{"in":{"t":"crash"}}`, &Host{Store: st})
	want(t, "depth", rec["failure"], `{"code":"DEPTH_EXCEEDED","message":"depth 1 exceeds maxDepth 0","path":"tri"}`)
}

func TestRepeatCell(t *testing.T) {
	t.Parallel()
	st := store.NewMemStore()
	inner := storedManifest(t, st, roundJSON)
	m := mustManifest(t, organism("refine",
		`{"id":"in","kind":"input","outputs":{"d":"text"}},
		 {"id":"loop","kind":"repeat","manifest":"`+inner.Digest+`","maxRounds":4,"carry":{"draft":"draft"},"until":{"output":"verdict","equals":"ship"}}`,
		edge("in", "d", "loop", "draft")))
	rec := runAndVerify(t, m, `{"in":{"d":"v0"}}`, scriptedHost(t, st, `{"editor":["v1","v2","v3"],"critic":["revise","revise","ship"]}`))
	c := cell(t, rec, "loop")
	want(t, "outputs", c["outputs"], `{"draft":"v3","verdict":"ship"}`)
	want(t, "rounds", c["rounds"], `3`)
	// Carry feeds round n's draft output into round n+1.
	want(t, "round 1 input", cell(t, rec, "loop/r1/in")["outputs"], `{"draft":"v1"}`)
	if _, ok := rec["cells"].(map[string]any)["loop/r3/in"]; ok {
		t.Fatal("until must stop the loop")
	}
	// One round: no rounds field.
	rec = runAndVerify(t, m, `{"in":{"d":"v0"}}`, scriptedHost(t, st, `{"editor":"v1","critic":"ship"}`))
	if _, ok := cell(t, rec, "loop")["rounds"]; ok {
		t.Fatal("rounds is recorded only when more than one round ran")
	}
}

func TestEachCell(t *testing.T) {
	t.Parallel()
	st := store.NewMemStore()
	child := storedManifest(t, st, echoChild)
	m := mustManifest(t, organism("map",
		`{"id":"in","kind":"input","outputs":{"qs":"json"}},
		 {"id":"map","kind":"each","manifest":"`+child.Digest+`","over":"q","maxItems":3},
		 {"id":"all","kind":"fn","fn":"join.v1"}`,
		edge("in", "qs", "map", "q")+","+edge("map", "out", "all", "items")))
	rec := runAndVerify(t, m, `{"in":{"qs":["a","b"]}}`, &Host{Store: st})
	c := cell(t, rec, "map")
	want(t, "outputs", c["outputs"], `{"out":["SEEN: a","SEEN: b"]}`)
	want(t, "items", c["items"], `2`)
	want(t, "item path", cell(t, rec, "map/i1/echo")["outputs"], `{"value":"SEEN: b"}`)
	want(t, "many flattens", cell(t, rec, "all")["outputs"], `{"value":"SEEN: a\nSEEN: b"}`)
	rec = runAndVerify(t, m, `{"in":{"qs":["a","b","c","d"]}}`, &Host{Store: st})
	want(t, "maxItems", rec["failure"], `{"code":"BUDGET_EXHAUSTED","message":"each maxItems","path":"map"}`)
	rec = runAndVerify(t, m, `{"in":{"qs":[]}}`, &Host{Store: st})
	if _, ok := cell(t, rec, "map")["items"]; ok {
		t.Fatal("items is recorded only for a non-empty list")
	}
}

func TestSpawnCell(t *testing.T) {
	t.Parallel()
	st := store.NewMemStore()
	child := mustManifest(t, echoChild)
	m := mustManifest(t, organism("breed",
		`{"id":"in","kind":"input","outputs":{"q":"text"}},
		 {"id":"writer","kind":"agent","prompt":"p","inputs":{"q":"text"},"output":{"kind":"json","schema":{"type":"object"}}},
		 {"id":"args","kind":"const","outputs":{"v":{"type":"json","value":{"q":"hello"}}}},
		 {"id":"run","kind":"spawn"}`,
		edge("in", "q", "writer", "q")+","+edge("writer", "out", "run", "manifest")+","+edge("args", "v", "run", "args")))
	rec := runAndVerify(t, m, `{"in":{"q":"x"}}`, scriptedHost(t, st, `{"writer":`+echoChild+`}`))
	want(t, "spawn", cell(t, rec, "run")["outputs"], `{"data":{"out":"SEEN: hello"},"digest":"`+child.Digest+`"}`)
	want(t, "child path", cell(t, rec, "run/echo")["status"], `"committed"`)
	if ok, _ := st.Has(store.Manifests, child.Digest); !ok {
		t.Fatal("spawn must admit the manifest to the store")
	}
	rec = runAndVerify(t, m, `{"in":{"q":"x"}}`, scriptedHost(t, st, `{"writer":{"contract":"nope"}}`))
	if f := rec["failure"].(map[string]any); f["code"] != "PARSE_FAILED" || f["path"] != "run" {
		t.Fatalf("bad spawned manifest: %s", enc(f))
	}
}

// runtime.rs each: an item is checked by the child's input cell, so a
// mistyped item leaves the inner failed record and the run failure names
// the inner path.
func TestEachItemCheckedByChild(t *testing.T) {
	t.Parallel()
	st := store.NewMemStore()
	child := storedManifest(t, st, echoChild)
	m := mustManifest(t, organism("each-typed",
		`{"id":"in","kind":"input","outputs":{"qs":"json"}},
		 {"id":"map","kind":"each","manifest":"`+child.Digest+`","over":"q","maxItems":4}`,
		edge("in", "qs", "map", "q")))
	rec := runAndVerify(t, m, `{"in":{"qs":[1]}}`, &Host{Store: st})
	if cell(t, rec, "map/i0/src")["status"] != receipt.StatusFailed {
		t.Fatalf("inner input cell must record the failure: %s", enc(rec["cells"]))
	}
	f := rec["failure"].(map[string]any)
	if f["path"] != "map/i0/src" || f["code"] != fault.TypeMismatch {
		t.Fatalf("run failure: %s", enc(f))
	}
}

// runtime.rs run_into: a nested run beyond maxDepth fails with the nested
// prefix as the run failure path (loop/r0 for a repeat round).
func TestDepthFailurePathIsNestedPrefix(t *testing.T) {
	t.Parallel()
	st := store.NewMemStore()
	child := storedManifest(t, st, echoChild)
	m := mustManifest(t, organism("deep",
		`{"id":"in","kind":"input","outputs":{"q":"text"}},
		 {"id":"loop","kind":"repeat","manifest":"`+child.Digest+`","maxRounds":2}`,
		edge("in", "q", "loop", "q"), `"budgets":{"maxDepth":0}`))
	rec := runAndVerify(t, m, `{"in":{"q":"x"}}`, &Host{Store: st})
	want(t, "failure", rec["failure"], `{"code":"DEPTH_EXCEEDED","message":"depth 1 exceeds maxDepth 0","path":"loop/r0"}`)
	if cell(t, rec, "loop")["status"] != receipt.StatusFailed {
		t.Fatal("the repeat cell fails")
	}
}
