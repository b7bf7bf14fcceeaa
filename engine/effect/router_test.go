package effect

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
)

// fake is an executor with a declared descriptor that answers its own id.
type fake struct {
	id    string
	desc  Descriptor
	calls int
	err   error
	out   any
}

func (f *fake) ID() string           { return f.id }
func (f *fake) Describe() Descriptor { return f.desc }
func (f *fake) Execute(context.Context, Request) (Response, error) {
	f.calls++
	if f.err != nil {
		return Response{}, f.err
	}
	if f.out != nil {
		return Response{Output: f.out}, nil
	}
	return Response{Output: f.id}, nil
}

func request(cell, kind string, route map[string]any) Request {
	r := Request{
		"contract": EffectContract, "cellId": cell, "kind": kind, "prompt": "p",
		"context": map[string]any{"inputs": map[string]any{}, "turn": 0.0},
		"output":  map[string]any{"kind": "text"},
		"budget":  map[string]any{"maxContextBytes": 65536.0, "maxOutputBytes": 4096.0},
	}
	if route != nil {
		r["route"] = route
	}
	return r
}

func encode(t testing.TB, v any) string {
	b, err := canon.Encode(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func served(t *testing.T, r *Router, req Request) string {
	t.Helper()
	rec, err := r.Effect(context.Background(), req, 0)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Err != nil {
		if rec.Executor != UnboundExecutor {
			t.Fatalf("unexpected failure %+v", rec.Err)
		}
		return UnboundExecutor
	}
	return rec.Executor
}

func TestCapabilityMatrix(t *testing.T) {
	t.Parallel()
	model := &fake{id: "model", desc: Descriptor{Effects: ModelEffects}}
	decision := &fake{id: "jev", desc: Descriptor{Effects: DecisionEffects}}
	index := &fake{id: "recall", desc: Descriptor{Effects: IndexEffects}}
	legacy := &fake{id: "legacy"} // undeclared
	command := &fake{id: "cmd", desc: Descriptor{Effects: AllEffects, NoRetry: true}}
	gate := &fake{id: "approvals", desc: Descriptor{Effects: GateEffects}}
	kinds := []string{KindAgent, KindClassifier, KindGate, KindDecide, KindRecall}
	cases := []struct {
		ex   Executor
		want map[string]bool
	}{
		{model, map[string]bool{KindAgent: true, KindClassifier: true}},
		{decision, map[string]bool{KindClassifier: true, KindDecide: true}},
		{index, map[string]bool{KindRecall: true}},
		{legacy, map[string]bool{KindAgent: true, KindClassifier: true}},
		{command, map[string]bool{KindAgent: true, KindClassifier: true, KindGate: true, KindDecide: true, KindRecall: true}},
		{gate, map[string]bool{KindGate: true}},
	}
	for _, c := range cases {
		r := NewRouter(c.ex)
		for _, k := range kinds {
			got := served(t, r, request("c", k, nil))
			want := UnboundExecutor
			if c.want[k] {
				want = c.ex.ID()
			}
			if got != want {
				t.Errorf("%s serving %s: got %s want %s", c.ex.ID(), k, got, want)
			}
			// a route naming the executor does not widen its authority
			got = served(t, r, request("c", k, map[string]any{"provider": c.ex.ID()}))
			if got != want {
				t.Errorf("%s routed %s: got %s want %s", c.ex.ID(), k, got, want)
			}
		}
	}
}

func TestScriptedServesEveryKindAndWildcard(t *testing.T) {
	t.Parallel()
	s, _ := NewScripted("scripted", map[string]any{"c": "x"})
	r := NewRouter(s)
	for _, k := range []string{KindAgent, KindClassifier, KindGate, KindDecide, KindRecall} {
		if got := served(t, r, request("c", k, map[string]any{"preset": "frontier"})); got != "scripted" {
			t.Errorf("%s: %s", k, got)
		}
	}
}

func TestRouteSelection(t *testing.T) {
	t.Parallel()
	cheap := &fake{id: "cheap", desc: Descriptor{Effects: ModelEffects}}
	frontier := &fake{id: "preset:frontier", desc: Descriptor{Effects: ModelEffects}}
	jev := &fake{id: "provider:jev", desc: Descriptor{Effects: DecisionEffects}}
	script, _ := NewScripted("scripted", map[string]any{"c": "s"})
	cases := []struct {
		name  string
		execs []Executor
		kind  string
		route map[string]any
		want  string
	}{
		{"default is first admitting the kind", []Executor{jev, cheap}, KindAgent, nil, "cheap"},
		{"order decides the default", []Executor{cheap, frontier}, KindAgent, nil, "cheap"},
		{"preset matches preset:<v>", []Executor{cheap, frontier}, KindAgent, map[string]any{"preset": "frontier"}, "preset:frontier"},
		{"provider matches provider:<v>", []Executor{cheap, jev}, KindDecide, map[string]any{"provider": "jev"}, "provider:jev"},
		{"provider matches bare id", []Executor{frontier, cheap}, KindAgent, map[string]any{"provider": "cheap"}, "cheap"},
		{"named executor without the kind is unbound, no fallback", []Executor{cheap, script}, KindDecide, map[string]any{"provider": "cheap"}, UnboundExecutor},
		{"route miss falls to the scripted wildcard", []Executor{cheap, script}, KindAgent, map[string]any{"provider": "nobody"}, "scripted"},
		{"route miss without a wildcard is unbound", []Executor{cheap, frontier}, KindAgent, map[string]any{"provider": "nobody"}, UnboundExecutor},
		{"no executor at all", nil, KindAgent, nil, UnboundExecutor},
		{"gate never reaches a model", []Executor{cheap, jev}, KindGate, nil, UnboundExecutor},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := served(t, NewRouter(c.execs...), request("c", c.kind, c.route)); got != c.want {
				t.Fatalf("got %s want %s", got, c.want)
			}
		})
	}
}

func TestUnboundRecordExact(t *testing.T) {
	t.Parallel()
	req := request("route", KindAgent, nil)
	rec, err := NewRouter().Effect(context.Background(), req, 0)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := canon.Digest(req)
	want := `{"error":{"code":"EFFECT_UNBOUND","message":"no host-admitted executor for this request"},"executor":"unbound","requestDigest":"` + d + `","retryable":false}`
	if got := encode(t, rec.Value()); got != want {
		t.Fatalf("got %s\nwant %s", got, want)
	}
	if !strings.Contains(rec.Diagnostic, `cell "route"`) {
		t.Fatalf("diagnostic %q", rec.Diagnostic)
	}
}

func TestRecordShapes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	req := request("c", KindAgent, nil)
	d, _ := canon.Digest(req)
	cfg, _ := canon.Digest("config")

	live := &fake{id: "live", desc: Descriptor{Effects: ModelEffects, NoRetry: true, ConfigurationDigest: cfg}, out: map[string]any{"v": 1.0}}
	rec, _ := NewRouter(live).Effect(ctx, req, 0)
	want := `{"configurationDigest":"` + cfg + `","executor":"live","output":{"v":1},"requestDigest":"` + d + `","retryable":false}`
	if got := encode(t, rec.Value()); got != want {
		t.Fatalf("live: %s", got)
	}

	flaky := &fake{id: "flaky", err: Errorf(fault.EffectFailed, "boom")}
	rec, _ = NewRouter(flaky).Effect(ctx, req, 0)
	if got := encode(t, rec.Value()); got != `{"error":{"code":"EFFECT_FAILED","message":"boom"},"executor":"flaky","requestDigest":"`+d+`"}` {
		t.Fatalf("retryable failure: %s", got)
	}

	uncertain := &fake{id: "u", err: &fault.Error{Code: fault.EffectFailed, Message: "lost", Uncertain: true}}
	rec, _ = NewRouter(uncertain).Effect(ctx, req, 0)
	if !rec.NotRetryable {
		t.Fatal("uncertain failures must forbid retry")
	}

	wake := []any{"handle-1"}
	susp := &fake{id: "s", err: &fault.Error{Code: fault.EffectSuspended, Message: "later", Wake: wake}}
	rec, _ = NewRouter(susp).Effect(ctx, req, 0)
	if got := encode(t, rec.Value()); got != `{"error":{"code":"EFFECT_SUSPENDED","message":"later"},"executor":"s","requestDigest":"`+d+`","retryable":false,"wake":["handle-1"]}` {
		t.Fatalf("suspended: %s", got)
	}

	plain := &fake{id: "plain", err: errors.New(strings.Repeat("é", 2000))}
	rec, _ = NewRouter(plain).Effect(ctx, req, 0)
	if rec.Err.Code != fault.EffectFailed || len(rec.Err.Message) > MaxErrorMessage || !strings.HasPrefix(rec.Err.Message, "é") || strings.ToValidUTF8(rec.Err.Message, "") != rec.Err.Message {
		t.Fatalf("plain error bounded badly: %d bytes", len(rec.Err.Message))
	}

	host := &fake{id: "h", err: &fault.Error{Code: fault.IOFailed, Message: "disk", Host: true}}
	if _, err := NewRouter(host).Effect(ctx, req, 0); fault.CodeOf(err) != fault.IOFailed {
		t.Fatalf("host fault must abort: %v", err)
	}
}

type slow struct{ fake }

func (s *slow) Execute(ctx context.Context, _ Request) (Response, error) {
	<-ctx.Done()
	return Response{}, ctx.Err()
}

func TestMaxEffectTimeout(t *testing.T) {
	t.Parallel()
	ex := &slow{fake{id: "slow"}}
	start := time.Now()
	rec, err := NewRouter(ex).Effect(context.Background(), request("c", KindAgent, nil), 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Err == nil || rec.Err.Code != fault.BudgetExhausted || !rec.NotRetryable {
		t.Fatalf("timeout record %+v", rec.Value())
	}
	if time.Since(start) > 5*time.Second {
		t.Fatal("timeout not enforced")
	}
}

// admitter serves exactly the cells it names, whatever the kind.
type admitter struct {
	fake
	cells map[string]bool
}

func (a *admitter) Serves(req Request) bool { return a.cells[cellOf(req)] }

func TestRequestAwareAdmissionFirst(t *testing.T) {
	t.Parallel()
	a := &admitter{fake: fake{id: "special"}, cells: map[string]bool{"x": true}}
	model := &fake{id: "model", desc: Descriptor{Effects: ModelEffects}}
	r := NewRouter(model, a)
	if got := served(t, r, request("x", KindGate, nil)); got != "special" {
		t.Fatalf("admitted request went to %s", got)
	}
	if got := served(t, r, request("y", KindAgent, nil)); got != "model" {
		t.Fatalf("non-admitted request went to %s", got)
	}
	// an admitter is never a capability route
	if got := served(t, NewRouter(a), request("y", KindAgent, nil)); got != UnboundExecutor {
		t.Fatalf("admitter used as route: %s", got)
	}
}

func TestReplayBeforeRouting(t *testing.T) {
	t.Parallel()
	req := request("c", KindAgent, nil)
	d, _ := canon.Digest(req)
	replay := NewReplay([]Record{{RequestDigest: d, Executor: "vercel:m", Output: "recorded", Usage: map[string]any{"tokensIn": 3.0}}})
	live := &fake{id: "live", desc: Descriptor{Effects: ModelEffects}}
	r := NewRouter(live, replay) // position does not matter: replay is asked first
	rec, _ := r.Effect(context.Background(), req, 0)
	if rec.Output != "recorded" || rec.Executor != "vercel:m" || live.calls != 0 {
		t.Fatalf("replay not consulted first: %+v calls=%d", rec.Value(), live.calls)
	}
	rec, _ = r.Effect(context.Background(), req, 0)
	if rec.Output != "live" || live.calls != 1 {
		t.Fatalf("exhausted replay must fall through live: %+v", rec.Value())
	}
}

func TestParseRecordRoundTrip(t *testing.T) {
	t.Parallel()
	d, _ := canon.Digest("r")
	cfg, _ := canon.Digest("c")
	good := []string{
		`{"executor":"scripted","output":null,"requestDigest":"` + d + `"}`,
		`{"cached":true,"executor":"vercel:m","output":"x","requestDigest":"` + d + `","usage":{"model":"m","tokensIn":1,"tokensOut":2}}`,
		`{"configurationDigest":"` + cfg + `","error":{"code":"EFFECT_SUSPENDED","message":"m"},"executor":"cmd","requestDigest":"` + d + `","retryable":false,"wake":["h"]}`,
	}
	for _, g := range good {
		v, _ := canon.Parse([]byte(g), 0)
		rec, err := ParseRecord(v)
		if err != nil {
			t.Fatalf("%s: %v", g, err)
		}
		if got := encode(t, rec.Value()); got != g {
			t.Fatalf("round trip %s\n got %s", g, got)
		}
	}
	bad := []string{
		`{"executor":"e","requestDigest":"` + d + `"}`,
		`{"executor":"e","output":1,"error":{"code":"X","message":""},"requestDigest":"` + d + `"}`,
		`{"executor":"e","output":1,"requestDigest":"` + d + `","cached":false}`,
		`{"executor":"e","output":1,"requestDigest":"` + d + `","retryable":true}`,
		`{"executor":"e","output":1,"requestDigest":"` + d + `","model":"m"}`,
		`{"executor":"e","output":1,"requestDigest":"` + d + `","wake":[]}`,
		`{"executor":"e","output":1,"requestDigest":"nope"}`,
		`{"output":1,"requestDigest":"` + d + `"}`,
		`{"executor":"e","output":1,"requestDigest":"` + d + `","usage":{"tokensIn":1.5}}`,
	}
	for _, b := range bad {
		v, _ := canon.Parse([]byte(b), 0)
		if _, err := ParseRecord(v); fault.CodeOf(err) != fault.Parse {
			t.Errorf("accepted %s (%v)", b, err)
		}
	}
}

// EffectDigested with the request's own digest answers as Effect does:
// served, replayed from a record and unbound alike.
func TestEffectDigestedIsEffect(t *testing.T) {
	t.Parallel()
	req := request("classify", "classifier", nil)
	d, err := RequestDigest(req)
	if err != nil {
		t.Fatal(err)
	}
	recorded := Record{RequestDigest: d, Executor: "recorded", Output: "bug"}
	for _, tc := range []struct {
		name   string
		router func() *Router
	}{
		{"served", func() *Router { return NewRouter(&fake{id: "m", desc: Descriptor{Effects: []string{"classifier"}}}) }},
		{"replayed", func() *Router { return NewRouter(NewReplay([]Record{recorded})) }},
		{"unbound", func() *Router { return NewRouter() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			want, err := tc.router().Effect(context.Background(), req, 0)
			if err != nil {
				t.Fatal(err)
			}
			got, err := tc.router().EffectDigested(context.Background(), req, d, 0)
			if err != nil {
				t.Fatal(err)
			}
			if encode(t, got.Value()) != encode(t, want.Value()) || got.RequestDigest != d {
				t.Fatalf("EffectDigested: %s, Effect: %s", encode(t, got.Value()), encode(t, want.Value()))
			}
		})
	}
}
