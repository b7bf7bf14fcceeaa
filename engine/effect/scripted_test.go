package effect

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
)

func writeFile(t testing.TB, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func run(t *testing.T, ex Executor, req Request) Record {
	t.Helper()
	rec, err := NewRouter(ex).Effect(context.Background(), req, 0)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

func TestScriptedLookupOrder(t *testing.T) {
	t.Parallel()
	pinned := request("route", KindClassifier, nil)
	pinned["prompt"] = "special"
	pd, _ := canon.Digest(pinned)
	s, err := NewScripted("scripted", map[string]any{
		"route": "bug",
		pd:      "feature",
		"loop":  []any{"one", map[string]any{"tool": "pick.v1", "inputs": map[string]any{}}, "three"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if rec := run(t, s, request("route", KindClassifier, nil)); rec.Output != "bug" {
		t.Fatalf("cell key: %v", rec.Output)
	}
	if rec := run(t, s, pinned); rec.Output != "feature" {
		t.Fatalf("digest key must win: %v", rec.Output)
	}
	// a non-array value is served on every call
	if rec := run(t, s, request("route", KindClassifier, nil)); rec.Output != "bug" {
		t.Fatalf("repeat: %v", rec.Output)
	}
	var got []string
	for range 3 {
		rec := run(t, s, request("loop", KindAgent, nil))
		got = append(got, encode(t, rec.Output))
	}
	if strings.Join(got, " ") != `"one" {"inputs":{},"tool":"pick.v1"} "three"` {
		t.Fatalf("queue order: %v", got)
	}
	req := request("loop", KindAgent, nil)
	d, _ := canon.Digest(req)
	rec := run(t, s, req)
	want := `{"error":{"code":"EFFECT_UNBOUND","message":"no scripted response for cell \"loop\" (digest ` + d + `)"},"executor":"scripted","requestDigest":"` + d + `"}`
	if got := encode(t, rec.Value()); got != want {
		t.Fatalf("exhausted queue:\n got %s\nwant %s", got, want)
	}
	req = request("ghost", KindAgent, nil)
	d, _ = canon.Digest(req)
	if rec := run(t, s, req); rec.Err == nil || rec.Err.Message != `no scripted response for cell "ghost" (digest `+d+`)` || rec.NotRetryable {
		t.Fatalf("missing cell: %+v", rec.Value())
	}
	s.Reset()
	if rec := run(t, s, request("loop", KindAgent, nil)); rec.Output != "one" {
		t.Fatalf("reset: %v", rec.Output)
	}
}

func TestScriptedQueuePersistsAcrossRouters(t *testing.T) {
	t.Parallel()
	s, _ := NewScripted("cheap", map[string]any{"route": []any{"a", "b"}})
	// two runs (two routers) sharing one executor continue one queue, as
	// bench cases of one system do
	first := run(t, s, request("route", KindClassifier, nil))
	second := run(t, NewRouter(s).Executors()[0], request("route", KindClassifier, nil))
	if first.Output != "a" || second.Output != "b" || first.Executor != "cheap" {
		t.Fatalf("queue did not persist: %v %v", first.Output, second.Output)
	}
	// an array answer must be scripted as a queue of arrays
	s2, _ := NewScripted("scripted", map[string]any{"list": []any{[]any{1.0, 2.0}}})
	if rec := run(t, s2, request("list", KindAgent, nil)); encode(t, rec.Output) != "[1,2]" {
		t.Fatalf("queue of arrays: %v", rec.Output)
	}
}

func TestScriptedIdentityAndUsage(t *testing.T) {
	t.Parallel()
	table := map[string]any{"c": "x"}
	s, _ := NewScripted("scripted", table)
	want, _ := canon.Digest(map[string]any{"kind": "scripted", "id": "scripted", "responses": table})
	if s.Identity() != want || s.Describe().CacheIdentity != want {
		t.Fatal("memo identity must bind id and table")
	}
	if s.Describe().ConfigurationDigest != "" {
		t.Fatal("scripted records carry no configurationDigest")
	}
	rec := run(t, s, request("c", KindAgent, nil))
	if rec.Usage != nil || rec.ConfigurationDigest != "" || rec.NotRetryable {
		t.Fatalf("scripted record %+v", rec.Value())
	}
	s.SetUsage("c", map[string]any{"model": "fixture", "tokensIn": 10.0, "tokensOut": 2.0})
	rec = run(t, s, request("c", KindAgent, nil))
	if encode(t, rec.Value()["usage"]) != `{"model":"fixture","tokensIn":10,"tokensOut":2}` {
		t.Fatalf("usage %v", rec.Value())
	}
	noCell := request("c", KindAgent, nil)
	delete(noCell, "cellId")
	if rec := run(t, s, noCell); rec.Err == nil || !strings.Contains(rec.Err.Message, `cell "undefined"`) {
		t.Fatalf("no cellId: %+v", rec.Value())
	}
}

func TestLoadScripted(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "list.json"), `["a"]`)
	if _, err := LoadScripted("scripted", filepath.Join(dir, "list.json")); fault.CodeOf(err) != fault.Parse {
		t.Fatalf("non-object: %v", err)
	}
	if _, err := LoadScripted("scripted", filepath.Join(dir, "missing.json")); fault.CodeOf(err) != fault.IOFailed {
		t.Fatalf("missing file: %v", err)
	}
	if _, err := NewScripted("scripted", map[string]any{"c": strings.Repeat("x", MaxScriptedBytes)}); fault.CodeOf(err) != fault.BudgetExhausted {
		t.Fatalf("oversized: %v", err)
	}
}

func upstream(t *testing.T) string {
	dir := os.Getenv("ASSAY_UPSTREAM_DIR")
	if dir == "" {
		t.Skip("ASSAY_UPSTREAM_DIR unset: upstream fixtures not available")
	}
	return dir
}

func TestUpstreamFixtures(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(upstream(t), "examples")
	s, err := LoadScripted("scripted", filepath.Join(dir, "compact.responses.json"))
	if err != nil {
		t.Fatal(err)
	}
	var outs []string
	for range 5 {
		rec := run(t, s, request("agent", KindAgent, nil))
		if rec.Err != nil {
			t.Fatalf("compact queue ended early: %v", rec.Err)
		}
		outs = append(outs, encode(t, rec.Output))
	}
	if outs[4] != `"wisp is a sprig from the tidepool"` || !strings.Contains(outs[3], `"keep_0"`) {
		t.Fatalf("compact queue %v", outs)
	}
	if rec := run(t, s, request("agent", KindAgent, nil)); rec.Err == nil || rec.Err.Code != fault.EffectUnbound {
		t.Fatal("a sixth request must find the queue exhausted")
	}
	tri, err := LoadScripted("scripted", filepath.Join(dir, "triage.responses.json"))
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if rec := run(t, tri, request("route", KindClassifier, nil)); rec.Output != "bug" {
			t.Fatalf("triage route: %v", rec.Output)
		}
	}
}

func TestScriptedUsageKey(t *testing.T) {
	t.Parallel()
	table := map[string]any{
		"route":  []any{"bug", "feature"},
		UsageKey: map[string]any{"route": map[string]any{"model": "small-1", "tokensIn": 180.0, "tokensOut": 3.0}},
	}
	s, err := NewScripted("cheap", table)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := canon.Digest(map[string]any{"kind": "scripted", "id": "cheap", "responses": table})
	if s.Identity() != want {
		t.Fatal("the memo identity must cover the declared usage")
	}
	rec := run(t, s, request("route", KindClassifier, nil))
	if rec.Output != "bug" || encode(t, rec.Value()["usage"]) != `{"model":"small-1","tokensIn":180,"tokensOut":3}` {
		t.Fatalf("record %v", rec.Value())
	}
	// The reserved key is not a cell: a request from a cell named like it
	// cannot exist, and the key never serves an answer.
	if rec := run(t, s, request(UsageKey, KindAgent, nil)); rec.Err == nil {
		t.Fatalf("the usage declaration served an answer: %v", rec.Value())
	}
	for _, bad := range []any{
		"x",
		map[string]any{"route": 1.0},
		map[string]any{"route": map[string]any{"tokensIn": -1.0}},
		map[string]any{"route": map[string]any{"tokensIn": 1.5}},
		map[string]any{"route": map[string]any{"model": ""}},
		map[string]any{"route": map[string]any{"cost": 1.0}},
	} {
		if _, err := NewScripted("cheap", map[string]any{UsageKey: bad}); fault.CodeOf(err) != fault.Parse {
			t.Errorf("%v admitted: %v", bad, err)
		}
	}
}
