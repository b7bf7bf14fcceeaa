package effect

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/store"
)

// counting is a cacheable model executor whose answers can be changed.
type counting struct {
	fake
	usage map[string]any
}

func (c *counting) Execute(ctx context.Context, req Request) (Response, error) {
	r, err := c.fake.Execute(ctx, req)
	r.Usage = c.usage
	return r, err
}

func newCounting(out any) *counting {
	cfg, _ := canon.Digest("cfg")
	return &counting{fake: fake{id: "gpt", out: out, desc: Descriptor{Effects: ModelEffects, CacheIdentity: "gpt", ConfigurationDigest: cfg}}}
}

func TestCachedHitMiss(t *testing.T) {
	t.Parallel()
	s := store.NewMemStore()
	inner := newCounting("answer")
	inner.usage = map[string]any{"model": "m", "tokensIn": 7.0}
	r := NewRouter(NewCached(inner, s))
	req := request("c", KindAgent, nil)
	d, _ := canon.Digest(req)
	ctx := context.Background()

	first, _ := r.Effect(ctx, req, 0)
	if first.Cached || first.Output != "answer" || first.ConfigurationDigest == "" || inner.calls != 1 {
		t.Fatalf("miss: %+v", first.Value())
	}
	memo, ok, _ := s.GetEffect(d, "gpt")
	if !ok || encode(t, memo) != `{"executor":"gpt","output":"answer","requestDigest":"`+d+`","usage":{"model":"m","tokensIn":7}}` {
		t.Fatalf("memo entry %v", memo)
	}
	inner.out = "changed"
	second, _ := r.Effect(ctx, req, 0)
	want := `{"cached":true,"executor":"gpt","output":"answer","requestDigest":"` + d + `","usage":{"model":"m","tokensIn":7}}`
	if got := encode(t, second.Value()); got != want || inner.calls != 1 {
		t.Fatalf("hit:\n got %s\nwant %s (calls %d)", got, want, inner.calls)
	}
	// another identity (another executor or script) never shares the entry
	other := newCounting("other")
	other.desc.CacheIdentity = "claude"
	rec, _ := NewRouter(NewCached(other, s)).Effect(ctx, req, 0)
	if rec.Cached || rec.Output != "other" {
		t.Fatalf("identity leak: %+v", rec.Value())
	}
}

func TestCachedNeverMemoizesErrors(t *testing.T) {
	t.Parallel()
	s := store.NewMemStore()
	inner := newCounting(nil)
	inner.err = Errorf(fault.EffectFailed, "transient")
	c := NewCached(inner, s)
	req := request("c", KindAgent, nil)
	for range 2 {
		rec, _ := NewRouter(c).Effect(context.Background(), req, 0)
		if rec.Err == nil || rec.Cached {
			t.Fatalf("error path %+v", rec.Value())
		}
	}
	if inner.calls != 2 {
		t.Fatalf("a failure was memoized: %d calls", inner.calls)
	}
	inner.err = nil
	inner.out = "ok"
	_, _ = NewRouter(c).Effect(context.Background(), req, 0)
	rec, _ := NewRouter(c).Effect(context.Background(), req, 0)
	if !rec.Cached || rec.Output != "ok" || inner.calls != 3 {
		t.Fatalf("recovery not memoized: %+v", rec.Value())
	}
}

func TestCachedFirstSuccessWins(t *testing.T) {
	t.Parallel()
	s, _ := store.OpenFileStore(t.TempDir())
	req := request("c", KindAgent, nil)
	a, b := newCounting("first"), newCounting("second")
	_, _ = NewRouter(NewCached(a, s)).Effect(context.Background(), req, 0)
	_, _ = NewRouter(NewCached(b, s)).Effect(context.Background(), req, 0) // hit: b never runs
	if b.calls != 0 {
		t.Fatal("a memo hit must not call the inner executor")
	}
	d, _ := canon.Digest(req)
	// a racing writer that missed still cannot replace the winner
	if got, _ := s.PutEffect(map[string]any{"requestDigest": d, "executor": "gpt", "output": "late"}, "gpt"); got["output"] != "first" {
		t.Fatalf("winner replaced: %v", got)
	}
}

func TestCachedSkipsNonAnswers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	req := request("c", KindAgent, nil)
	d, _ := canon.Digest(req)
	cases := map[string]struct {
		out    any
		accept func(Request, any) bool
	}{
		"tool call":   {map[string]any{"tool": "pick.v1", "inputs": map[string]any{}}, nil},
		"over budget": {string(make([]byte, 5000)), nil}, // budget.maxOutputBytes is 4096
		"rejected":    {"not a label", func(Request, any) bool { return false }},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			s := store.NewMemStore()
			inner := newCounting(c.out)
			cached := NewCached(inner, s)
			cached.Accept = c.accept
			_, _ = NewRouter(cached).Effect(ctx, req, 0)
			if _, ok, _ := s.GetEffect(d, "gpt"); ok {
				t.Fatal("memoized a non-answer")
			}
		})
	}
	// uncacheable inner (no identity): pass-through, nothing stored
	s := store.NewMemStore()
	cmd := &fake{id: "cmd", desc: Descriptor{Effects: AllEffects, NoRetry: true}}
	_, _ = NewRouter(NewCached(cmd, s)).Effect(ctx, req, 0)
	_, _ = NewRouter(NewCached(cmd, s)).Effect(ctx, req, 0)
	if cmd.calls != 2 {
		t.Fatal("an uncacheable executor was memoized")
	}
}

func TestCachedStoreFaultAborts(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	s, _ := store.OpenFileStore(root)
	req := request("c", KindAgent, nil)
	d, _ := canon.Digest(req)
	inner := newCounting("x")
	_, _ = NewRouter(NewCached(inner, s)).Effect(context.Background(), req, 0)
	key, _ := store.MemoKey(d, "gpt")
	hex, _ := canon.DigestHex(key)
	if err := os.WriteFile(filepath.Join(root, "effects", hex+".json"), []byte(`{"executor":"gpt","output":"x","requestDigest":"sha256:`+hex+`"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := NewRouter(NewCached(inner, s)).Effect(context.Background(), req, 0); fault.CodeOf(err) != fault.DigestMismatch {
		t.Fatalf("corrupt memo must abort as a host fault: %v", err)
	}
}

func TestMemoEntry(t *testing.T) {
	t.Parallel()
	d, _ := canon.Digest("r")
	cfg, _ := canon.Digest("c")
	e, ok := MemoEntry(Record{RequestDigest: d, Executor: "scripted", Output: "x", ConfigurationDigest: cfg, NotRetryable: true})
	if !ok || encode(t, e) != `{"executor":"scripted","output":"x","requestDigest":"`+d+`"}` {
		t.Fatalf("entry %v", e)
	}
	if _, ok := MemoEntry(Record{RequestDigest: d, Executor: "e", Err: &Failure{Code: fault.EffectFailed}}); ok {
		t.Fatal("failure turned into a memo entry")
	}
	s := store.NewMemStore()
	if _, err := s.PutEffect(e, "id"); err != nil {
		t.Fatalf("store rejects MemoEntry output: %v", err)
	}
}
