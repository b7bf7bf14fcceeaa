package builtins

import (
	"fmt"
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
)

func digestOf(t *testing.T, v any) string {
	t.Helper()
	d, err := canon.Digest(v)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// The native unit test's history: a long tool log between a user goal, a
// pinned decision and a recent turn.
func nativeHistory() string {
	return `{"contract":"algal.context.v1","items":[
	 {"id":"goal","role":"user","content":"Do not change the API"},
	 {"id":"log","role":"tool","content":"` + strings.Repeat("verbose test output ", 200) + `"},
	 {"id":"decision","role":"assistant","content":"Keep parser","pinned":true},
	 {"id":"recent","role":"assistant","content":"Next step"}]}`
}

func TestContextCompactNative(t *testing.T) {
	t.Parallel()
	source := parseJSON(t, nativeHistory())
	out, extra, err := fnContextCompact(map[string]any{"source": source, "policy": obj(t, `{"maxBytes":512,"keepRecent":1}`)})
	if err != nil || extra != 0 {
		t.Fatalf("compact: %v (extra %d)", err, extra)
	}
	items := source.(map[string]any)["items"].([]any)
	ref := digestOf(t, items[1])
	view := out["view"].(map[string]any)
	want(t, "items", view["items"], `[{"id":"goal","role":"user","content":"Do not change the API"},
	 {"id":"log","role":"tool","ref":"`+ref+`"},
	 {"id":"decision","role":"assistant","content":"Keep parser","pinned":true},
	 {"id":"recent","role":"assistant","content":"Next step"}]`)
	want(t, "elided", view["elided"], `[{"id":"log","ref":"`+ref+`"}]`)
	if enc(out["archive"]) != enc(source) {
		t.Fatal("archive must be the untouched source")
	}
	before, _ := canon.Encode(items)
	after, _ := canon.Encode(view["items"])
	want(t, "bytes", []any{view["beforeBytes"], view["afterBytes"]}, fmt.Sprintf("[%d,%d]", len(before), len(after)))
	want(t, "header", []any{view["contract"], view["source"], view["policy"], view["semanticSummary"]},
		`["algal.context-view.v1","`+digestOf(t, source)+`",{"keepRecent":1,"maxBytes":512},false]`)
}

// The stub replaces an item only while the view is over the target and
// only when it is strictly smaller than the item.
func TestContextCompactSelection(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("z", 400)
	src := func(items string) any { return parseJSON(t, `{"contract":"algal.context.v1","items":[`+items+`]}`) }
	cases := []struct {
		name, items, policy, elided string
	}{
		{"fits already", `{"id":"a","role":"tool","content":"` + big + `"}`, `{"maxBytes":1024,"keepRecent":0}`, `[]`},
		{"oldest first, stop when fit", `{"id":"a","role":"tool","content":"` + big + `"},{"id":"b","role":"assistant","content":"` + big + `"}`,
			`{"maxBytes":600,"keepRecent":0}`, `["a"]`},
		{"both needed", `{"id":"a","role":"tool","content":"` + big + `"},{"id":"b","role":"assistant","content":"` + big + `"}`,
			`{"maxBytes":300,"keepRecent":0}`, `["a","b"]`},
		{"recent protected", `{"id":"a","role":"tool","content":"` + big + `"},{"id":"b","role":"assistant","content":"x"}`,
			`{"maxBytes":300,"keepRecent":1}`, `["a"]`},
		{"small item kept (stub not smaller)", `{"id":"a","role":"tool","content":"x"},{"id":"b","role":"tool","content":"` + big + `"}`,
			`{"maxBytes":300,"keepRecent":0}`, `["b"]`},
		{"pinned, system, user protected", `{"id":"p","role":"tool","content":"` + big[:50] + `","pinned":true},{"id":"s","role":"system","content":"` + big[:50] + `"},{"id":"u","role":"user","content":"` + big[:50] + `"},{"id":"b","role":"tool","content":"` + big + `"}`,
			`{"maxBytes":400,"keepRecent":0}`, `["b"]`},
		{"pinned false is not protected", `{"id":"a","role":"tool","content":"` + big + `","pinned":false}`, `{"maxBytes":300,"keepRecent":0}`, `["a"]`},
		{"content may be any JSON", `{"id":"a","role":"tool","content":{"k":["` + big + `"]}}`, `{"maxBytes":300,"keepRecent":0}`, `["a"]`},
	}
	for _, c := range cases {
		out, _, err := fnContextCompact(map[string]any{"source": src(c.items), "policy": obj(t, c.policy)})
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		var ids []any
		for _, e := range out["view"].(map[string]any)["elided"].([]any) {
			ids = append(ids, e.(map[string]any)["id"])
		}
		if ids == nil {
			ids = []any{}
		}
		want(t, c.name, ids, c.elided)
	}
}

func TestContextCompactFailures(t *testing.T) {
	t.Parallel()
	ok := `{"id":"a","role":"tool","content":"x"}`
	items := func(n int) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = fmt.Sprintf(`{"id":"i%d","role":"tool","content":"x"}`, i)
		}
		return strings.Join(parts, ",")
	}
	src := func(items string) string { return `{"contract":"algal.context.v1","items":[` + items + `]}` }
	pol := `{"maxBytes":4096,"keepRecent":0}`
	cases := []struct{ source, policy, code, msg string }{
		{`[]`, pol, fault.Parse, "expected object"},
		{`{"contract":"algal.context.v1","items":[],"extra":1}`, pol, fault.Parse, "unknown key extra"},
		{src(ok), `{"maxBytes":4096,"keepRecent":0,"mode":"x"}`, fault.Parse, "unknown key mode"},
		{src(ok), `"p"`, fault.Parse, "expected object"},
		{`{"contract":"algal.context.v2","items":[]}`, pol, fault.Parse, "context contract"},
		{`{"items":[]}`, pol, fault.Parse, "context contract"},
		{src(ok), `{"keepRecent":0}`, fault.Parse, "expected non-negative integer"},
		{src(ok), `{"maxBytes":127,"keepRecent":0}`, fault.Parse, "integer out of bounds"},
		{src(ok), `{"maxBytes":262145,"keepRecent":0}`, fault.Parse, "integer out of bounds"},
		{src(ok), `{"maxBytes":512.5,"keepRecent":0}`, fault.Parse, "expected non-negative integer"},
		{src(ok), `{"maxBytes":-1,"keepRecent":0}`, fault.Parse, "expected non-negative integer"},
		{src(ok), `{"maxBytes":512,"keepRecent":65}`, fault.Parse, "integer out of bounds"},
		{src(ok), `{"maxBytes":512,"keepRecent":"1"}`, fault.Parse, "expected non-negative integer"},
		{`{"contract":"algal.context.v1","items":{}}`, pol, fault.Parse, "expected array"},
		{src(items(65)), pol, fault.BudgetExhausted, "array count"},
		{src(`1`), pol, fault.Parse, "expected object"},
		{src(`{"id":"a","role":"tool","content":"x","ts":1}`), pol, fault.Parse, "unknown key ts"},
		{src(`{"id":"A","role":"tool","content":"x"}`), pol, fault.Parse, "expected lowercase kebab-case id"},
		{src(`{"id":7,"role":"tool","content":"x"}`), pol, fault.Parse, "expected text"},
		{src(`{"id":"` + strings.Repeat("a", 65) + `","role":"tool","content":"x"}`), pol, fault.Parse, "text exceeds bound"},
		{src(ok + "," + ok), pol, fault.Parse, "duplicate context item id"},
		{src(`{"id":"a","role":"bot","content":"x"}`), pol, fault.Parse, "context role"},
		{src(`{"id":"a","role":"tool"}`), pol, fault.Parse, "context content required"},
		{src(`{"id":"a","role":"tool","content":"x","pinned":1}`), pol, fault.Parse, "pinned must be boolean"},
		// The native never-drop test: a user turn over the target fails.
		{src(`{"id":"goal","role":"user","content":"` + strings.Repeat("x", 1024) + `"}`), `{"maxBytes":128,"keepRecent":0}`,
			fault.BudgetExhausted, "protected context cannot fit; request a larger budget or explicit new task boundary"},
	}
	for _, c := range cases {
		_, _, err := fnContextCompact(map[string]any{"source": parseJSON(t, c.source), "policy": parseJSON(t, c.policy)})
		f, isF := fault.As(err)
		if !isF || f.Code != c.code || f.Message != c.msg {
			t.Errorf("%.70s %s: got %v, want %s %q", c.source, c.policy, err, c.code, c.msg)
		}
	}
	// The bounds themselves are admitted: 64 items, maxBytes 128 and
	// 262144, keepRecent 64, an id of 64 characters.
	for _, c := range []struct{ source, policy string }{
		{src(items(64)), pol},
		{src(ok), `{"maxBytes":128,"keepRecent":64}`},
		{src(ok), `{"maxBytes":262144,"keepRecent":0}`},
		{src(`{"id":"` + strings.Repeat("a", 64) + `","role":"tool","content":null}`), pol},
	} {
		if _, _, err := fnContextCompact(map[string]any{"source": parseJSON(t, c.source), "policy": parseJSON(t, c.policy)}); err != nil {
			t.Errorf("%.70s %s: %v", c.source, c.policy, err)
		}
	}
	// The archive bound: a source over 1 MiB canonical bytes. (A delivered
	// port value is at most 256 KiB, so only a direct call reaches it.)
	huge := src(`{"id":"a","role":"tool","content":"` + strings.Repeat("x", 1<<20) + `"}`)
	_, _, err := fnContextCompact(map[string]any{"source": parseJSON(t, huge), "policy": parseJSON(t, pol)})
	if f, ok := fault.As(err); !ok || f.Code != fault.BudgetExhausted || f.Message != "context archive bytes" {
		t.Errorf("archive bound: %v", err)
	}
}
