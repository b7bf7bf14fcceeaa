package builtins

import (
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/manifest"
)

func compileOK(t *testing.T, plan string) map[string]any {
	t.Helper()
	out, extra, err := fnManifestCompile(map[string]any{"plan": parseJSON(t, plan)})
	if err != nil {
		t.Fatalf("compile %.80s: %v", plan, err)
	}
	if extra != 0 {
		t.Fatalf("compile reports extra work %d", extra)
	}
	return out["manifest"].(map[string]any)
}

func planKey(t *testing.T, plan string) string {
	d, err := canon.Digest(parseJSON(t, plan))
	if err != nil {
		t.Fatal(err)
	}
	return "organism:plan-" + d[7:23]
}

// The whole compiled document is receipt data: pin one byte for byte.
func TestManifestCompileShape(t *testing.T) {
	t.Parallel()
	plan := `["fn:format.v1;prefix=Hello, ","uppercase.v1"]`
	want(t, "compiled", compileOK(t, plan), `{"contract":"algal.organism.v1","key":"`+planKey(t, plan)+`",
	 "name":"Compiled format.v1->uppercase.v1","budgets":{"maxAgentCalls":0,"maxSteps":32,"maxWork":10000},
	 "cells":[{"id":"src","kind":"input","outputs":{"value":"json"}},
	  {"id":"s0-prefix","kind":"const","outputs":{"prefix":{"type":"text","value":"Hello, "}}},
	  {"id":"s0","kind":"fn","fn":"format.v1"},{"id":"s1","kind":"fn","fn":"uppercase.v1"}],
	 "edges":[{"from":{"cell":"s0-prefix","port":"prefix"},"to":{"cell":"s0","port":"prefix"}},
	  {"from":{"cell":"src","port":"value"},"to":{"cell":"s0","port":"value"}},
	  {"from":{"cell":"s0","port":"value"},"to":{"cell":"s1","port":"value"}}],
	 "interface":{"inputs":{"value":{"cell":"src","port":"value"}},"outputs":{"out":{"cell":"s1","port":"value"}}}}`)
	if k := compileOK(t, plan)["key"].(string); len(k) != len("organism:plan-")+16 {
		t.Fatalf("key %q", k)
	}
}

func TestManifestCompileCases(t *testing.T) {
	t.Parallel()
	cases := []struct {
		plan string
		// check the compiled document's parts (canonical JSON)
		name, src, out, cells string
	}{
		// The upstream plans that must compile to admissible manifests.
		{plan: `["fn:double.v1"]`, name: "Compiled double.v1", src: `"json"`, out: `{"cell":"s0","port":"value"}`},
		{plan: `["const:\"fixed\""]`, name: "Compiled const", src: `"json"`, out: `{"cell":"s0","port":"value"}`,
			cells: `[{"id":"src","kind":"input","outputs":{"value":"json"}},{"id":"s0","kind":"const","outputs":{"value":{"type":"text","value":"fixed"}}}]`},
		{plan: `["fn:not.v1","fn:echo.v1"]`, name: "Compiled not.v1->echo.v1", src: `"json"`, out: `{"cell":"s1","port":"value"}`},
		// The source port takes the first chained input's type.
		{plan: `["fn:uppercase.v1"]`, name: "Compiled uppercase.v1", src: `"text"`},
		// Noise: a bare token that is no builtin is dropped (its index is
		// still used up), and bindings to unknown or chain ports vanish.
		{plan: `["fn:uppercase.v1","Ada"]`, name: "Compiled uppercase.v1", out: `{"cell":"s0","port":"value"}`},
		{plan: `["Ada","fn:uppercase.v1"]`, name: "Compiled uppercase.v1", out: `{"cell":"s1","port":"value"}`},
		{plan: `["fn:uppercase.v1;input=x"]`, name: "Compiled uppercase.v1",
			cells: `[{"id":"src","kind":"input","outputs":{"value":"text"}},{"id":"s0","kind":"fn","fn":"uppercase.v1"}]`},
		{plan: `["fn:uppercase.v1;value=hi"]`, name: "Compiled uppercase.v1"},
		// A bare builtin name works without the fn: prefix.
		{plan: `["double.v1"]`, name: "Compiled double.v1"},
		// No "value" input: the only unbound required input carries the chain.
		{plan: `["fn:pick.v1;field=name"]`, name: "Compiled pick.v1",
			cells: `[{"id":"src","kind":"input","outputs":{"value":"json"}},{"id":"s0-field","kind":"const","outputs":{"field":{"type":"text","value":"name"}}},{"id":"s0","kind":"fn","fn":"pick.v1"}]`},
		// json bindings are JSON-decoded.
		{plan: `["fn:push.v1;item={\"a\":1}"]`, name: "Compiled push.v1",
			cells: `[{"id":"src","kind":"input","outputs":{"value":"json"}},{"id":"s0-item","kind":"const","outputs":{"item":{"type":"json","value":{"a":1}}}},{"id":"s0","kind":"fn","fn":"push.v1"}]`},
		// choice output chains into a text input; text widens into json.
		{plan: `["fn:label.v1","fn:uppercase.v1"]`, name: "Compiled label.v1->uppercase.v1"},
		{plan: `["fn:uppercase.v1","fn:double.v1"]`, name: "Compiled uppercase.v1->double.v1"},
		// Two outputs: the first in byte order (archive) carries on.
		{plan: `["fn:context.compact.v1;policy={}"]`, out: `{"cell":"s0","port":"archive"}`},
		// Only noise: an empty pipeline from src.
		{plan: `["Ada"]`, name: "Compiled ", out: `{"cell":"src","port":"value"}`,
			cells: `[{"id":"src","kind":"input","outputs":{"value":"json"}}]`},
		// Four steps is the bound.
		{plan: `["fn:inc.v1","fn:inc.v1","fn:inc.v1","fn:inc.v1"]`, name: "Compiled inc.v1->inc.v1->inc.v1->inc.v1"},
		// A step of exactly 4096 UTF-16 units; a const literal of exactly 4096 bytes.
		{plan: `["` + strings.Repeat("x", 4096) + `"]`, name: "Compiled "},
		// Bytes, not code units: 2047 two-byte characters plus quotes.
		{plan: `["const:\"` + strings.Repeat("é", 2047) + `\""]`, name: "Compiled const"},
		{plan: `["fn:format.v1;prefix=` + strings.Repeat("é", 2048) + `"]`, name: "Compiled format.v1"},
	}
	for _, c := range cases {
		m := compileOK(t, c.plan)
		if c.name != "" {
			want(t, c.plan+" name", m["name"], `"`+c.name+`"`)
		}
		if c.src != "" {
			want(t, c.plan+" src", m["cells"].([]any)[0].(map[string]any)["outputs"], `{"value":`+c.src+`}`)
		}
		if c.out != "" {
			want(t, c.plan+" out", m["interface"].(map[string]any)["outputs"], `{"out":`+c.out+`}`)
		}
		if c.cells != "" {
			want(t, c.plan+" cells", m["cells"], c.cells)
		}
		want(t, c.plan+" key", m["key"], `"`+planKey(t, c.plan)+`"`)
		if _, err := manifest.ParseValue(m); err != nil {
			t.Errorf("%.80s: compiled manifest does not admit: %v", c.plan, err)
		}
	}
}

func TestManifestCompileFailures(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 4097)
	cases := []struct{ plan, code, msg string }{
		{`{}`, fault.Parse, "expected array"},
		{`[]`, fault.Parse, "plan requires 1..4 steps"},
		{`["fn:inc.v1","fn:inc.v1","fn:inc.v1","fn:inc.v1","fn:inc.v1"]`, fault.BudgetExhausted, "array count"},
		{`[5]`, fault.Parse, "expected text"},
		{`["` + long + `"]`, fault.Parse, "text exceeds bound"},
		// 2049 astral characters are 4098 UTF-16 units.
		{`["` + strings.Repeat("😀", 2049) + `"]`, fault.Parse, "text exceeds bound"},
		{`["fn:bogus.v9"]`, fault.Parse, "step 0 requires fn:, const:, or a host fn name"},
		{`["fn:inc.v1","fnord"]`, fault.Parse, "step 1 requires fn:, const:, or a host fn name"},
		{`["x=1"]`, fault.Parse, "step 0 requires fn:, const:, or a host fn name"},
		{`["fn:uppercase.v1;broken"]`, fault.Parse, "binding requires PORT=VALUE"},
		{`["fn:uppercase.v1;Bad=x"]`, fault.Parse, "expected lowercase kebab-case id"},
		{`["fn:format.v1;prefix=` + strings.Repeat("é", 2049) + `"]`, fault.BudgetExhausted, "binding literal bytes"},
		{`["const:not json"]`, fault.Parse, "const step requires a JSON-encoded literal"},
		{`["const:1;x=2"]`, fault.Parse, "const steps cannot carry bindings"},
		{`["const:\"` + strings.Repeat("é", 2048) + `\""]`, fault.BudgetExhausted, "const literal bytes"},
		{`["fn:double.v1","fn:uppercase.v1"]`, fault.Parse, "step 1: uppercase.v1.value expects text, pipeline provides json"},
		{`["const:1","fn:uppercase.v1"]`, fault.Parse, "step 1: uppercase.v1.value expects text, pipeline provides json"},
		{`["fn:join.v1"]`, fault.Parse, "cannot chain into join.v1.items"},
		{`["fn:join.v1;items=[]"]`, fault.Parse, "join.v1 has no single chain port"},
		{`["fn:pick.v1"]`, fault.Parse, "pick.v1 has no single chain port"},
		{`["fn:push.v1;item=x"]`, fault.Parse, "item= must be JSON-encoded for push.v1"},
	}
	for _, c := range cases {
		_, _, err := fnManifestCompile(map[string]any{"plan": parseJSON(t, c.plan)})
		f, ok := fault.As(err)
		if !ok || f.Code != c.code || f.Message != c.msg {
			t.Errorf("%.60s: got %v, want %s %q", c.plan, err, c.code, c.msg)
		}
	}
}
