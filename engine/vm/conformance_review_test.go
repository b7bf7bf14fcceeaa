package vm

// Conformance checks from the adversarial review against the upstream
// runtime (crates/algal/src/runtime.rs, registry.rs) and RUNTIME-FACTS.
// Each test pins one behaviour the review found diverging.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/effect"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/receipt"
	"github.com/algal-assay/assay/engine/store"
)

// registry.rs invoke: the FN_FAILED messages are receipt data, so they
// must match byte for byte.
func TestBuiltinFailureMessages(t *testing.T) {
	fns := Builtins()
	cases := []struct {
		fn   string
		in   string
		want string
	}{
		{"coalesce.v1", `{}`, "coalesce.v1: all inputs empty"},
		{"coalesce.v1", `{"a":null,"c":null}`, "coalesce.v1: all inputs empty"},
		{"assert.v1", `{"value":1,"expect":{"b":2}}`, `assert.v1: value 1 != expect {"b":2}`},
		{"inc.v1", `{"value":"x"}`, "inc.v1: value must be a finite number"},
		{"double.v1", `{"value":"x"}`, "double.v1 requires a number"},
		{"double.v1", `{"value":1e308}`, "double.v1 overflow"},
		{"not.v1", `{"value":1}`, "not.v1 requires a boolean"},
		{"push.v1", `{"list":1,"item":2}`, "push.v1: list must be an array"},
		{"pick.v1", `{"record":[],"field":"a"}`, "pick.v1: record must be an object"},
	}
	for _, c := range cases {
		_, _, err := fns[c.fn](obj(t, c.in))
		f, ok := err.(*Failure)
		if !ok || f.Code != fault.FnFailed || f.Message != c.want {
			t.Errorf("%s(%s): got %v, want FN_FAILED %q", c.fn, c.in, err, c.want)
		}
	}
	// assert truncates each side to 200 characters, not bytes.
	long := strings.Repeat("é", 300)
	_, _, err := fns["assert.v1"](map[string]any{"value": long, "expect": "x"})
	wantMsg := `assert.v1: value "` + strings.Repeat("é", 199) + ` != expect "x"`
	if err == nil || err.(*Failure).Message != wantMsg {
		t.Errorf("assert truncation: %v", err)
	}
}

// runtime.rs agent tool loop: undeclared inputs first, then every
// signature port in key order, checking a present value's type before a
// later port's absence; a many port is required unless optional.
func TestAgentToolInputChecks(t *testing.T) {
	run := func(tool, call string) map[string]any {
		m := mustManifest(t, organism("tool-inputs",
			`{"id":"in","kind":"input","outputs":{"q":"text"}},
			 {"id":"a","kind":"agent","prompt":"p","inputs":{"q":"text"},"output":{"kind":"text"},"tools":["`+tool+`"]}`,
			edge("in", "q", "a", "q")))
		return runAndVerify(t, m, `{"in":{"q":"x"}}`, scriptedHost(t, store.NewMemStore(), `{"a":[`+call+`,"done"]}`))
	}
	// join.v1's items port is many and not optional: leaving it out is a
	// missing required input.
	rec := run("join.v1", `{"tool":"join.v1","inputs":{"sep":","}}`)
	want(t, "many required", rec["failure"], `{"code":"EFFECT_FAILED","message":"tool missing required input","path":"a"}`)
	// format.v1: prefix (bad type) sorts before value (missing), so the
	// type error wins.
	rec = run("format.v1", `{"tool":"format.v1","inputs":{"prefix":5}}`)
	if f := rec["failure"].(map[string]any); f["code"] != fault.TypeMismatch {
		t.Fatalf("ordering: %s", enc(f))
	}
}

func lookupHost(t *testing.T, out string) *Host {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "lookup.json"), []byte(`{"{\"q\":\"x\"}":`+out+`}`), 0o644); err != nil {
		t.Fatal(err)
	}
	tools, err := effect.ParseTools(parseJSON(t, `{"lookup.v1":{"signature":{"inputs":{"q":"text"},"outputs":{"hit":"text"},
	  "effect":"read","cost":7,"maxOutputBytes":64},"exec":"scripted:lookup.json"}}`), dir)
	if err != nil {
		t.Fatal(err)
	}
	h := scriptedHost(t, store.NewMemStore(), `{"a":[{"tool":"lookup.v1","inputs":{"q":"x"}},"done"]}`)
	h.Router.Tools = tools
	return h
}

// runtime.rs tool(): the output check names the tool as the producing
// "cell" (Appendix A: cell <cell> produced undeclared port <name>) and
// checks declared port types, for tool cells and agent tool calls alike.
func TestToolOutputChecks(t *testing.T) {
	tc := mustManifest(t, organism("tool-out",
		`{"id":"in","kind":"input","outputs":{"q":"text"}},{"id":"look","kind":"tool","tool":"lookup.v1"}`,
		edge("in", "q", "look", "q")))
	rec := runAndVerify(t, tc, `{"in":{"q":"x"}}`, lookupHost(t, `{"hit":"y","extra":1}`))
	want(t, "undeclared", rec["failure"], `{"code":"TYPE_MISMATCH","message":"cell lookup.v1 produced undeclared port extra","path":"look"}`)

	ag := mustManifest(t, organism("agent-tool-out",
		`{"id":"in","kind":"input","outputs":{"q":"text"}},
		 {"id":"a","kind":"agent","prompt":"p","inputs":{"q":"text"},"output":{"kind":"text"},"tools":["lookup.v1"]}`,
		edge("in", "q", "a", "q")))
	rec = runAndVerify(t, ag, `{"in":{"q":"x"}}`, lookupHost(t, `{"hit":5}`))
	f, _ := rec["failure"].(map[string]any)
	if f == nil || f["code"] != fault.TypeMismatch || cell(t, rec, "a")["status"] != receipt.StatusFailed {
		t.Fatalf("a mistyped agent tool output must fail the agent: %s", enc(rec["failure"]))
	}
}

// runtime.rs recall(): the request budget is min(cell ?? run, run), as for
// agent-family cells.
func TestRecallBudgetIsCappedByRun(t *testing.T) {
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

// runtime.rs each: an item is checked by the child's input cell, so a
// mistyped item leaves the inner failed record and the run failure names
// the inner path.
func TestEachItemCheckedByChild(t *testing.T) {
	st := store.NewMemStore()
	child := mustManifest(t, echoChild)
	st.Put(store.Manifests, child.Value)
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
	st := store.NewMemStore()
	child := mustManifest(t, echoChild)
	st.Put(store.Manifests, child.Value)
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

// runtime.rs writes the activation error into the cell record and the run
// failure as is; receipt.rs bounds cell and run failure messages only by
// the receipt size (2048 is the effect error bound).
func TestLongFailureMessageIsKept(t *testing.T) {
	m := mustManifest(t, organism("long-msg",
		`{"id":"in","kind":"input","outputs":{"q":"text"}},
		 {"id":"e","kind":"expr","inputs":{"x":"text"},
		  "expr":{"contract":"algal.expr.v1","program":["get","x"]},"output":{"kind":"choice","labels":["a"]}}`,
		edge("in", "q", "e", "x")))
	rec := runAndVerify(t, m, `{"in":{"q":"`+strings.Repeat("z", 3000)+`"}}`, &Host{})
	msg := cell(t, rec, "e")["failure"].(map[string]any)["message"].(string)
	if len(msg) <= 3000 || rec["failure"].(map[string]any)["message"] != msg {
		t.Fatalf("failure message was cut to %d bytes", len(msg))
	}
}
