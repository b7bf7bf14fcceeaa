package vm

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/effect"
	"github.com/algal-assay/assay/engine/store"
)

func toolsHost(t *testing.T, st store.Store, responses string) *Host {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "lookup.json"), []byte(`{"{\"q\":\"wisp\"}":{"hit":"sprig"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	tools, err := effect.ParseTools(parseJSON(t, `{"lookup.v1":{"signature":{"inputs":{"q":"text"},"outputs":{"hit":"text"},
	  "effect":"read","cost":7,"maxOutputBytes":64},"exec":"scripted:lookup.json"}}`), dir)
	if err != nil {
		t.Fatal(err)
	}
	h := scriptedHost(t, st, responses)
	h.Router.Tools = tools
	return h
}

func TestHostTools(t *testing.T) {
	t.Parallel()
	st := store.NewMemStore()
	m := mustManifest(t, organism("tool",
		`{"id":"in","kind":"input","outputs":{"q":"text"}},{"id":"look","kind":"tool","tool":"lookup.v1"}`,
		edge("in", "q", "look", "q")))
	h := toolsHost(t, st, `{}`)
	rec := runAndVerify(t, m, `{"in":{"q":"wisp"}}`, h)
	req := map[string]any{"contract": "algal.tool-effect.v1", "path": "look", "tool": "lookup.v1", "effect": "read", "inputs": map[string]any{"q": "wisp"}}
	d, _ := canon.Digest(req)
	want(t, "tool record", effects(rec), `[{"requestDigest":"`+d+`","executor":"tool:lookup.v1","output":{"hit":"sprig"}}]`)
	want(t, "tool cell", cell(t, rec, "look"), `{"status":"committed","work":`+itoa(100+7+len(`{"hit":"sprig"}`))+`,"effectDigest":"`+d+`","outputs":{"hit":"sprig"}}`)
	if work(rec)["agentCalls"] != 0.0 {
		t.Fatal("tool effects do not count against maxAgentCalls")
	}

	// An agent calling a host tool records a tool effect under <path>/t<turn>.
	ag := mustManifest(t, organism("agent-tool",
		`{"id":"in","kind":"input","outputs":{"q":"text"}},
		 {"id":"a","kind":"agent","prompt":"p","inputs":{"q":"text"},"output":{"kind":"text"},"tools":["lookup.v1"]}`,
		edge("in", "q", "a", "q")))
	rec = runAndVerify(t, ag, `{"in":{"q":"wisp"}}`, toolsHost(t, st, `{"a":[{"tool":"lookup.v1","inputs":{"q":"wisp"}},"sprig"]}`))
	req["path"] = "a/t0"
	d, _ = canon.Digest(req)
	es := effects(rec)
	if len(es) != 3 || es[1].(map[string]any)["requestDigest"] != d || es[1].(map[string]any)["executor"] != "tool:lookup.v1" {
		t.Fatalf("agent tool effect: %s", enc(es))
	}
	want(t, "toolCalls", cell(t, rec, "a")["toolCalls"], `[{"fn":"lookup.v1","inputs":{"q":"wisp"},"output":{"hit":"sprig"}}]`)
	// A scripted tool miss is TOOL_FAILED.
	rec = runAndVerify(t, m, `{"in":{"q":"other"}}`, h)
	if f := rec["failure"].(map[string]any); f["code"] != "TOOL_FAILED" {
		t.Fatal(enc(f))
	}
}
