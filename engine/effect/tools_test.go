package effect

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
)

func toolRequest(name string, inputs map[string]any) Request {
	return Request{"contract": ToolContract, "path": "agent/t0", "tool": name, "effect": "read", "inputs": inputs}
}

func TestToolsRegistry(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "lookup.json"), `{"{\"q\":\"x\"}":{"value":"found"}}`)
	writeFile(t, filepath.Join(dir, "marker"), "")
	writeFile(t, filepath.Join(dir, "tools.json"), `{
	  "echo.v1": {"signature": {"inputs": {"q": "text"}, "outputs": {"value": "json"}, "effect": "write", "cost": 5, "maxOutputBytes": 4096},
	              "exec": "cmd:test -f marker && cat"},
	  "lookup.v1": {"signature": {"inputs": {"q": "text"}, "outputs": {"value": "text"}, "effect": "read", "cost": 1, "maxOutputBytes": 100},
	              "exec": "scripted:lookup.json"},
	  "wait.v1": {"signature": {"inputs": {}, "outputs": {"value": "json"}, "effect": "read", "cost": 0, "maxOutputBytes": 100},
	              "exec": "cmd:exit 75"}
	}`)
	tools, err := LoadTools(filepath.Join(dir, "tools.json"))
	if err != nil {
		t.Fatal(err)
	}
	if got := tools.Names(); len(got) != 3 || got[0] != "echo.v1" {
		t.Fatalf("names %v", got)
	}
	lk, _ := tools.Lookup("lookup.v1")
	if lk.Cost != 1 || lk.MaxOutputBytes != 100 || lk.Effect != "read" || !canon.IsDigest(lk.ConfigurationDigest) {
		t.Fatalf("signature %+v", lk)
	}
	r := NewRouter()
	r.Tools = tools
	ctx := context.Background()

	req := toolRequest("echo.v1", map[string]any{"q": "x"})
	d, _ := canon.Digest(req)
	rec, err := r.Tool(ctx, req, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	// stdin is {"idempotencyKey","inputs","requestDigest"}, cwd is the registry dir
	want := `{"idempotencyKey":"` + d + `","inputs":{"q":"x"},"requestDigest":"` + d + `"}`
	if rec.Err != nil || encode(t, rec.Output) != want || rec.Executor != "tool:echo.v1" || rec.ConfigurationDigest != "" || !rec.NotRetryable {
		t.Fatalf("cmd tool: %+v", rec.Value())
	}
	key, _ := canon.Digest("process-scoped")
	rec, _ = r.Tool(ctx, req, key, 0)
	if rec.Output.(map[string]any)["idempotencyKey"] != key {
		t.Fatal("idempotency key not passed")
	}

	rec, _ = r.Tool(ctx, toolRequest("lookup.v1", map[string]any{"q": "x"}), "", 0)
	if encode(t, rec.Output) != `{"value":"found"}` || rec.NotRetryable {
		t.Fatalf("scripted tool: %+v", rec.Value())
	}
	rec, _ = r.Tool(ctx, toolRequest("lookup.v1", map[string]any{"q": "y"}), "", 0)
	if rec.Err == nil || rec.Err.Code != fault.ToolFailed || rec.Err.Message != "scripted tool result missing" {
		t.Fatalf("scripted miss: %+v", rec.Value())
	}
	rec, _ = r.Tool(ctx, toolRequest("wait.v1", map[string]any{}), "", 0)
	if rec.Err == nil || rec.Err.Code != fault.EffectSuspended || !rec.NotRetryable {
		t.Fatalf("suspending tool: %+v", rec.Value())
	}
	if _, err := r.Tool(ctx, toolRequest("nope.v1", map[string]any{}), "", 0); fault.CodeOf(err) != fault.EffectUnbound {
		t.Fatalf("unknown tool: %v", err)
	}

	// replay serves recorded tool effects before the registry
	rp := NewReplay([]Record{{RequestDigest: d, Executor: "tool:echo.v1", Output: map[string]any{"value": "recorded"}}})
	r2 := NewRouter(rp)
	r2.Tools = tools
	rec, _ = r2.Tool(ctx, req, "", 0)
	if encode(t, rec.Output) != `{"value":"recorded"}` {
		t.Fatalf("tool replay: %+v", rec.Value())
	}
}

func TestToolsRegistryRejects(t *testing.T) {
	t.Parallel()
	sig := `{"inputs":{},"outputs":{},"effect":"read","cost":0,"maxOutputBytes":10}`
	bad := []string{
		`[]`,
		`{"t":{"signature":` + sig + `}}`,
		`{"t":{"signature":` + sig + `,"exec":"python:x"}}`,
		`{"t":{"signature":` + sig + `,"exec":"cmd:true","extra":1}}`,
		`{"t":{"signature":{"inputs":{},"outputs":{},"effect":"delete","cost":0,"maxOutputBytes":10},"exec":"cmd:true"}}`,
		`{"t":{"signature":{"inputs":{},"outputs":{},"effect":"read","cost":-1,"maxOutputBytes":10},"exec":"cmd:true"}}`,
		`{"t":{"signature":{"inputs":{},"outputs":{},"effect":"read","cost":0,"maxOutputBytes":0},"exec":"cmd:true"}}`,
		`{"t":{"signature":{"inputs":{},"outputs":{},"effect":"read","cost":0,"maxOutputBytes":10,"x":1},"exec":"cmd:true"}}`,
		`{"t":{"signature":` + sig + `,"exec":"scripted:missing.json"}}`,
	}
	for _, b := range bad {
		v, err := canon.Parse([]byte(b), 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ParseTools(v, t.TempDir()); err == nil {
			t.Errorf("accepted %s", b)
		}
	}
}
