package bench

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/evidence"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/fault/faulttest"
	"github.com/algal-assay/assay/engine/internal/reporttest"
	"github.com/algal-assay/assay/engine/manifest"
)

const routeManifest = `{"contract":"algal.organism.v1","key":"organism:%s","name":"route",
 "interface":{"inputs":{"ticket":{"cell":"ticket","port":"text"}},"outputs":{"out":{"cell":"route","port":"out"}}},
 "cells":[{"id":"ticket","kind":"input","outputs":{"text":"text"}},
  {"id":"route","kind":"classifier","inputs":{"ticket":"text"},"prompt":"Route the ticket.",
   "output":{"kind":"choice","labels":["billing","technical","other"]}}],
 "edges":[{"from":{"cell":"ticket","port":"text"},"to":{"cell":"route","port":"ticket"}}]}`

func mustManifest(t testing.TB, key string) *manifest.Manifest {
	t.Helper()
	m, err := manifest.Parse([]byte(fmt.Sprintf(routeManifest, key)))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// answerer decides a fake system's label and token use for a ticket.
type answerer func(ticket string) (label string, tokensIn, tokensOut int64, model string)

// fakeRunner stands in for the VM: each case yields a receipt whose shape
// follows algal.run.v1 closely enough for the measurement layer, stored by
// digest so verification can find it.
type fakeRunner struct {
	mu       sync.Mutex
	receipts map[string]map[string]any
	answers  map[string]answerer
	ordered  map[string]bool
	jitter   bool
	// running and peak count the cases in flight.
	running, peak int
}

func newFakeRunner() *fakeRunner {
	return &fakeRunner{receipts: map[string]map[string]any{}, answers: map[string]answerer{}, ordered: map[string]bool{}}
}

type fakeSession struct {
	r  *fakeRunner
	id string
	m  *manifest.Manifest
}

// Open keys the fake system by its single executor's spec, "cmd:<id>".
func (f *fakeRunner) Open(_ context.Context, m *manifest.Manifest, execs map[string]string) (evidence.Session, error) {
	return &fakeSession{f, execs["x"][len("cmd:"):], m}, nil
}

func (s *fakeSession) Ordered() bool { return s.r.ordered[s.id] }

func (s *fakeSession) Run(_ context.Context, args map[string]any) (map[string]any, string, error) {
	s.r.mu.Lock()
	s.r.running++
	s.r.peak = max(s.r.peak, s.r.running)
	s.r.mu.Unlock()
	defer func() {
		s.r.mu.Lock()
		s.r.running--
		s.r.mu.Unlock()
	}()
	if s.r.jitter {
		time.Sleep(time.Duration(rand.IntN(300)) * time.Microsecond)
	}
	ticket := args["ticket"].(map[string]any)["text"].(string)
	label, tin, tout, model := s.r.answers[s.id](ticket)
	usage := map[string]any{"tokensIn": float64(tin), "tokensOut": float64(tout)}
	if model != "" {
		usage["model"] = model
	}
	receipt := map[string]any{
		"contract": "algal.run.v1", "manifestDigest": s.m.Digest, "manifestKey": s.m.Key,
		"args": args, "outcome": "complete",
		"cells": map[string]any{
			"ticket": map[string]any{"status": "committed", "work": 100.0, "outputs": map[string]any{"text": ticket}},
			"route":  map[string]any{"status": "committed", "work": 700.0, "outputs": map[string]any{"out": label}},
		},
		"effects": []any{map[string]any{"requestDigest": "sha256:" + strings.Repeat("a", 64), "executor": s.id, "output": label, "usage": usage}},
		"work":    map[string]any{"steps": 2.0, "agentCalls": 1.0, "units": 800.0},
	}
	d, err := canon.Digest(receipt)
	if err != nil {
		return nil, "", err
	}
	s.r.mu.Lock()
	s.r.receipts[d] = receipt
	s.r.mu.Unlock()
	return receipt, d, nil
}

// fakeEvidence serves the runner's receipts and the config's manifests.
type fakeEvidence struct {
	r         *fakeRunner
	manifests map[string]*manifest.Manifest
}

func (e *fakeEvidence) Manifest(d string) (*manifest.Manifest, error) {
	if m, ok := e.manifests[d]; ok {
		return m, nil
	}
	return nil, fmt.Errorf("manifest %s not in the store", d)
}

func (e *fakeEvidence) Receipt(d string) (map[string]any, error) {
	if r, ok := e.r.receipts[d]; ok {
		return r, nil
	}
	return nil, fmt.Errorf("receipt %s not in the store", d)
}

func (e *fakeEvidence) Replay(context.Context, map[string]any, *manifest.Manifest) ([]string, error) {
	return nil, nil
}

var tickets = []struct{ id, text, want string }{
	{"t1", "charged twice", "billing"},
	{"t2", "app crashes", "technical"},
	{"t3", "refund please", "billing"},
	{"t4", "invoice wrong after update", "technical"},
}

// cheap gets t4 wrong with few tokens; frontier is right with many; a
// third system is right but spends more than frontier on every axis.
func fixture(t testing.TB) (*Config, *fakeRunner, *fakeEvidence) {
	t.Helper()
	m := mustManifest(t, "route")
	cfg := &Config{}
	for _, tk := range tickets {
		cfg.Cases = append(cfg.Cases, Case{ID: tk.id, Args: map[string]any{"ticket": tk.text}, Expect: map[string]any{"out": tk.want}})
	}
	truth := map[string]string{}
	for _, tk := range tickets {
		truth[tk.text] = tk.want
	}
	r := newFakeRunner()
	r.answers["cheap"] = func(ticket string) (string, int64, int64, string) {
		if strings.Contains(ticket, "invoice") {
			return "billing", 10, 2, "small-1"
		}
		return truth[ticket], 10, 2, "small-1"
	}
	r.answers["frontier"] = func(ticket string) (string, int64, int64, string) { return truth[ticket], 100, 20, "large-1" }
	r.answers["wasteful"] = func(ticket string) (string, int64, int64, string) { return truth[ticket], 300, 20, "" }
	for _, id := range []string{"cheap", "frontier", "wasteful"} {
		cfg.Systems = append(cfg.Systems, System{ID: id, Manifest: m, Executors: map[string]string{"x": "cmd:" + id}})
	}
	ev := &fakeEvidence{r: r, manifests: map[string]*manifest.Manifest{m.Digest: m}}
	return cfg, r, ev
}

func TestRunReportAndPareto(t *testing.T) {
	t.Parallel()
	cfg, r, ev := fixture(t)
	rep, err := Run(context.Background(), cfg, r, Options{Concurrency: 2})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range rep.Systems {
		got[s.ID] = fmt.Sprintf("%d/%d calls=%d tokens=%d", s.Passed, s.Total, s.EffectCalls, s.Usage.TokensIn+s.Usage.TokensOut)
	}
	want := map[string]string{"cheap": "3/4 calls=4 tokens=48", "frontier": "4/4 calls=4 tokens=480", "wasteful": "4/4 calls=4 tokens=1280"}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: got %s want %s", k, got[k], w)
		}
	}
	if strings.Join(rep.Pareto, ",") != "frontier,cheap" {
		t.Errorf("pareto %v, want [frontier cheap]", rep.Pareto)
	}
	if a := rep.Systems[0].Attribution["small-1"]; a.Calls != 4 || a.TokensIn != 40 {
		t.Errorf("attribution by model: %+v", rep.Systems[0].Attribution)
	}
	if a := rep.Systems[2].Attribution["wasteful"]; a.Calls != 4 {
		t.Errorf("attribution falls back to executor: %+v", rep.Systems[2].Attribution)
	}
	res, err := Verify(context.Background(), rep.Value(), ev)
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK || res.CheckedReceipts != 12 {
		t.Fatalf("verify: %+v", res)
	}
}

func TestPricesChangeTheCostSignal(t *testing.T) {
	t.Parallel()
	cfg, r, ev := fixture(t)
	// large-1 is cheap per token here: frontier now beats cheap on cost.
	cfg.Prices = map[string]Price{"small-1": {Input: 1000, Output: 1000}, "large-1": {Input: 1, Output: 1}}
	rep, err := Run(context.Background(), cfg, r, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(rep.Pareto, ",") != "wasteful" {
		t.Errorf("pareto %v, want [wasteful]: with no price entry its effects cost nothing", rep.Pareto)
	}
	if c := rep.Systems[0].Usage.Cost; c != 4*(10*1000+2*1000)/1e6 {
		t.Errorf("cheap cost %v", c)
	}
	if res, err := Verify(context.Background(), rep.Value(), ev); err != nil || !res.OK {
		t.Fatalf("verify: %+v %v", res, err)
	}
}

func TestParetoTable(t *testing.T) {
	t.Parallel()
	sys := func(id string, passed, tokens, calls int64) SystemResult {
		return SystemResult{ID: id, Passed: passed, Usage: Tally{TokensIn: tokens}, EffectCalls: calls}
	}
	for _, tc := range []struct {
		name    string
		systems []SystemResult
		want    string
	}{
		{"one dominates", []SystemResult{sys("a", 4, 10, 1), sys("b", 3, 20, 2)}, "a"},
		{"trade-off keeps both", []SystemResult{sys("a", 4, 100, 1), sys("b", 3, 10, 1)}, "a,b"},
		{"exact tie keeps both, by id", []SystemResult{sys("b", 4, 10, 1), sys("a", 4, 10, 1)}, "a,b"},
		{"calls break dominance", []SystemResult{sys("a", 4, 10, 2), sys("b", 4, 10, 1)}, "b"},
		{"order by passed then cost", []SystemResult{sys("x", 1, 1, 1), sys("y", 2, 5, 1), sys("z", 3, 9, 1)}, "z,y,x"},
	} {
		if got := strings.Join(Pareto(tc.systems, nil, nil), ","); got != tc.want {
			t.Errorf("%s: got %s want %s", tc.name, got, tc.want)
		}
	}
}

// DominatedBy names every system that dominates another and the criteria
// on which it is strictly better, so a report can say why a system is off
// the Pareto set.
func TestDominatedBy(t *testing.T) {
	t.Parallel()
	sys := func(id string, passed, tokens, calls int64) SystemResult {
		return SystemResult{ID: id, Passed: passed, Usage: Tally{TokensIn: tokens}, EffectCalls: calls}
	}
	r := &Report{Systems: []SystemResult{sys("cheap", 4, 10, 1), sys("big", 3, 20, 1), sys("mid", 4, 15, 1), sys("wide", 2, 5, 9)}}
	r.Pareto = Pareto(r.Systems, nil, nil)
	for _, tc := range []struct{ id, want string }{
		{"big", "cheap:passed+tokens mid:passed+tokens"},
		{"mid", "cheap:tokens"},
		{"cheap", ""},
		{"wide", ""},
		{"nobody", ""},
	} {
		var parts []string
		for _, d := range r.DominatedBy(tc.id) {
			parts = append(parts, d.By+":"+strings.Join(d.Better, "+"))
		}
		if got := strings.Join(parts, " "); got != tc.want {
			t.Errorf("%s: dominated by %q, want %q", tc.id, got, tc.want)
		}
		if onSet := slices.Contains(r.Pareto, tc.id); onSet && tc.want != "" {
			t.Errorf("%s is on the Pareto set %v yet dominated", tc.id, r.Pareto)
		}
	}
	names := func(r *Report) string {
		var s []string
		for _, c := range r.Criteria() {
			s = append(s, fmt.Sprintf("%s/%v", c.Name, c.Up))
		}
		return strings.Join(s, ",")
	}
	if got := names(r); got != "passed/true,tokens/false,calls/false" {
		t.Errorf("criteria without prices: %s", got)
	}
	r.Prices = map[string]Price{}
	if got := names(r); got != "passed/true,cost/false,calls/false" {
		t.Errorf("criteria with prices: %s", got)
	}
	r.Axes = []Axis{{Name: "speed", Dir: "up"}}
	if got := names(r); got != "speed/true" {
		t.Errorf("declared axes: %s", got)
	}
}

func TestConcurrencyDoesNotChangeTheReport(t *testing.T) {
	t.Parallel()
	reporttest.SameAtEveryConcurrency(t, []int{1, 4, 32}, func(n int) ([]byte, error) {
		cfg, r, _ := fixture(t)
		r.jitter = true
		r.ordered["cheap"] = true
		rep, err := Run(context.Background(), cfg, r, Options{Concurrency: n})
		if err != nil {
			return nil, err
		}
		return rep.Encode()
	})
}

func TestOrderedSessionsRunInCaseOrder(t *testing.T) {
	t.Parallel()
	cfg, r, _ := fixture(t)
	r.jitter = true
	r.ordered["cheap"] = true
	var mu sync.Mutex
	var order []string
	_, err := Run(context.Background(), cfg, r, Options{Concurrency: 8, OnCase: func(sys, c string) {
		if sys == "cheap" {
			mu.Lock()
			order = append(order, c)
			mu.Unlock()
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(order, ",") != "t1,t2,t3,t4" {
		t.Errorf("ordered system ran %v", order)
	}
}

func TestScorerAndAxes(t *testing.T) {
	t.Parallel()
	cfg, r, ev := fixture(t)
	var err error
	cfg.Scorer, err = evidence.CompileScorer(map[string]any{"contract": "algal.expr.v1", "program": []any{"eq", []any{"get", "outputs", "out"}, []any{"get", "expect", "out"}}}, "scorer")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Axes, err = parseAxes([]any{
		map[string]any{"name": "quality", "dir": "up", "expr": map[string]any{"contract": "algal.expr.v1", "program": []any{"get", "passed"}}},
		map[string]any{"name": "tokens", "dir": "down", "expr": map[string]any{"contract": "algal.expr.v1", "program": []any{"add", []any{"get", "usage", "tokensIn"}, []any{"get", "usage", "tokensOut"}}}},
	}, "axes")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(context.Background(), cfg, r, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if v := rep.Systems[1].AxisValues; v["quality"] != 4 || v["tokens"] != 480 {
		t.Errorf("axis values %v", v)
	}
	if strings.Join(rep.Pareto, ",") != "frontier,cheap" {
		t.Errorf("pareto %v", rep.Pareto)
	}
	if res, err := Verify(context.Background(), rep.Value(), ev); err != nil || !res.OK {
		t.Fatalf("verify: %+v %v", res, err)
	}

	// A scorer returning a number is a config bug that aborts the bench.
	cfg.Scorer, _ = evidence.CompileScorer(map[string]any{"contract": "algal.expr.v1", "program": 1.0}, "scorer")
	_, err = Run(context.Background(), cfg, r, Options{})
	faulttest.Want(t, err, fault.ScorerInvalid)

	// An axis reading an unknown name fails at admission.
	_, err = parseAxes([]any{map[string]any{"name": "x", "dir": "up", "expr": map[string]any{"contract": "algal.expr.v1", "program": []any{"get", "latency"}}}}, "axes")
	faulttest.Want(t, err, fault.AxisInvalid)
	// An axis that divides by zero fails when evaluated.
	cfg.Scorer = nil
	cfg.Axes, _ = parseAxes([]any{map[string]any{"name": "x", "dir": "up", "expr": map[string]any{"contract": "algal.expr.v1", "program": []any{"div", 1.0, 0.0}}}}, "axes")
	_, err = Run(context.Background(), cfg, r, Options{})
	faulttest.Want(t, err, fault.AxisInvalid)
}

// TestForgeryIsCaught alters one claim at a time, recomputes the report
// digest so only the claim itself can betray the forgery, and expects
// verification to name it.
func TestForgeryIsCaught(t *testing.T) {
	t.Parallel()
	cfg, r, ev := fixture(t)
	cfg.Axes, _ = parseAxes([]any{map[string]any{"name": "quality", "dir": "up", "expr": map[string]any{"contract": "algal.expr.v1", "program": []any{"get", "passed"}}}}, "axes")
	rep, err := Run(context.Background(), cfg, r, Options{})
	if err != nil {
		t.Fatal(err)
	}
	otherReceipt := rep.Systems[1].Cases[0].ReceiptDigest
	for _, tc := range []struct {
		name, want string
		forge      func(v map[string]any)
	}{
		{"pass claim", "systems[cheap].cases[t4].passed", func(v map[string]any) { caseOf(v, 0, 3)["passed"] = true }},
		{"aggregate", "systems[cheap].passed", func(v map[string]any) { sysOf(v, 0)["passed"] = 4.0 }},
		{"pareto", "pareto", func(v map[string]any) { v["pareto"] = []any{"cheap"} }},
		{"axis value", "systems[frontier].axisValues.quality", func(v map[string]any) { sysOf(v, 1)["axisValues"].(map[string]any)["quality"] = 9.0 }},
		{"receipt digest", "systems[cheap].cases[t1]", func(v map[string]any) { caseOf(v, 0, 0)["receiptDigest"] = otherReceipt }},
		{"outputs", "systems[cheap].cases[t4].outputs", func(v map[string]any) {
			c := caseOf(v, 0, 3)
			c["outputs"] = map[string]any{"out": "technical"}
			c["passed"] = true
		}},
		{"tokens", "systems[frontier].cases[t2].usage", func(v map[string]any) {
			caseOf(v, 1, 1)["usage"].(map[string]any)["tokensIn"] = 1.0
		}},
		{"workload", "workload", func(v map[string]any) { v["workload"] = "sha256:" + strings.Repeat("0", 64) }},
		{"expectation", "systems[cheap].cases[t1].expect", func(v map[string]any) { caseOf(v, 0, 0)["expect"] = map[string]any{"out": "other"} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := canon.Clone(rep.Value()).(map[string]any)
			tc.forge(v)
			delete(v, "digest")
			d, _ := canon.Digest(v)
			v["digest"] = d
			res, err := Verify(context.Background(), v, ev)
			reporttest.Caught(t, res, err, tc.want, strings.HasPrefix)
		})
	}
	// Without recomputing the digest, the digest itself is the first
	// mismatch.
	v := canon.Clone(rep.Value()).(map[string]any)
	sysOf(v, 0)["effectCalls"] = 1.0
	res, _ := Verify(context.Background(), v, ev)
	if res.OK || !strings.HasPrefix(res.Mismatches[0], "digest:") {
		t.Errorf("stale digest not reported first: %q", res.Mismatches)
	}
}

func TestParseReportRejects(t *testing.T) {
	t.Parallel()
	cfg, r, _ := fixture(t)
	rep, err := Run(context.Background(), cfg, r, Options{})
	if err != nil {
		t.Fatal(err)
	}
	rejects := reporttest.ParseRejects(t, rep.Value(), ParseReport)
	rejects("unknown top key", "report", func(v map[string]any) { v["extra"] = 1.0 })
	rejects("unknown case key", "systems[0].cases[0]", func(v map[string]any) { caseOf(v, 0, 0)["note"] = "x" })
	rejects("negative count", "systems[0].effectCalls", func(v map[string]any) { sysOf(v, 0)["effectCalls"] = -1.0 })
	rejects("fractional count", "systems[0].work.units", func(v map[string]any) { sysOf(v, 0)["work"].(map[string]any)["units"] = 1.5 })
	rejects("suspended outcome", "systems[0].cases[0].outcome", func(v map[string]any) { caseOf(v, 0, 0)["outcome"] = "suspended" })
	rejects("bad digest", "systems[0].cases[0].receiptDigest", func(v map[string]any) { caseOf(v, 0, 0)["receiptDigest"] = "sha256:abc" })
	rejects("axis values without axes", "systems[0]", func(v map[string]any) { sysOf(v, 0)["axisValues"] = map[string]any{} })
	rejects("pareto names unknown", "pareto[0]", func(v map[string]any) { v["pareto"] = []any{"nobody"} })
	rejects("too many systems", "systems", func(v map[string]any) {
		l := v["systems"].([]any)
		for len(l) <= MaxSystems {
			l = append(l, l[0])
		}
		v["systems"] = l
	})
}

func TestParseConfigRejects(t *testing.T) {
	t.Parallel()
	m := mustManifest(t, "route")
	load := func(string) (*manifest.Manifest, error) { return m, nil }
	base := func() map[string]any {
		return map[string]any{
			"contract": ConfigContract,
			"cases":    []any{map[string]any{"id": "t1", "args": map[string]any{"ticket": "x"}, "expect": map[string]any{"out": "billing"}}},
			"systems":  []any{map[string]any{"id": "s", "manifest": "m.json", "executors": map[string]any{"x": "scripted:r.json"}}},
		}
	}
	if cfg, err := ParseConfig(base(), "/cfg", load); err != nil {
		t.Fatal(err)
	} else if got := cfg.Systems[0].Executors["x"]; got != "scripted:/cfg/r.json" {
		t.Errorf("spec path not resolved: %s", got)
	}
	for _, tc := range []struct {
		name, field, code string
		edit              func(v map[string]any)
	}{
		{"contract", "contract", fault.Parse, func(v map[string]any) { v["contract"] = "algal.bench.v1" }},
		{"unknown key", "config", fault.Parse, func(v map[string]any) { v["budget"] = 1.0 }},
		{"no cases", "cases", fault.Parse, func(v map[string]any) { v["cases"] = []any{} }},
		{"bad case id", "cases[0].id", fault.Parse, func(v map[string]any) { v["cases"].([]any)[0].(map[string]any)["id"] = "T1" }},
		{"unknown input", "cases[t1].args", fault.Parse, func(v map[string]any) {
			v["cases"].([]any)[0].(map[string]any)["args"] = map[string]any{"body": "x"}
		}},
		{"missing expected output", "cases[t1].expect", fault.Parse, func(v map[string]any) {
			v["cases"].([]any)[0].(map[string]any)["expect"] = map[string]any{}
		}},
		{"bad spec", "systems[0].executors", fault.Parse, func(v map[string]any) {
			v["systems"].([]any)[0].(map[string]any)["executors"] = map[string]any{"x": "anthropic:claude"}
		}},
		{"negative price", "prices", fault.Parse, func(v map[string]any) {
			v["prices"] = map[string]any{"m": map[string]any{"input": -1.0, "output": 0.0}}
		}},
		{"scorer name", "scorer.program", fault.ScorerInvalid, func(v map[string]any) {
			v["scorer"] = map[string]any{"contract": "algal.expr.v1", "program": []any{"get", "receipt"}}
		}},
		{"axis dir", "axes[0].dir", fault.Parse, func(v map[string]any) {
			v["axes"] = []any{map[string]any{"name": "a", "dir": "sideways", "expr": map[string]any{"contract": "algal.expr.v1", "program": 1.0}}}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := base()
			tc.edit(v)
			_, err := ParseConfig(v, "/cfg", load)
			faulttest.Want(t, err, tc.code)
			if !strings.HasPrefix(err.Error(), tc.field) {
				t.Fatalf("want a rejection at %s, got %v", tc.field, err)
			}
		})
	}
}

func sysOf(v map[string]any, i int) map[string]any { return v["systems"].([]any)[i].(map[string]any) }

func caseOf(v map[string]any, si, ci int) map[string]any {
	return sysOf(v, si)["cases"].([]any)[ci].(map[string]any)
}

func TestInspect(t *testing.T) {
	t.Parallel()
	cfg, r, _ := fixture(t)
	rep, err := Run(context.Background(), cfg, r, Options{})
	if err != nil {
		t.Fatal(err)
	}
	out := Inspect(rep)
	for _, want := range []string{"pareto axes: passed ↑, total tokens ↓, effect calls ↓", "frontier  4/4", "#1", "t4: passed by frontier, wasteful; failed by cheap", "scorer: exact match"} {
		if !strings.Contains(out, want) {
			t.Errorf("inspect output lacks %q:\n%s", want, out)
		}
	}
}

// replayFails is fakeEvidence whose replay of the named receipts fails.
type replayFails struct {
	*fakeEvidence
	fail map[string]error
}

func (e replayFails) Replay(_ context.Context, rec map[string]any, _ *manifest.Manifest) ([]string, error) {
	d, _ := canon.Digest(rec)
	return nil, e.fail[d]
}

// Verify checks cases on a pool of one worker per CPU: a report forged in
// several systems and cases verifies to the same mismatches, in report
// order, with one worker or eight, and a failing replay is the
// lowest-placed one however the workers finish.
func TestVerifyIsTheSameWhateverTheConcurrency(t *testing.T) {
	cfg, r, ev := fixture(t)
	rep, err := Run(context.Background(), cfg, r, Options{})
	if err != nil {
		t.Fatal(err)
	}
	v := canon.Clone(rep.Value()).(map[string]any)
	caseOf(v, 0, 3)["passed"] = true
	caseOf(v, 1, 1)["usage"].(map[string]any)["tokensIn"] = 1.0
	caseOf(v, 2, 0)["receiptDigest"] = rep.Systems[1].Cases[0].ReceiptDigest
	sysOf(v, 2)["passed"] = 1.0
	delete(v, "digest")
	d, _ := canon.Digest(v)
	v["digest"] = d
	var want []string
	for _, procs := range []int{1, 8, 1, 8} {
		prev := runtime.GOMAXPROCS(procs)
		res, err := Verify(context.Background(), v, ev)
		runtime.GOMAXPROCS(prev)
		if err != nil {
			t.Fatal(err)
		}
		if want == nil {
			want = res.Mismatches
			if len(want) < 4 || !strings.HasPrefix(want[0], "systems[cheap].passed") || !strings.HasPrefix(want[len(want)-1], "systems[wasteful].cases") {
				t.Fatalf("mismatches not in report order: %q", want)
			}
			continue
		}
		if !slices.Equal(res.Mismatches, want) {
			t.Fatalf("GOMAXPROCS %d: mismatches\n%q\nwant\n%q", procs, res.Mismatches, want)
		}
	}

	first, second := errors.New("replay of frontier t2 failed"), errors.New("replay of wasteful t4 failed")
	failing := replayFails{ev, map[string]error{}}
	for _, c := range []struct {
		si, ci int
		err    error
	}{{1, 1, first}, {2, 3, second}} {
		d, _ := canon.Digest(r.receipts[rep.Systems[c.si].Cases[c.ci].ReceiptDigest])
		failing.fail[d] = c.err
	}
	for range 20 {
		if _, err := Verify(context.Background(), rep.Value(), failing); !errors.Is(err, first) {
			t.Fatalf("want the lowest-placed failure %v, got %v", first, err)
		}
	}
}
