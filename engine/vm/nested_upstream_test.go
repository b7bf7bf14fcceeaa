package vm

import (
	"testing"

	"github.com/algal-assay/assay/engine/store"
)

// suiteExample loads the whole upstream suite into st (children resolve by
// digest) and returns example id.
func suiteExample(t *testing.T, st store.Store, id string) example {
	t.Helper()
	for _, ex := range loadSuite(t, st) {
		if ex.id == id {
			return ex
		}
	}
	t.Fatalf("no upstream example %s", id)
	return example{}
}

// runUpstream runs example id with args and responses ("" keeps the
// example's own sidecar) and requires a complete, verifying receipt.
func runUpstream(t *testing.T, st store.Store, id, args, responses string) map[string]any {
	t.Helper()
	ex := suiteExample(t, st, id)
	ex.args = obj(t, args)
	if responses != "" {
		ex.responses = obj(t, responses)
	}
	rec := runExample(t, ex, st, false)
	if rec["outcome"] != "complete" {
		t.Fatalf("%s: outcome %v, failure %s", id, rec["outcome"], enc(rec["failure"]))
	}
	rep, err := Verify(rec, ex.m, VerifyOptions{Store: st})
	if err != nil || !rep.OK {
		t.Fatalf("%s: verify %v %v", id, err, rep.Mismatches)
	}
	return rec
}

func absent(t *testing.T, rec map[string]any, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if _, ok := rec["cells"].(map[string]any)[p]; ok {
			t.Errorf("cell %s must not have run", p)
		}
	}
}

// subtreeWork checks that a nested cell's work is its activation plus every
// record under its path prefix.
func subtreeWork(t *testing.T, rec map[string]any, p string) {
	t.Helper()
	sum := 100.0
	for k, v := range rec["cells"].(map[string]any) {
		if len(k) > len(p)+1 && k[:len(p)+1] == p+"/" {
			// Count only direct inner records (deeper ones are already in
			// their enclosing nested cell's work).
			rest := k[len(p)+1:]
			depth := 0
			for i := 0; i < len(rest); i++ {
				if rest[i] == '/' {
					depth++
				}
			}
			round := len(rest) > 1 && (rest[0] == 'r' || rest[0] == 'i') && rest[1] >= '0' && rest[1] <= '9'
			if (round && depth == 1) || (!round && depth == 0) {
				sum += v.(map[string]any)["work"].(float64)
			}
		}
	}
	if got := cell(t, rec, p)["work"].(float64); got != sum {
		t.Errorf("cell %s work %v, want subtree %v", p, got, sum)
	}
}

func TestUpstreamNestedWithArgs(t *testing.T) {
	t.Parallel()
	t.Run("breed/spawn", func(t *testing.T) {
		rec := runUpstream(t, store.NewMemStore(), "breed", `{"src":{"task":"echo"}}`, "")
		run := cell(t, rec, "run")
		want(t, "spawn data", run["outputs"].(map[string]any)["data"], `{"out":"ping"}`)
		want(t, "child path", cell(t, rec, "run/echo")["outputs"], `{"value":"ping"}`)
		want(t, "show", cell(t, rec, "show")["outputs"], `{"value":"ping"}`)
		subtreeWork(t, rec, "run")
	})
	t.Run("catalog/each-spawn-slot", func(t *testing.T) {
		st := store.NewMemStore()
		rec := runUpstream(t, st, "catalog", `{"src":{"task":"breed"}}`, "")
		sw := cell(t, rec, "swarm")
		want(t, "items", sw["items"], `2`)
		want(t, "results", sw["outputs"].(map[string]any)["result"], `[{"out":"alpha"},{"out":"beta"}]`)
		if d := sw["outputs"].(map[string]any)["child"].([]any); len(d) != 2 || d[0] == d[1] {
			t.Fatalf("child digests %v", d)
		}
		want(t, "nested spawn path", cell(t, rec, "swarm/i1/run/emit")["outputs"], `{"v":"beta"}`)
		subtreeWork(t, rec, "swarm")
		subtreeWork(t, rec, "swarm/i0/run")
		v, ok, _ := st.GetSlot("bred")
		if !ok || len(v.([]any)) != 1 {
			t.Fatalf("slot bred: %v", v)
		}
	})
	t.Run("hive/each-judge", func(t *testing.T) {
		rec := runUpstream(t, store.NewMemStore(), "hive", `{"src":{"task":"breed"}}`, "")
		want(t, "items", cell(t, rec, "swarm")["items"], `2`)
		want(t, "judge", cell(t, rec, "judge")["outputs"], `{"out":"cand-b wins: beta output"}`)
	})
	t.Run("counter/slot", func(t *testing.T) {
		st := store.NewMemStore()
		runUpstream(t, st, "counter", `{}`, "")
		rec := runUpstream(t, st, "counter", `{}`, "")
		want(t, "second run sees the first", cell(t, rec, "note")["outputs"], `{"value":"SEEN: 2"}`)
	})
	t.Run("consent/spawned-gate", func(t *testing.T) {
		rec := runUpstream(t, store.NewMemStore(), "consent", `{"src":{"task":"ask"}}`, "")
		want(t, "denied", cell(t, rec, "run")["outputs"].(map[string]any)["data"], `{"verdict":"deny"}`)
		want(t, "act skipped", cell(t, rec, "run/act")["status"], `"skipped"`)
		st := store.NewMemStore()
		ex := suiteExample(t, st, "consent")
		ex.responses["gate"] = "approve"
		ex.responses["act"] = "4"
		ex.args = obj(t, `{"src":{"task":"ask"}}`)
		rec = runExample(t, ex, st, false)
		want(t, "approved", cell(t, rec, "run")["outputs"].(map[string]any)["data"], `{"answer":"4","verdict":"approve"}`)
	})
	t.Run("approve/gate", func(t *testing.T) {
		rec := runUpstream(t, store.NewMemStore(), "approve", `{"pr":{"diff":"+1 line"}}`,
			`{"review":"tiny","gate":"approve","merge":"feat: one line","hold":"no"}`)
		want(t, "merge", cell(t, rec, "merge")["outputs"], `{"out":"feat: one line"}`)
		want(t, "hold", cell(t, rec, "hold")["status"], `"skipped"`)
	})
	t.Run("evolving-generator", func(t *testing.T) {
		rec := runUpstream(t, store.NewMemStore(), "evolving-generator",
			`{"src":{"task":"answer alpha","feedback":{"generation":0}}}`, "")
		out := cell(t, rec, "writer")["outputs"].(map[string]any)["out"].(map[string]any)
		c := out["candidates"].([]any)[0].(map[string]any)
		if c["key"] != "organism:evolved-constant" {
			t.Fatalf("candidate %v", c["key"])
		}
	})
	t.Run("bench-batch-each", func(t *testing.T) {
		st := store.NewMemStore()
		rec := runUpstream(t, st, "bench-batch-each", `{"src":{"tickets":["refund me","app crashes","hello"]}}`,
			`{"route":["billing","technical","other"]}`)
		m := cell(t, rec, "map")
		want(t, "labels", m["outputs"], `{"label":["billing","technical","other"]}`)
		want(t, "items", m["items"], `3`)
		want(t, "item path", cell(t, rec, "map/i2/route")["outputs"], `{"out":"other"}`)
		subtreeWork(t, rec, "map")
		// Past maxItems (16) the each cell fails BUDGET_EXHAUSTED.
		ex := suiteExample(t, st, "bench-batch-each")
		list := make([]any, 17)
		for i := range list {
			list[i] = "t"
		}
		ex.args = map[string]any{"src": map[string]any{"tickets": list}}
		rec = runExample(t, ex, st, false)
		want(t, "maxItems", rec["failure"], `{"code":"BUDGET_EXHAUSTED","message":"each maxItems","path":"map"}`)
	})
	t.Run("refine/repeat", func(t *testing.T) {
		rec := runUpstream(t, store.NewMemStore(), "refine", `{"ticket":{"draft":"v0"}}`,
			`{"editor":["v1","v2"],"critic":["revise","ship"]}`)
		loop := cell(t, rec, "loop")
		want(t, "rounds", loop["rounds"], `2`)
		want(t, "carried", cell(t, rec, "loop/r1/in")["outputs"], `{"draft":"v1"}`)
		want(t, "ship", cell(t, rec, "ship")["outputs"], `{"value":"SHIP: v2"}`)
		want(t, "hold", cell(t, rec, "hold")["status"], `"skipped"`)
		absent(t, rec, "loop/r2/in")
		subtreeWork(t, rec, "loop")
	})
	t.Run("swarm/each", func(t *testing.T) {
		rec := runUpstream(t, store.NewMemStore(), "swarm",
			`{"batch":{"qs":["a?","b?","c?"]}}`, "")
		want(t, "items", cell(t, rec, "map")["items"], `3`)
		want(t, "i1", cell(t, rec, "map/i1/researcher")["outputs"], `{"out":"Manifests are data so they can be checked, hashed, and embedded."}`)
	})
	t.Run("lineage/repeat-spawn", func(t *testing.T) {
		rec := runUpstream(t, store.NewMemStore(), "lineage", `{"src":{"task":"evolve"}}`, "")
		gen := cell(t, rec, "gen")
		want(t, "rounds", gen["rounds"], `2`)
		want(t, "score", gen["outputs"].(map[string]any)["score"], `"good"`)
		want(t, "round 0 child", cell(t, rec, "gen/r0/run/emit")["outputs"], `{"v":"draft"}`)
		want(t, "round 1 child", cell(t, rec, "gen/r1/run/echo")["outputs"], `{"value":"ping"}`)
		want(t, "feedback carried", cell(t, rec, "gen/r1/prev")["outputs"], `{"fb":"bad"}`)
		subtreeWork(t, rec, "gen")
	})
	t.Run("inbox/organism", func(t *testing.T) {
		rec := runUpstream(t, store.NewMemStore(), "inbox", `{"ticket":{"text":"app crashes"}}`, `{"route":"bug"}`)
		want(t, "inner", cell(t, rec, "triage/route")["outputs"], `{"out":"bug"}`)
		want(t, "sink", cell(t, rec, "sink")["outputs"], `{"value":"BUG: app crashes"}`)
		subtreeWork(t, rec, "triage")
	})
}
