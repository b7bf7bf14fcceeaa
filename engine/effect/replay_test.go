package effect

import (
	"context"
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/store"
)

func ticketRequest(ticket string) Request {
	r := request("route", KindClassifier, nil)
	r["context"] = map[string]any{"inputs": map[string]any{"ticket": ticket, "lang": "en"}, "turn": 0.0}
	return r
}

func TestReplayOrderWithRepeatedDigest(t *testing.T) {
	t.Parallel()
	req := request("flaky", KindAgent, nil)
	d, _ := canon.Digest(req)
	other := request("other", KindAgent, nil)
	od, _ := canon.Digest(other)
	recs := []Record{
		{RequestDigest: d, Executor: "scripted", Err: &Failure{Code: fault.EffectFailed, Message: "first attempt"}},
		{RequestDigest: od, Executor: "scripted", Output: "o"},
		{RequestDigest: d, Executor: "scripted", Output: "second attempt"},
	}
	r := NewRouter(NewReplay(recs))
	ctx := context.Background()
	a, _ := r.Effect(ctx, req, 0)
	b, _ := r.Effect(ctx, req, 0)
	c, _ := r.Effect(ctx, other, 0)
	if a.Err == nil || a.Err.Message != "first attempt" || b.Output != "second attempt" || c.Output != "o" {
		t.Fatalf("replay order: %+v %+v %+v", a.Value(), b.Value(), c.Value())
	}
	// third request for the digest: every recording served, nothing live
	miss, _ := r.Effect(ctx, req, 0)
	if miss.Executor != UnboundExecutor || !strings.Contains(miss.Diagnostic, "recorded 2 time(s)") {
		t.Fatalf("exhausted digest: %+v %q", miss.Value(), miss.Diagnostic)
	}
}

func TestReplayRecordsVerbatim(t *testing.T) {
	t.Parallel()
	req := request("c", KindAgent, nil)
	d, _ := canon.Digest(req)
	cfg, _ := canon.Digest("cfg")
	orig := `{"cached":true,"configurationDigest":"` + cfg + `","executor":"vercel:x","output":{"a":[1,null]},"requestDigest":"` + d + `","retryable":false,"usage":{"tokensIn":5}}`
	v, _ := canon.Parse([]byte(orig), 0)
	rp := NewReplay(nil)
	if err := rp.AddReceipt(map[string]any{"effects": []any{v}}); err != nil {
		t.Fatal(err)
	}
	rec, _ := NewRouter(rp).Effect(context.Background(), req, 0)
	if got := encode(t, rec.Value()); got != orig {
		t.Fatalf("replayed record changed:\n got %s\nwant %s", got, orig)
	}
}

func TestReplayMissExplainsFirstDifference(t *testing.T) {
	t.Parallel()
	recorded := ticketRequest("printer on fire")
	rd, _ := canon.Digest(recorded)
	far := ticketRequest("something else")
	far["prompt"] = "another prompt"
	fd, _ := canon.Digest(far)
	rp := NewReplay([]Record{{RequestDigest: fd, Executor: "scripted", Output: "x"}, {RequestDigest: rd, Executor: "scripted", Output: "bug"}})
	rp.AddRequests(map[string]Request{rd: recorded, fd: far, "sha256:" + strings.Repeat("0", 64): recorded})
	r := NewRouter(rp)
	ctx := context.Background()

	changed := ticketRequest("printer on fire!")
	cd, _ := canon.Digest(changed)
	rec, err := r.Effect(ctx, changed, 0)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Executor != UnboundExecutor {
		t.Fatalf("miss must be unbound with nothing live: %+v", rec.Value())
	}
	for _, want := range []string{`cell "route" call 1`, cd, "nearest recorded request for \"route\" is " + rd, "first difference at context.inputs.ticket"} {
		if !strings.Contains(rec.Diagnostic, want) {
			t.Fatalf("diagnostic %q lacks %q", rec.Diagnostic, want)
		}
	}
	reprompt := ticketRequest("printer on fire")
	reprompt["prompt"] = "new framing"
	rec, _ = r.Effect(ctx, reprompt, 0)
	if !strings.Contains(rec.Diagnostic, "call 2") || !strings.HasSuffix(rec.Diagnostic, "first difference at prompt") {
		t.Fatalf("prompt diff: %q", rec.Diagnostic)
	}
	stranger := request("unknown-cell", KindAgent, nil)
	if got := rp.Explain(stranger); !strings.Contains(got, `no recorded request for "unknown-cell"`) {
		t.Fatalf("unknown cell: %q", got)
	}
	// the explanation never changes the exact unbound record
	if encode(t, rec.Value()["error"]) != `{"code":"EFFECT_UNBOUND","message":"no host-admitted executor for this request"}` {
		t.Fatal("unbound record altered")
	}
}

func TestDiffPaths(t *testing.T) {
	t.Parallel()
	cases := []struct {
		a, b string
		want string
	}{
		{`{"a":1}`, `{"a":1}`, ""},
		{`{"a":{"b":[1,2]}}`, `{"a":{"b":[1,3]}}`, "a.b[1]"},
		{`{"a":[1]}`, `{"a":[1,2]}`, "a[1]"},
		{`{"x":1,"y":2}`, `{"y":2}`, "x"},
		{`{"b":1,"a":2}`, `{"b":2,"a":3}`, "a,b"},
		{`1`, `2`, "(request root)"},
		{`{"a":1}`, `{"a":"1"}`, "a"},
	}
	for _, c := range cases {
		a, _ := canon.Parse([]byte(c.a), 0)
		b, _ := canon.Parse([]byte(c.b), 0)
		var got []string
		diffPaths(&got, "", a, b)
		if strings.Join(got, ",") != c.want {
			t.Errorf("%s vs %s: %v want %s", c.a, c.b, got, c.want)
		}
	}
}

func TestLoadReplayFromStore(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, _ := store.OpenFileStore(dir)
	req := ticketRequest("printer on fire")
	d, _ := canon.Digest(req)
	tool := Request{"contract": ToolContract, "path": "agent/t0", "tool": "lookup.v1", "effect": "read", "inputs": map[string]any{"q": "x"}}
	td, _ := canon.Digest(tool)
	receipt := map[string]any{
		"contract": "algal.run.v1",
		"effects": []any{
			map[string]any{"requestDigest": d, "executor": "scripted", "output": "bug"},
			map[string]any{"requestDigest": td, "executor": "tool:lookup.v1", "output": map[string]any{"v": 1.0}},
		},
		"events": []any{
			map[string]any{"seq": 0.0, "kind": "effect", "path": "inbox/route", "digest": d},
		},
	}
	if _, err := s.Put(store.Runs, receipt); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(store.Values, req); err != nil {
		t.Fatal(err)
	}
	rp, err := LoadReplayDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	r := NewRouter(rp)
	ctx := context.Background()
	rec, _ := r.Effect(ctx, req, 0)
	if rec.Output != "bug" {
		t.Fatalf("replay:<dir> effect: %+v", rec.Value())
	}
	trec, err := r.Tool(ctx, tool, "", 0)
	if err != nil || trec.Executor != "tool:lookup.v1" {
		t.Fatalf("replay:<dir> tool: %+v %v", trec, err)
	}
	// the stored request body lets a miss name the differing field
	miss := ticketRequest("printer on ice")
	if got := rp.Explain(miss); !strings.Contains(got, "first difference at context.inputs.ticket") {
		t.Fatalf("explain from store: %q", got)
	}
	// a tool miss with nothing live is a hard, explained EFFECT_UNBOUND
	_, err = r.Tool(ctx, tool, "", 0)
	if fault.CodeOf(err) != fault.EffectUnbound || !strings.Contains(err.Error(), "lookup.v1") {
		t.Fatalf("tool miss: %v", err)
	}
	// tampered receipt: the store refuses it
	bad, _ := store.OpenFileStore(t.TempDir())
	_, _ = bad.Put(store.Runs, map[string]any{"effects": []any{map[string]any{"requestDigest": "nope"}}})
	if _, err := LoadReplay(bad); fault.CodeOf(err) != fault.Parse {
		t.Fatalf("malformed receipt: %v", err)
	}
}

func TestReplayExplainFromEventsOnly(t *testing.T) {
	t.Parallel()
	req := ticketRequest("a")
	d, _ := canon.Digest(req)
	rp := NewReplay(nil)
	_ = rp.AddReceipt(map[string]any{
		"effects": []any{map[string]any{"requestDigest": d, "executor": "scripted", "output": "bug"}},
		"events":  []any{map[string]any{"seq": 1.0, "kind": "effect", "path": "inbox/route", "digest": d}},
	})
	got := rp.Explain(ticketRequest("b"))
	if !strings.Contains(got, `recorded requests for "route": `+d) {
		t.Fatalf("events-only explain: %q", got)
	}
}
