package vm

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/algal-assay/assay/engine/effect"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/receipt"
	"github.com/algal-assay/assay/engine/store"
)

// runtime.rs agent tool loop: undeclared inputs first, then every
// signature port in key order, checking a present value's type before a
// later port's absence; a many port is required unless optional.
func TestAgentToolInputChecks(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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
