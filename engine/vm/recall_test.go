package vm

import (
	"strings"
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

// A recall answer is refused with the first thing wrong with it, in the
// order the checks run: the answer's shape, then each hit's fields, then
// its ref.
func TestRecallAnswerMessages(t *testing.T) {
	t.Parallel()
	id := `"sha256:` + strings.Repeat("a", 64) + `"`
	hit := func(extra string) string {
		return `{"id":` + id + `,"source":"value:` + strings.Repeat("b", 64) + `","seq":0,"score":0.5,"text":"t"` + extra + `}`
	}
	for _, tc := range []struct{ answer, msg string }{
		{`[]`, "recall output must be an object"},
		{`{"hits":[],"more":1}`, `recall output has unexpected field "more"`},
		{`{"hits":{}}`, "recall output must carry a hits list"},
		{`{"hits":[` + hit("") + `,` + hit("") + `]}`, "recall returned 2 hits, over k 1"},
		{`{"hits":["h"]}`, "hit 0 must be an object"},
		{`{"hits":[` + hit(`,"rank":1`) + `]}`, `hit 0 has unexpected field "rank"`},
		{`{"hits":[{"id":"sha256:x","source":"s","seq":0,"score":0,"text":""}]}`, "hit 0: id must be a digest"},
		{`{"hits":[{"id":` + id + `,"source":"","seq":0,"score":0,"text":""}]}`, "hit 0: source must be text"},
		{`{"hits":[{"id":` + id + `,"source":"s","seq":1.5,"score":0,"text":""}]}`, "hit 0: seq must be a non-negative integer"},
		{`{"hits":[{"id":` + id + `,"source":"s","seq":1,"text":""}]}`, "hit 0: score must be finite"},
		{`{"hits":[{"id":` + id + `,"source":"s","seq":1,"score":0,"text":"` + strings.Repeat("x", MaxHitText+1) + `"}]}`, "hit 0: text must be at most 2048 bytes"},
		{`{"hits":[` + hit(`,"ref":null`) + `]}`, "hit 0: ref must be the token its value: source names"},
		{`{"hits":[` + hit(`,"ref":`+id) + `]}`, "hit 0: ref must be the token its value: source names"},
		{`{"hits":[` + hit(`,"ref":"sha256:`+strings.Repeat("b", 64)+`"`) + `]}`, ""},
		{`{"hits":[` + hit("") + `]}`, ""},
	} {
		raw, err := canon.Parse([]byte(tc.answer), 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, msg := checkHits(raw, 1); msg != tc.msg {
			t.Errorf("%.80s: got %q, want %q", tc.answer, msg, tc.msg)
		}
	}
}

// A recall cell's outputs are its hits as answered and, when the first
// hit has one, its ref.
func TestRecallOutputsCarryTheFirstHitsRef(t *testing.T) {
	t.Parallel()
	ref := "sha256:" + strings.Repeat("b", 64)
	raw, err := canon.Parse([]byte(`{"hits":[`+
		`{"id":"sha256:`+strings.Repeat("a", 64)+`","source":"value:`+strings.Repeat("b", 64)+`","seq":0,"score":1,"text":"t","ref":"`+ref+`"},`+
		`{"id":"sha256:`+strings.Repeat("c", 64)+`","source":"s","seq":1,"score":0,"text":"u"}]}`), 0)
	if err != nil {
		t.Fatal(err)
	}
	hits, msg := checkHits(raw, 2)
	if msg != "" {
		t.Fatal(msg)
	}
	out := recallOutputs(hits)
	if out["ref"] != ref || !canon.Equal(out["out"], raw) {
		t.Errorf("outputs %v", out)
	}
	if out := recallOutputs([]recallHit{hits[1], hits[0]}); out["ref"] != nil {
		t.Errorf("a first hit without a ref gave ref %v", out["ref"])
	}
	if out := recallOutputs(nil); out["ref"] != nil || !canon.Equal(out["out"], map[string]any{"hits": []any{}}) {
		t.Errorf("no hits: %v", out)
	}
}
