package vm

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/manifest"
	"github.com/algal-assay/assay/engine/store"
)

// The upstream memory example: query.algal.json reads a snapshot and a
// program from its "source" input cell. The example ships no args file;
// the args below feed it the example's own snapshot
// (dependencies.memory.json, whose facts cite the digest of source.json)
// and program (impact.query.json: what does "app" affect?).
func TestMemoryQueryUpstreamExample(t *testing.T) {
	dir := filepath.Join(upstreamDir(t), "memory")
	read := func(name string) any {
		v, err := canon.ReadFile(filepath.Join(dir, name), 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	m, err := manifest.ReadFile(filepath.Join(dir, "query.algal.json"))
	if err != nil {
		t.Fatal(err)
	}
	snapshot, program, source := read("dependencies.memory.json"), read("impact.query.json"), read("source.json")
	args := `{"source":{"snapshot":` + enc(snapshot) + `,"program":` + enc(program) + `}}`
	rec := runAndVerify(t, m, args, &Host{Store: store.NewMemStore()})
	if rec["outcome"] != "complete" {
		t.Fatalf("outcome %v: %s", rec["outcome"], enc(rec["failure"]))
	}
	q := cell(t, rec, "query")
	result := q["outputs"].(map[string]any)["result"].(map[string]any)

	// Expected proofs, built from the facts' digests: fact proofs cite the
	// source document; rule proofs cite the rule and their premises.
	facts := snapshot.(map[string]any)["facts"].([]any)
	rules := program.(map[string]any)["rules"].([]any)
	sources := []any{digestOf(t, source)}
	if enc(facts[0].(map[string]any)["sources"]) != enc(sources) {
		t.Fatal("the example's facts must cite source.json")
	}
	fact := func(i int) (string, map[string]any) {
		p := map[string]any{"kind": "fact", "fact": digestOf(t, facts[i]), "sources": sources}
		return digestOf(t, p), p
	}
	rule := func(r int, premises ...string) (string, map[string]any) {
		ps := make([]any, len(premises))
		for i, x := range premises {
			ps[i] = x
		}
		p := map[string]any{"kind": "rule", "rule": digestOf(t, rules[r]), "premises": ps}
		return digestOf(t, p), p
	}
	appParser, pAppParser := fact(0)
	parserLexer, pParserLexer := fact(1)
	affectsParser, pAffectsParser := rule(0, appParser)                // direct(app, parser)
	affectsLexer, pAffectsLexer := rule(1, affectsParser, parserLexer) // transitive(app, lexer)
	want(t, "result", result, `{"contract":"algal.query-result.v1",
	 "snapshot":"`+digestOf(t, snapshot)+`","program":"`+digestOf(t, program)+`",
	 "complete":true,"witnessPolicy":"first-canonical-derivation",
	 "rows":[{"tuple":["app","lexer"],"proof":"`+affectsLexer+`"},{"tuple":["app","parser"],"proof":"`+affectsParser+`"}],
	 "proofs":{"`+appParser+`":`+enc(pAppParser)+`,"`+parserLexer+`":`+enc(pParserLexer)+`,
	  "`+affectsParser+`":`+enc(pAffectsParser)+`,"`+affectsLexer+`":`+enc(pAffectsLexer)+`},
	 "work":28,"rounds":3,"baseFacts":2,"derivedFacts":3}`)
	// Activation 100 + fixed cost 10 + the query's own work 28.
	want(t, "cell work", q["work"], `138`)
	want(t, "run work", work(rec), `{"agentCalls":0,"steps":2,"units":238}`)
}

func memoryManifest(t *testing.T) *manifest.Manifest {
	return mustManifest(t, organism("memory-query",
		`{"id":"source","kind":"input","outputs":{"snapshot":"json","program":"json"}},
		 {"id":"query","kind":"fn","fn":"memory.query.v1"}`,
		edge("source", "snapshot", "query", "snapshot")+","+edge("source", "program", "query", "program")))
}

// A rejected query fails the cell with the evaluator's code and message
// and is charged only the activation and the fixed cost.
func TestMemoryQueryFailureInRun(t *testing.T) {
	src, _ := canon.Digest("observed")
	snapshot := `{"contract":"algal.memory.v1","facts":[{"relation":"depends","tuple":["app","parser"],"sources":["` + src + `"]},{"relation":"depends","tuple":["parser","lexer"],"sources":["` + src + `"]}]}`
	program := `{"contract":"algal.query.v1","rules":[
	 {"id":"direct","head":{"relation":"affects","terms":[{"var":"x"},{"var":"y"}]},"body":[{"relation":"depends","terms":[{"var":"x"},{"var":"y"}]}]},
	 {"id":"transitive","head":{"relation":"affects","terms":[{"var":"x"},{"var":"z"}]},"body":[{"relation":"affects","terms":[{"var":"x"},{"var":"y"}]},{"relation":"depends","terms":[{"var":"y"},{"var":"z"}]}]}],
	 "query":{"relation":"affects","terms":["app",{"var":"dependency"}]},"limits":{"maxWork":LIMIT}}`
	m := memoryManifest(t)
	cases := []struct{ limit, failure, work string }{
		{"27", `{"code":"BUDGET_EXHAUSTED","message":"Datalog work exhausted; no complete answer","path":"query"}`, `110`},
		{"0", `{"code":"PARSE_FAILED","message":"invalid memory limit maxWork","path":"query"}`, `110`},
		{"28", `null`, `138`},
	}
	for _, c := range cases {
		args := `{"source":{"snapshot":` + snapshot + `,"program":` + strings.Replace(program, "LIMIT", c.limit, 1) + `}}`
		rec := runAndVerify(t, m, args, &Host{Store: store.NewMemStore()})
		want(t, "maxWork "+c.limit+" failure", rec["failure"], c.failure)
		want(t, "maxWork "+c.limit+" work", cell(t, rec, "query")["work"], c.work)
	}
}

// An on:"fail" edge catches a rejected query like any fn failure.
func TestMemoryQueryFailEdge(t *testing.T) {
	m := mustManifest(t, organism("memory-fallback",
		`{"id":"source","kind":"input","outputs":{"snapshot":"json","program":"json"}},
		 {"id":"query","kind":"fn","fn":"memory.query.v1"},
		 {"id":"why","kind":"fn","fn":"echo.v1"}`,
		edge("source", "snapshot", "query", "snapshot")+","+edge("source", "program", "query", "program")+","+
			`{"from":{"cell":"query","port":"result"},"to":{"cell":"why","port":"value"},"on":"fail"}`))
	rec := runAndVerify(t, m, `{"source":{"snapshot":{"contract":"wrong","facts":[]},"program":{}}}`, &Host{Store: store.NewMemStore()})
	if rec["outcome"] != "complete" {
		t.Fatalf("outcome %v: %s", rec["outcome"], enc(rec["failure"]))
	}
	want(t, "caught", cell(t, rec, "why")["outputs"], `{"value":{"code":"PARSE_FAILED","message":"memory/query contract"}}`)
}
