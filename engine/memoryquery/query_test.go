package memoryquery

import (
	"fmt"
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/internal/jsontest"
)

// fixture is the native unit tests' dependency graph: app -> parser ->
// lexer, with "affects" as its transitive closure.
func fixture(t testing.TB) (snapshot, program string) {
	src := jsontest.Digest(t, "observed dependencies")
	snapshot = `{"contract":"algal.memory.v1","facts":[
	 {"relation":"depends","tuple":["app","parser"],"sources":["` + src + `"]},
	 {"relation":"depends","tuple":["parser","lexer"],"sources":["` + src + `"]}]}`
	program = `{"contract":"algal.query.v1","rules":[
	 {"id":"direct","head":{"relation":"affects","terms":[{"var":"x"},{"var":"y"}]},"body":[{"relation":"depends","terms":[{"var":"x"},{"var":"y"}]}]},
	 {"id":"transitive","head":{"relation":"affects","terms":[{"var":"x"},{"var":"z"}]},"body":[{"relation":"affects","terms":[{"var":"x"},{"var":"y"}]},{"relation":"depends","terms":[{"var":"y"},{"var":"z"}]}]}
	],"query":{"relation":"affects","terms":["app",{"var":"target"}]}`
	return snapshot, program + `}`
}

func withLimits(program, limits string) string {
	return strings.TrimSuffix(program, "}") + `,"limits":` + limits + `}`
}

func run(t testing.TB, snapshot, program string) (map[string]any, error) {
	t.Helper()
	return Query(jsontest.Parse(t, snapshot), jsontest.Parse(t, program))
}

func mustRun(t testing.TB, snapshot, program string) map[string]any {
	t.Helper()
	r, err := run(t, snapshot, program)
	if err != nil {
		t.Fatalf("query: %v", err)
	}
	return r
}

func TestFixtureResult(t *testing.T) {
	t.Parallel()
	snapshot, program := fixture(t)
	r := mustRun(t, snapshot, program)
	rows := r["rows"].([]any)
	if len(rows) != 2 {
		t.Fatalf("rows: %s", jsontest.Canonical(t, rows))
	}
	// Rows in byte order of their canonical tuples.
	if jsontest.Canonical(t, rows[0].(map[string]any)["tuple"]) != `["app","lexer"]` || jsontest.Canonical(t, rows[1].(map[string]any)["tuple"]) != `["app","parser"]` {
		t.Fatalf("row order: %s", jsontest.Canonical(t, rows))
	}
	// Hand count (hash join): round 1 direct 2 scans + 2 heads, round 2
	// direct 4, transitive 2 + 2 indexed + 1 probed + 1 head, round 3
	// direct 4, transitive 3 + 2 + 1 + 1, query scan 3.
	got := fmt.Sprintf("work=%v rounds=%v base=%v derived=%v proofs=%d", r["work"], r["rounds"], r["baseFacts"], r["derivedFacts"], len(r["proofs"].(map[string]any)))
	if got != "work=28 rounds=3 base=2 derived=3 proofs=4" {
		t.Fatalf("counters: %s", got)
	}
	if Work(r) != 28 {
		t.Fatalf("Work = %d", Work(r))
	}
	for _, k := range []string{"contract", "complete", "witnessPolicy", "snapshot", "program"} {
		want := map[string]string{"contract": `"algal.query-result.v1"`, "complete": `true`, "witnessPolicy": `"first-canonical-derivation"`,
			"snapshot": `"` + jsontest.Digest(t, jsontest.Parse(t, snapshot)) + `"`, "program": `"` + jsontest.Digest(t, jsontest.Parse(t, program)) + `"`}[k]
		if g := jsontest.Canonical(t, r[k]); g != want {
			t.Errorf("%s: %s, want %s", k, g, want)
		}
	}
	// The proof DAG: every row's proof and every premise is present, and
	// fact proofs name the fact digest and its sources.
	proofs := r["proofs"].(map[string]any)
	for _, row := range rows {
		p := row.(map[string]any)["proof"].(string)
		if proofs[p] == nil {
			t.Fatalf("row proof %s missing", p)
		}
	}
	facts := jsontest.Parse(t, snapshot).(map[string]any)["facts"].([]any)
	for id, p := range proofs {
		if jsontest.Digest(t, p) != id {
			t.Fatalf("proof %s is not keyed by its digest", id)
		}
		pm := p.(map[string]any)
		switch pm["kind"] {
		case "fact":
			found := false
			for _, f := range facts {
				if jsontest.Digest(t, f) == pm["fact"] {
					found = true
				}
			}
			if !found {
				t.Fatalf("fact proof names no fact: %s", jsontest.Canonical(t, pm))
			}
		case "rule":
			for _, q := range pm["premises"].([]any) {
				if proofs[q.(string)] == nil {
					t.Fatalf("premise %s missing", q)
				}
			}
		}
	}
	// Deterministic: same bytes again; object key order is irrelevant.
	again := mustRun(t, `{"facts":`+jsontest.Canonical(t, facts)+`,"contract":"algal.memory.v1"}`, program)
	if jsontest.Canonical(t, again) != jsontest.Canonical(t, r) {
		t.Fatal("result depends on key order")
	}
	// Fact order changes only the snapshot digest.
	swapped := `{"contract":"algal.memory.v1","facts":[` + jsontest.Canonical(t, facts[1]) + `,` + jsontest.Canonical(t, facts[0]) + `]}`
	third := mustRun(t, swapped, program)
	if jsontest.Canonical(t, third["rows"]) != jsontest.Canonical(t, r["rows"]) || jsontest.Canonical(t, third["proofs"]) != jsontest.Canonical(t, r["proofs"]) || third["work"] != r["work"] || third["snapshot"] == r["snapshot"] {
		t.Fatal("fact order must not change derivations")
	}
}

// Facts and literals decode positionally too (the reference decoder
// accepts a record as an array); the fact digest is of the object form.
func TestPositionalRecords(t *testing.T) {
	t.Parallel()
	snapshot, program := fixture(t)
	src := jsontest.Digest(t, "observed dependencies")
	positional := `{"contract":"algal.memory.v1","facts":[["depends",["app","parser"],["` + src + `"]],["depends",["parser","lexer"],["` + src + `"]]]}`
	a, b := mustRun(t, snapshot, program), mustRun(t, positional, program)
	if jsontest.Canonical(t, a["proofs"]) != jsontest.Canonical(t, b["proofs"]) || jsontest.Canonical(t, a["rows"]) != jsontest.Canonical(t, b["rows"]) {
		t.Fatal("positional facts must derive the same proofs")
	}
}

func TestMultiHopProofDAG(t *testing.T) {
	t.Parallel()
	src := jsontest.Digest(t, "edges")
	edge := func(a, b string) string {
		return `{"relation":"edge","tuple":["` + a + `","` + b + `"],"sources":["` + src + `"]}`
	}
	snapshot := `{"contract":"algal.memory.v1","facts":[` + edge("a", "b") + `,` + edge("b", "c") + `,` + edge("c", "d") + `,` + edge("x", "y") + `]}`
	program := `{"contract":"algal.query.v1","rules":[
	 {"id":"hop","head":{"relation":"reach","terms":[{"var":"x"},{"var":"y"}]},"body":[{"relation":"edge","terms":[{"var":"x"},{"var":"y"}]}]},
	 {"id":"chain","head":{"relation":"reach","terms":[{"var":"x"},{"var":"z"}]},"body":[{"relation":"reach","terms":[{"var":"x"},{"var":"y"}]},{"relation":"edge","terms":[{"var":"y"},{"var":"z"}]}]}],
	 "query":{"relation":"reach","terms":["a",{"var":"to"}]}}`
	r := mustRun(t, snapshot, program)
	var tuples []string
	for _, row := range r["rows"].([]any) {
		tuples = append(tuples, jsontest.Canonical(t, row.(map[string]any)["tuple"]))
	}
	if strings.Join(tuples, " ") != `["a","b"] ["a","c"] ["a","d"]` {
		t.Fatalf("rows %v", tuples)
	}
	// Three fact proofs and three rule proofs: the decoy edge and what
	// it derives are pruned.
	kinds := map[any]int{}
	nested := false
	proofs := r["proofs"].(map[string]any)
	for _, p := range proofs {
		pm := p.(map[string]any)
		kinds[pm["kind"]]++
		premises, _ := pm["premises"].([]any)
		for _, q := range premises {
			if proofs[q.(string)].(map[string]any)["kind"] == "rule" {
				nested = true
			}
		}
	}
	if kinds["fact"] != 3 || kinds["rule"] != 3 || !nested {
		t.Fatalf("proof DAG %v nested=%v", kinds, nested)
	}
	if r["derivedFacts"] != 7.0 {
		t.Fatalf("derived %v", r["derivedFacts"])
	}
}

func TestDuplicateFactsKeepFirstCanonical(t *testing.T) {
	t.Parallel()
	one := `{"relation":"f","tuple":["x"],"sources":["` + jsontest.Digest(t, "one") + `"]}`
	two := `{"relation":"f","tuple":["x"],"sources":["` + jsontest.Digest(t, "two") + `"]}`
	r := mustRun(t, `{"contract":"algal.memory.v1","facts":[`+two+`,`+one+`]}`,
		`{"contract":"algal.query.v1","rules":[],"query":{"relation":"f","terms":[{"var":"v"}]}}`)
	winner := one
	if jsontest.Digest(t, jsontest.Parse(t, two)) < jsontest.Digest(t, jsontest.Parse(t, one)) {
		winner = two
	}
	if r["baseFacts"] != 1.0 {
		t.Fatalf("base %v", r["baseFacts"])
	}
	for _, p := range r["proofs"].(map[string]any) {
		w := jsontest.Parse(t, winner).(map[string]any)
		if jsontest.Canonical(t, p) != jsontest.Canonical(t, map[string]any{"kind": "fact", "fact": jsontest.Digest(t, w), "sources": w["sources"]}) {
			t.Fatalf("proof %s, winner %s", jsontest.Canonical(t, p), winner)
		}
	}
}

func TestEmptyAnswerIsComplete(t *testing.T) {
	t.Parallel()
	r := mustRun(t, `{"contract":"algal.memory.v1","facts":[]}`, `{"contract":"algal.query.v1","rules":[],"query":{"relation":"f","terms":[{"var":"v"}]}}`)
	if jsontest.Canonical(t, r["rows"]) != `[]` || jsontest.Canonical(t, r["proofs"]) != `{}` || r["complete"] != true || r["work"] != 0.0 || r["rounds"] != 1.0 {
		t.Fatalf("empty: %s", jsontest.Canonical(t, r))
	}
}

// Every limit just at the fixture's need passes and one below fails.
func TestLimitBounds(t *testing.T) {
	t.Parallel()
	snapshot, program := fixture(t)
	full := mustRun(t, snapshot, program)
	size := len(jsontest.Canonical(t, full))
	// maxBindings: the largest join yields 3 bindings (round-3 affects scan, the query).
	cases := []struct {
		name string
		need int
		msg  string
	}{
		{"maxWork", 28, "Datalog work exhausted; no complete answer"},
		{"maxRounds", 3, "Datalog rounds exhausted; no complete answer"},
		{"maxDerived", 3, "Datalog derived tuples"},
		{"maxBindings", 3, "Datalog join bindings"},
		{"maxRows", 2, "Datalog result rows; no truncated answer returned"},
		// The limits change the program digest but not its length.
		{"maxOutputBytes", size, "Datalog result bytes"},
	}
	for _, c := range cases {
		need := c.need
		if _, err := run(t, snapshot, withLimits(program, fmt.Sprintf(`{"%s":%d}`, c.name, need))); err != nil {
			t.Errorf("%s=%d: %v", c.name, need, err)
		}
		_, err := run(t, snapshot, withLimits(program, fmt.Sprintf(`{"%s":%d}`, c.name, need-1)))
		e, ok := err.(*fault.Error)
		if !ok || e.Code != fault.BudgetExhausted || e.Message != c.msg {
			t.Errorf("%s=%d: got %v, want BUDGET_EXHAUSTED %q", c.name, need-1, err, c.msg)
		}
	}
	// The ceilings themselves are admitted.
	if _, err := run(t, snapshot, withLimits(program, `{"maxWork":250000,"maxRounds":32,"maxDerived":4096,"maxBindings":4096,"maxRows":256,"maxOutputBytes":262144}`)); err != nil {
		t.Fatalf("ceilings: %v", err)
	}
}

func TestRejections(t *testing.T) {
	t.Parallel()
	snapshot, program := fixture(t)
	src := jsontest.Digest(t, "s")
	facts := func(fs ...string) string {
		return `{"contract":"algal.memory.v1","facts":[` + strings.Join(fs, ",") + `]}`
	}
	listQuery := `{"contract":"algal.query.v1","rules":[],"query":{"relation":"f","terms":[{"var":"v"}]}}`
	rules := func(rs ...string) string {
		return `{"contract":"algal.query.v1","rules":[` + strings.Join(rs, ",") + `],"query":{"relation":"h","terms":[{"var":"x"}]}}`
	}
	dep := `{"relation":"depends","terms":[{"var":"x"},{"var":"y"}]}`
	rule := func(id, body string) string {
		return `{"id":"` + id + `","head":{"relation":"h","terms":[{"var":"x"}]},"body":[` + body + `]}`
	}
	many := func(n int) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = fmt.Sprintf(`{"relation":"f","tuple":[%d],"sources":["%s"]}`, i, src)
		}
		return facts(parts...)
	}
	sources := func(n int) string {
		s := make([]string, n)
		for i := range s {
			s[i] = `"` + src + `"`
		}
		return `{"relation":"f","tuple":["x"],"sources":[` + strings.Join(s, ",") + `]}`
	}
	fieldsLimits := "expected one of `maxWork`, `maxRounds`, `maxDerived`, `maxBindings`, `maxRows`, `maxOutputBytes`"
	cases := []struct{ name, snapshot, program, code, msg string }{
		{"input bytes", facts(`{"relation":"f","tuple":["` + strings.Repeat("x", 300_000) + `"],"sources":["` + src + `"]}`), listQuery, fault.BudgetExhausted, "memory/query input bytes"},
		{"program bytes", snapshot, `{"contract":"algal.query.v1","rules":[],"query":{"relation":"f","terms":["` + strings.Repeat("x", 65_536) + `"]}}`, fault.BudgetExhausted, "memory/query input bytes"},
		{"snapshot object", `[]`, program, fault.Parse, "expected object"},
		{"snapshot key", `{"contract":"algal.memory.v1","facts":[],"extra":1}`, program, fault.Parse, "unknown key extra"},
		{"program key", snapshot, `{"contract":"algal.query.v1","rules":[],"query":{},"zz":1}`, fault.Parse, "unknown key zz"},
		{"snapshot contract", `{"contract":"wrong","facts":[]}`, program, fault.Parse, "memory/query contract"},
		{"program contract", snapshot, strings.Replace(program, "algal.query.v1", "algal.memory.v1", 1), fault.Parse, "memory/query contract"},
		{"facts array", `{"contract":"algal.memory.v1","facts":"nope"}`, program, fault.Parse, "expected array"},
		{"facts missing", `{"contract":"algal.memory.v1"}`, program, fault.Parse, "expected array"},
		{"facts count", many(2049), listQuery, fault.BudgetExhausted, "array count"},
		{"rules array", snapshot, `{"contract":"algal.query.v1","query":{"relation":"f","terms":[]}}`, fault.Parse, "expected array"},
		{"rules count", snapshot, rules(strings.Repeat(rule("r", dep)+",", 64) + rule("r", dep)), fault.BudgetExhausted, "array count"},
		{"query missing", snapshot, `{"contract":"algal.query.v1","rules":[]}`, fault.Parse, "invalid type: unit value, expected struct Literal"},
		{"query field", snapshot, `{"contract":"algal.query.v1","rules":[],"query":{"relation":"f"}}`, fault.Parse, "missing field `terms`"},
		{"query positional short", snapshot, `{"contract":"algal.query.v1","rules":[],"query":["f"]}`, fault.Parse, "invalid length 1, expected struct Literal with 2 elements"},
		{"query positional long", snapshot, `{"contract":"algal.query.v1","rules":[],"query":["f",[],1]}`, fault.Parse, "invalid length 3, expected fewer elements in array"},
		{"fact unknown field", facts(`{"relation":"f","tuple":["x"],"sources":["` + src + `"],"extra":true}`), listQuery, fault.Parse, "unknown field `extra`, expected one of `relation`, `tuple`, `sources`"},
		{"fact missing field", facts(`{"relation":"f","tuple":["x"]}`), listQuery, fault.Parse, "missing field `sources`"},
		{"fact relation type", facts(`{"relation":5,"tuple":["x"],"sources":[]}`), listQuery, fault.Parse, "invalid type: integer `5`, expected a string"},
		{"fact tuple type", facts(`{"relation":"f","tuple":"x","sources":[]}`), listQuery, fault.Parse, `invalid type: string "x", expected a sequence`},
		{"fact source type", facts(`{"relation":"f","tuple":["x"],"sources":[true]}`), listQuery, fault.Parse, "invalid type: boolean `true`, expected a string"},
		{"fact type", facts(`"f"`), listQuery, fault.Parse, `invalid type: string "f", expected struct Fact`},
		{"literal unknown field", snapshot, strings.Replace(program, `"body":[{"relation":"depends"`, `"body":[{"not":true,"relation":"depends"`, 1), fault.Parse, "unknown field `not`, expected `relation` or `terms`"},
		{"rule unknown field", snapshot, rules(`{"id":"r","head":{"relation":"h","terms":[]},"body":[],"why":1}`), fault.Parse, "unknown field `why`, expected one of `id`, `head`, `body`"},
		{"limits unknown", snapshot, withLimits(program, `{"maxTurns":4}`), fault.Parse, "unknown field `maxTurns`, " + fieldsLimits},
		{"limits fraction", snapshot, withLimits(program, `{"maxRows":1.5}`), fault.Parse, "invalid type: floating point `1.5`, expected usize"},
		{"limits negative", snapshot, withLimits(program, `{"maxRows":-1}`), fault.Parse, "invalid value: integer `-1`, expected usize"},
		{"limits text", snapshot, withLimits(program, `{"maxRows":"5"}`), fault.Parse, `invalid type: string "5", expected usize`},
		{"limits type", snapshot, withLimits(program, `"x"`), fault.Parse, `invalid type: string "x", expected struct Limits`},
		{"limits null", snapshot, withLimits(program, `null`), fault.Parse, `invalid type: unit value, expected struct Limits`},
		{"limit zero", snapshot, withLimits(program, `{"maxWork":0}`), fault.Parse, "invalid memory limit maxWork"},
		{"limit ceiling", snapshot, withLimits(program, `{"maxWork":250001}`), fault.Parse, "invalid memory limit maxWork"},
		// Checked in byte order of the names: maxBindings before maxWork.
		{"limit order", snapshot, withLimits(program, `{"maxWork":0,"maxBindings":0}`), fault.Parse, "invalid memory limit maxBindings"},
		{"no sources", facts(`{"relation":"f","tuple":["x"],"sources":[]}`), listQuery, fault.Parse, "fact requires 1..16 source digests"},
		{"17 sources", facts(sources(17)), listQuery, fault.Parse, "fact requires 1..16 source digests"},
		{"bad digest", facts(`{"relation":"f","tuple":["x"],"sources":["deadbeef"]}`), listQuery, fault.Parse, "expected sha256:<64 lowercase hex> digest"},
		{"upper digest", facts(`{"relation":"f","tuple":["x"],"sources":["` + strings.ToUpper(src) + `"]}`), listQuery, fault.Parse, "expected sha256:<64 lowercase hex> digest"},
		{"nested atom", facts(`{"relation":"f","tuple":[{"nested":1}],"sources":["` + src + `"]}`), listQuery, fault.Parse, "memory atoms must be JSON primitives"},
		{"atom bytes", facts(`{"relation":"f","tuple":["` + strings.Repeat("y", 1023) + `"],"sources":["` + src + `"]}`), listQuery, fault.BudgetExhausted, "memory atom bytes"},
		{"arity", facts(`{"relation":"g","tuple":["a","b"],"sources":["`+src+`"]}`, `{"relation":"g","tuple":["a"],"sources":["`+src+`"]}`),
			`{"contract":"algal.query.v1","rules":[],"query":{"relation":"g","terms":[{"var":"a"},{"var":"b"}]}}`, fault.Parse, "inconsistent relation arity"},
		{"wide relation", snapshot, `{"contract":"algal.query.v1","rules":[],"query":{"relation":"f","terms":[1,2,3,4,5,6,7,8,9]}}`, fault.BudgetExhausted, "relation arity"},
		{"relation id", snapshot, `{"contract":"algal.query.v1","rules":[],"query":{"relation":"Bad","terms":[]}}`, fault.Parse, "expected lowercase kebab-case id"},
		{"var extra key", snapshot, `{"contract":"algal.query.v1","rules":[],"query":{"relation":"f","terms":[{"var":"x","type":"t"}]}}`, fault.Parse, "unknown key type"},
		{"var name", snapshot, `{"contract":"algal.query.v1","rules":[],"query":{"relation":"f","terms":[{"var":"X"}]}}`, fault.Parse, "expected lowercase kebab-case id"},
		{"var not text", snapshot, `{"contract":"algal.query.v1","rules":[],"query":{"relation":"f","terms":[{"var":1}]}}`, fault.Parse, "memory atoms must be JSON primitives"},
		{"duplicate rule", snapshot, rules(rule("dup", dep), rule("dup", dep)), fault.Parse, "rule id/body bound"},
		{"empty body", snapshot, rules(rule("empty", "")), fault.Parse, "rule id/body bound"},
		{"wide body", snapshot, rules(rule("wide", strings.Repeat(dep+",", 8)+dep)), fault.Parse, "rule id/body bound"},
		{"rule id", snapshot, rules(rule("Bad Id", dep)), fault.Parse, "expected lowercase kebab-case id"},
		{"rule id length", snapshot, rules(rule(strings.Repeat("r", 65), dep)), fault.Parse, "text exceeds bound"},
		{"unsafe", snapshot, strings.Replace(program, `"head":{"relation":"affects","terms":[{"var":"x"}`, `"head":{"relation":"affects","terms":[{"var":"unbound"}`, 1), fault.Parse, "unsafe rule: every head variable must occur in the body"},
	}
	for _, c := range cases {
		_, err := run(t, c.snapshot, c.program)
		e, ok := err.(*fault.Error)
		if !ok || e.Code != c.code || e.Message != c.msg {
			t.Errorf("%s: got %v, want %s %q", c.name, err, c.code, c.msg)
		}
	}
	// Just inside the input bounds.
	for _, c := range []struct{ name, snapshot, program string }{
		{"2048 facts", many(2048), `{"contract":"algal.query.v1","rules":[],"query":{"relation":"f","terms":[7]}}`},
		{"16 sources", facts(sources(16)), listQuery},
		{"1024-byte atom", facts(`{"relation":"f","tuple":["` + strings.Repeat("y", 1022) + `"],"sources":["` + src + `"]}`), listQuery},
		{"8-literal body", snapshot, rules(rule("wide", strings.Repeat(dep+",", 7)+dep))},
		{"64 rules", snapshot, rules(func() string {
			r := make([]string, 64)
			for i := range r {
				r[i] = rule(fmt.Sprintf("r%d", i), dep)
			}
			return strings.Join(r, ",")
		}())},
		{"limits as empty array keep defaults", snapshot, withLimits(program, `[]`)},
	} {
		if _, err := run(t, c.snapshot, c.program); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

func TestNumbersInMessages(t *testing.T) {
	t.Parallel()
	cases := map[float64]string{
		5:    "integer `5`",
		-3:   "integer `-3`",
		1.5:  "floating point `1.5`",
		1e20: "floating point `100000000000000000000.0`",
		1e-7: "floating point `0.0000001`",
	}
	for f, want := range cases {
		if got := unexpected(f); got != want {
			t.Errorf("%v: %s, want %s", f, got, want)
		}
	}
	if got := unexpected("a\"b\n\x01"); got != `string "a\"b\n\u{1}"` {
		t.Errorf("string: %s", got)
	}
}

func BenchmarkFixture(b *testing.B) {
	snapshot, program := fixture(b)
	s, p := jsontest.Parse(b, snapshot), jsontest.Parse(b, program)
	for b.Loop() {
		if _, err := Query(s, p); err != nil {
			b.Fatal(err)
		}
	}
}
