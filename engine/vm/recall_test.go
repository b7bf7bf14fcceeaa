package vm

import (
	"testing"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/store"
)

func TestCompactionReceipt(t *testing.T) {
	t.Parallel()
	m := mustManifest(t, organism("compact",
		`{"id":"in","kind":"input","outputs":{"r":"json"}},
		 {"id":"ag","kind":"agent","prompt":"p","inputs":{"r":"json"},"output":{"kind":"text"},"tools":["pick.v1"],
		  "compact":{"maxLogBytes":60,"keepRecent":1}}`,
		edge("in", "r", "ag", "r")))
	call := func(f string) string {
		return `{"tool":"pick.v1","inputs":{"record":{"name":"wisp","kind":"sprig"},"field":"` + f + `"}}`
	}
	rec := runAndVerify(t, m, `{"in":{"r":{}}}`, scriptedHost(t, store.NewMemStore(),
		`{"ag":[`+call("name")+`,`+call("kind")+`,{"answers":{"keep_0":{"noul":0.1}}},"done"]}`))
	es := effects(rec)
	if len(es) != 4 {
		t.Fatalf("want 2 tool turns, 1 compaction, 1 final: %s", enc(es))
	}
	c := cell(t, rec, "ag")
	want(t, "out", c["outputs"], `{"out":"done"}`)
	// toolCalls is the log after triage: the dropped entry is gone.
	if tc := c["toolCalls"].([]any); len(tc) != 1 || tc[0].(map[string]any)["inputs"].(map[string]any)["field"] != "kind" {
		t.Fatalf("toolCalls after compaction: %s", enc(tc))
	}
	if work(rec)["agentCalls"] != 4.0 {
		t.Fatal("compaction counts against maxAgentCalls")
	}
}

// runtime.rs recall(): the request budget is min(cell ?? run, run), as for
// agent-family cells.
func TestRecallBudgetIsCappedByRun(t *testing.T) {
	t.Parallel()
	m := mustManifest(t, organism("recall-budget",
		`{"id":"in","kind":"input","outputs":{"q":"text"}},
		 {"id":"mem","kind":"recall","inputs":{"q":"text"},"query":{"contract":"algal.expr.v1","program":["get","q"]},
		  "budget":{"maxContextBytes":5000,"maxOutputBytes":6000}}`,
		edge("in", "q", "mem", "q"), `"budgets":{"maxContextBytes":1000,"maxOutputBytes":2000}`))
	rec := runAndVerify(t, m, `{"in":{"q":"greek"}}`, scriptedHost(t, store.NewMemStore(), `{"mem":{"hits":[]}}`))
	req := parseJSON(t, `{"contract":"algal.effect.v1","cellId":"mem","kind":"recall","prompt":"",
	  "context":{"inputs":{"q":"greek"}},
	  "output":{"kind":"json","schema":{"type":"object","required":["hits"],"properties":{"hits":{"type":"array"}}}},
	  "budget":{"maxContextBytes":1000,"maxOutputBytes":2000},
	  "recall":{"query":"greek","k":8,"embedder":"local"}}`)
	d, _ := canon.Digest(req)
	if got := effects(rec)[0].(map[string]any)["requestDigest"]; got != d {
		t.Fatalf("recall request budget is not capped by the run budgets")
	}
}
