package vm

// Builtins inside runs: each document builtin (engine/builtins) as a fn
// cell, with its work charged and its failures recorded as the native
// runtime records them.

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/manifest"
	"github.com/algal-assay/assay/engine/store"
)

func digestOfValue(t *testing.T, v any) string {
	t.Helper()
	d, err := canon.Digest(v)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// A compiled plan runs: upstream's own check is that format.v1 with a
// bound prefix greets its input. Here the plan is compiled by a fn cell
// and the manifest spawned with the interface args {"value":"Ada"}.
func TestManifestCompileRuns(t *testing.T) {
	t.Parallel()
	plan := `["fn:format.v1;prefix=Hello, ","fn:uppercase.v1"]`
	out, _, err := builtinFns["manifest.compile.v1"](map[string]any{"plan": parseJSON(t, plan)})
	if err != nil {
		t.Fatal(err)
	}
	compiled, err := manifest.ParseValue(out["manifest"])
	if err != nil {
		t.Fatal(err)
	}
	rec := runAndVerify(t, compiled, `{"src":{"value":"Ada"}}`, &Host{Store: store.NewMemStore()})
	want(t, "direct", cell(t, rec, "s1")["outputs"], `{"value":"HELLO, ADA"}`)

	m := mustManifest(t, organism("compile-and-spawn",
		`{"id":"in","kind":"input","outputs":{"plan":"json"}},
		 {"id":"compile","kind":"fn","fn":"manifest.compile.v1"},
		 {"id":"args","kind":"const","outputs":{"v":{"type":"json","value":{"value":"Ada"}}}},
		 {"id":"run","kind":"spawn"}`,
		edge("in", "plan", "compile", "plan")+","+edge("compile", "manifest", "run", "manifest")+","+edge("args", "v", "run", "args")))
	rec = runAndVerify(t, m, `{"in":{"plan":`+plan+`}}`, &Host{Store: store.NewMemStore()})
	want(t, "spawned", cell(t, rec, "run")["outputs"], `{"data":{"out":"HELLO, ADA"},"digest":"`+compiled.Digest+`"}`)
	// Activation 100 + the fn's fixed cost 50, nothing else.
	want(t, "compile work", cell(t, rec, "compile")["work"], `150`)

	// A rejected plan fails the cell with the native code and message.
	rec = runAndVerify(t, m, `{"in":{"plan":[]}}`, &Host{Store: store.NewMemStore()})
	want(t, "failure", rec["failure"], `{"code":"PARSE_FAILED","message":"plan requires 1..4 steps","path":"compile"}`)
}

// The upstream history example through a run: an input cell feeds the
// source and a const policy (the example ships no policy; 512 bytes with
// the newest turn kept is the native unit test's policy) into the fn.
func TestContextCompactUpstreamExample(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(upstreamDir(t), "memory")
	history, err := canon.ReadFile(filepath.Join(dir, "history.context.json"), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	m := mustManifest(t, organism("compact-history",
		`{"id":"in","kind":"input","outputs":{"source":"json"}},
		 {"id":"policy","kind":"const","outputs":{"policy":{"type":"json","value":{"maxBytes":512,"keepRecent":1}}}},
		 {"id":"compact","kind":"fn","fn":"context.compact.v1"}`,
		edge("in", "source", "compact", "source")+","+edge("policy", "policy", "compact", "policy")))
	rec := runAndVerify(t, m, `{"in":{"source":`+enc(history)+`}}`, &Host{Store: store.NewMemStore()})
	if rec["outcome"] != "complete" {
		t.Fatalf("outcome %v: %s", rec["outcome"], enc(rec["failure"]))
	}
	items := history.(map[string]any)["items"].([]any)
	ref := digestOfValue(t, items[1])
	c := cell(t, rec, "compact")
	view := c["outputs"].(map[string]any)["view"].(map[string]any)
	// Only the verbose tool transcript is elided; the user goal, the
	// pinned decision and the newest turn stay verbatim.
	want(t, "view", view, `{"contract":"algal.context-view.v1","source":"`+digestOfValue(t, history)+`",
	 "policy":{"maxBytes":512,"keepRecent":1},
	 "items":[`+enc(items[0])+`,{"id":"old-test-output","role":"tool","ref":"`+ref+`"},`+enc(items[2])+`,`+enc(items[3])+`],
	 "elided":[{"id":"old-test-output","ref":"`+ref+`"}],"beforeBytes":875,"afterBytes":361,"semanticSummary":false}`)
	want(t, "archive", c["outputs"].(map[string]any)["archive"], enc(history))
	want(t, "work", c["work"], `110`)

	// A policy the protected turns cannot meet fails the cell.
	m = mustManifest(t, strings.Replace(enc(m.Value), `"maxBytes":512`, `"maxBytes":128`, 1))
	rec = runAndVerify(t, m, `{"in":{"source":`+enc(history)+`}}`, &Host{Store: store.NewMemStore()})
	want(t, "failure", rec["failure"], `{"code":"BUDGET_EXHAUSTED","message":"protected context cannot fit; request a larger budget or explicit new task boundary","path":"compact"}`)
}

// The upstream memory example: query.algal.json reads a snapshot and a
// program from its "source" input cell. The example ships no args file;
// the args below feed it the example's own snapshot
// (dependencies.memory.json, whose facts cite the digest of source.json)
// and program (impact.query.json: what does "app" affect?).
func TestMemoryQueryUpstreamExample(t *testing.T) {
	t.Parallel()
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
	sources := []any{digestOfValue(t, source)}
	if enc(facts[0].(map[string]any)["sources"]) != enc(sources) {
		t.Fatal("the example's facts must cite source.json")
	}
	fact := func(i int) (string, map[string]any) {
		p := map[string]any{"kind": "fact", "fact": digestOfValue(t, facts[i]), "sources": sources}
		return digestOfValue(t, p), p
	}
	rule := func(r int, premises ...string) (string, map[string]any) {
		ps := make([]any, len(premises))
		for i, x := range premises {
			ps[i] = x
		}
		p := map[string]any{"kind": "rule", "rule": digestOfValue(t, rules[r]), "premises": ps}
		return digestOfValue(t, p), p
	}
	appParser, pAppParser := fact(0)
	parserLexer, pParserLexer := fact(1)
	affectsParser, pAffectsParser := rule(0, appParser)                // direct(app, parser)
	affectsLexer, pAffectsLexer := rule(1, affectsParser, parserLexer) // transitive(app, lexer)
	want(t, "result", result, `{"contract":"algal.query-result.v1",
	 "snapshot":"`+digestOfValue(t, snapshot)+`","program":"`+digestOfValue(t, program)+`",
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
	t.Parallel()
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
	t.Parallel()
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
