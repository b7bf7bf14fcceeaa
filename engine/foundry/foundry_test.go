package foundry

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
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

const candidateManifest = `{"contract":"algal.organism.v1","key":"organism:%s","name":"candidate",
 "budgets":{"maxAgentCalls":%d,"maxWork":%d},
 "interface":{"inputs":{"q":{"cell":"src","port":"value"}},"outputs":{"answer":{"cell":"echo","port":"value"}}},
 "cells":[{"id":"src","kind":"input","outputs":{"value":"json"}},{"id":"echo","kind":"fn","fn":"echo.v1"}],
 "edges":[{"from":{"cell":"src","port":"value"},"to":{"cell":"echo","port":"value"}}]}`

const generatorManifest = `{"contract":"algal.organism.v1","key":"organism:gen","name":"generator",
 "budgets":{"maxSteps":8,"maxAgentCalls":1,"maxWork":100000},
 "interface":{"inputs":{"task":{"cell":"src","port":"task"}},"outputs":{"candidates":{"cell":"writer","port":"out"}}},
 "cells":[{"id":"src","kind":"input","outputs":{"task":"text"}},
  {"id":"writer","kind":"agent","inputs":{"task":"text"},"prompt":"Emit candidates.","view":{"inputs":["task"]},"output":{"kind":"json","schema":{"type":"array"}}}],
 "edges":[{"from":{"cell":"src","port":"task"},"to":{"cell":"writer","port":"task"}}]}`

func candidateValue(t testing.TB, key string) map[string]any {
	t.Helper()
	v, err := canon.Parse([]byte(fmt.Sprintf(candidateManifest, key, 16, 1_000_000)), 0)
	if err != nil {
		t.Fatal(err)
	}
	return v.(map[string]any)
}

func mustParse(t testing.TB, src string) *manifest.Manifest {
	t.Helper()
	m, err := manifest.Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func candidate(t testing.TB, key string) *manifest.Manifest {
	return mustParse(t, fmt.Sprintf(candidateManifest, key, 16, 1_000_000))
}

// behavior is how a fake candidate answers: its answer to q, what each
// run costs, and its outcome.
type behavior struct {
	answer          func(q string) any
	calls, units    int64
	tokIn, tokOut   int64
	fail            bool
	ordered         bool
	emitted         any // generator only: its interface output value
	generatorFailed bool
}

func echo(q string) any { return q }

// fakeRunner stands in for the VM. Receipts follow algal.run.v1 closely
// enough for the measurement layer and are stored by digest; Open stores
// the manifest, as the real runner admits it to the store.
type fakeRunner struct {
	mu        sync.Mutex
	receipts  map[string]map[string]any
	manifests map[string]*manifest.Manifest
	behave    map[string]*behavior // by manifest key
	runs      map[string]int       // "key q" -> runs
	execs     map[string]map[string]string
	jitter    bool
	replayBad map[string]bool // receipt digests whose replay diverges
}

func newFakeRunner() *fakeRunner {
	return &fakeRunner{
		receipts: map[string]map[string]any{}, manifests: map[string]*manifest.Manifest{},
		behave: map[string]*behavior{}, runs: map[string]int{}, execs: map[string]map[string]string{},
		replayBad: map[string]bool{},
	}
}

type fakeSession struct {
	f *fakeRunner
	m *manifest.Manifest
	b *behavior
}

func (f *fakeRunner) Open(_ context.Context, m *manifest.Manifest, execs map[string]string) (evidence.Session, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	b, ok := f.behave[m.Key]
	if !ok {
		return nil, fmt.Errorf("no behavior for %s", m.Key)
	}
	f.manifests[m.Digest] = m
	f.execs[m.Key] = execs
	return &fakeSession{f, m, b}, nil
}

func (s *fakeSession) Ordered() bool { return s.b.ordered }

func (s *fakeSession) Run(_ context.Context, args map[string]any) (map[string]any, string, error) {
	if s.f.jitter {
		time.Sleep(time.Duration(rand.IntN(300)) * time.Microsecond)
	}
	var cells map[string]any
	outcome := "complete"
	var q string
	if s.b.emitted != nil || s.b.generatorFailed {
		task := args["src"].(map[string]any)["task"]
		cells = map[string]any{
			"src":    map[string]any{"status": "committed", "outputs": map[string]any{"task": task}},
			"writer": map[string]any{"status": "committed", "outputs": map[string]any{"out": s.b.emitted}},
		}
		if s.b.generatorFailed {
			outcome = "failed"
			cells["writer"] = map[string]any{"status": "failed"}
		}
	} else {
		q, _ = args["src"].(map[string]any)["value"].(string)
		echoRec := map[string]any{"status": "committed", "outputs": map[string]any{"value": s.b.answer(q)}}
		if s.b.fail {
			outcome = "failed"
			echoRec = map[string]any{"status": "failed"}
		}
		cells = map[string]any{
			"src":  map[string]any{"status": "committed", "outputs": map[string]any{"value": q}},
			"echo": echoRec,
		}
	}
	effects := []any{}
	for i := int64(0); i < s.b.calls; i++ {
		effects = append(effects, map[string]any{"executor": "x", "usage": map[string]any{"tokensIn": float64(s.b.tokIn), "tokensOut": float64(s.b.tokOut)}})
	}
	receipt := map[string]any{
		"contract": "algal.run.v1", "manifestDigest": s.m.Digest, "manifestKey": s.m.Key,
		"args": args, "outcome": outcome, "cells": cells, "effects": effects,
		"work": map[string]any{"steps": 2.0, "agentCalls": float64(s.b.calls), "units": float64(s.b.units)},
	}
	d, err := canon.Digest(receipt)
	if err != nil {
		return nil, "", err
	}
	s.f.mu.Lock()
	s.f.receipts[d] = receipt
	s.f.runs[s.m.Key+" "+q]++
	s.f.mu.Unlock()
	return receipt, d, nil
}

func (f *fakeRunner) Manifest(d string) (*manifest.Manifest, error) {
	if m, ok := f.manifests[d]; ok {
		return m, nil
	}
	return nil, fmt.Errorf("manifest %s not in the store", d)
}

func (f *fakeRunner) Receipt(d string) (map[string]any, error) {
	if r, ok := f.receipts[d]; ok {
		return r, nil
	}
	return nil, fmt.Errorf("receipt %s not in the store", d)
}

func (f *fakeRunner) Replay(_ context.Context, receipt map[string]any, m *manifest.Manifest) ([]string, error) {
	d, _ := canon.Digest(receipt)
	if f.replayBad[d] {
		return []string{"outcome: complete vs failed"}, nil
	}
	return nil, nil
}

// workload: two train, two validation, one holdout case; every q is
// distinct so runs can be counted per split.
var workload = []Case{
	{ID: "train-a", Split: SplitTrain, Args: map[string]any{"q": "alpha"}, Expect: map[string]any{"answer": "alpha"}},
	{ID: "train-b", Split: SplitTrain, Args: map[string]any{"q": "beta"}, Expect: map[string]any{"answer": "beta"}},
	{ID: "val-c", Split: SplitValidation, Args: map[string]any{"q": "gamma"}, Expect: map[string]any{"answer": "gamma"}},
	{ID: "val-d", Split: SplitValidation, Args: map[string]any{"q": "delta"}, Expect: map[string]any{"answer": "delta"}},
	{ID: "hold-e", Split: SplitHoldout, Args: map[string]any{"q": "eps"}, Expect: map[string]any{"answer": "eps"}},
}

var splitOf = map[string]string{"alpha": SplitTrain, "beta": SplitTrain, "gamma": SplitValidation, "delta": SplitValidation, "eps": SplitHoldout}

// wrongOn answers correctly except for the listed inputs.
func wrongOn(qs ...string) func(string) any {
	return func(q string) any {
		if slices.Contains(qs, q) {
			return "nope"
		}
		return q
	}
}

type spec struct {
	key string
	b   behavior
}

func fixture(t testing.TB, specs ...spec) (*Config, *fakeRunner) {
	t.Helper()
	f := newFakeRunner()
	cfg := &Config{Cases: workload, Executors: map[string]string{"x": "cmd:true"}}
	for _, s := range specs {
		b := s.b
		if b.answer == nil {
			b.answer = echo
		}
		f.behave["organism:"+s.key] = &b
		cfg.Candidates = append(cfg.Candidates, candidate(t, s.key))
	}
	return cfg, f
}

func run(t testing.TB, cfg *Config, f *fakeRunner, opts Options) *Report {
	t.Helper()
	res, err := Run(context.Background(), cfg, f, opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Report == nil {
		t.Fatalf("no report; exhausted account %v", res.Exhausted.Value())
	}
	return res.Report
}

func digestOf(t testing.TB, key string) string { return candidate(t, key).Digest }

func TestPromotionEndToEnd(t *testing.T) {
	t.Parallel()
	cfg, f := fixture(t,
		spec{"low-val", behavior{answer: wrongOn("gamma"), calls: 1, units: 100}},
		spec{"low-train", behavior{answer: wrongOn("alpha"), calls: 1, units: 100}},
		spec{"more-calls", behavior{calls: 2, units: 100}},
		spec{"more-units", behavior{calls: 1, units: 200}},
		spec{"best", behavior{calls: 1, units: 100}},
		spec{"twin", behavior{calls: 1, units: 100}},
	)
	rep := run(t, cfg, f, Options{Concurrency: 4})
	// best and twin tie on everything but the digest.
	want := min(digestOf(t, "best"), digestOf(t, "twin"))
	if rep.Promoted != want {
		t.Fatalf("promoted %s, want %s", rep.Promoted, want)
	}
	var keys []string
	for _, i := range Rank(rep.Candidates) {
		keys = append(keys, strings.TrimPrefix(rep.Candidates[i].ManifestKey, "organism:"))
	}
	tied := "best,twin"
	if want == digestOf(t, "twin") {
		tied = "twin,best"
	}
	if got := strings.Join(keys, ","); got != tied+",more-units,more-calls,low-train,low-val" {
		t.Errorf("rank %s", got)
	}
	out := Inspect(rep)
	for _, s := range []string{"digest order", "tie on rates and agent calls; fewer work units 400 < 800", "tie on rates; fewer agent calls 4 < 8", "tie on validation; train 2/2 > 1/2", "validation 2/2 > 1/2", "last place", "holdout 1/1"} {
		if !strings.Contains(out, s) {
			t.Errorf("inspect lacks %q:\n%s", s, out)
		}
	}
	v, err := Verify(context.Background(), rep.Value(), f)
	if err != nil {
		t.Fatal(err)
	}
	if !v.OK || v.CheckedReceipts != 6*4+1 {
		t.Fatalf("verify: %+v", v)
	}
}

func TestTieBreaks(t *testing.T) {
	t.Parallel()
	c := func(d string, vp, tp, calls, units int64) CandidateResult {
		return CandidateResult{ManifestDigest: "sha256:" + strings.Repeat(d, 64), Validation: Score{vp, 4}, Train: Score{tp, 4},
			Work: Work{AgentCalls: calls, Units: units}}
	}
	for _, tc := range []struct {
		name    string
		a, b    CandidateResult
		winner  string
		decided string
		by      string
	}{
		{"validation rate", c("b", 3, 0, 9, 9), c("a", 2, 4, 0, 0), "b", "validation 3/4 > 2/4", "validation"},
		{"train rate", c("b", 2, 3, 9, 9), c("a", 2, 2, 0, 0), "b", "tie on validation; train 3/4 > 2/4", "train"},
		{"agent calls", c("b", 2, 2, 4, 9), c("a", 2, 2, 6, 0), "b", "tie on rates; fewer agent calls 4 < 6", "agent calls"},
		{"work units", c("b", 2, 2, 4, 10), c("a", 2, 2, 4, 20), "b", "tie on rates and agent calls; fewer work units 10 < 20", "work units"},
		{"one work unit", c("b", 2, 2, 4, 10), c("a", 2, 2, 4, 11), "b", "tie on rates and agent calls; fewer work units 10 < 11", "work units"},
		{"digest", c("b", 2, 2, 4, 10), c("a", 2, 2, 4, 10), "a", "digest order", "digest"},
		{"equal rates, different totals", CandidateResult{ManifestDigest: "sha256:" + strings.Repeat("b", 64), Validation: Score{1, 2}, Train: Score{1, 1}},
			CandidateResult{ManifestDigest: "sha256:" + strings.Repeat("a", 64), Validation: Score{2, 4}, Train: Score{1, 1}, Work: Work{AgentCalls: 1}}, "b", "tie on rates; fewer agent calls 0 < 1", "agent calls"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, pop := range [][]CandidateResult{{tc.a, tc.b}, {tc.b, tc.a}} {
				got := Promote(pop)
				if got[len("sha256:")] != tc.winner[0] {
					t.Errorf("promoted %s, want %s", got, tc.winner)
				}
				i := Rank(pop)
				if d := Decided(&pop[i[0]], &pop[i[1]]); d != tc.decided {
					t.Errorf("decided %q, want %q", d, tc.decided)
				}
				if by := Decider(&pop[i[0]], &pop[i[1]]).String(); by != tc.by {
					t.Errorf("decider %q, want %q", by, tc.by)
				}
			}
		})
	}
}

func TestHoldoutRunsOnlyOnTheWinner(t *testing.T) {
	t.Parallel()
	for _, ordered := range []bool{false, true} {
		cfg, f := fixture(t,
			spec{"weak", behavior{answer: wrongOn("gamma", "delta"), ordered: ordered}},
			spec{"strong", behavior{ordered: ordered}},
			spec{"middle", behavior{answer: wrongOn("delta"), ordered: ordered}},
		)
		rep := run(t, cfg, f, Options{Concurrency: 3})
		if rep.Promoted != digestOf(t, "strong") {
			t.Fatalf("promoted %s", rep.Promoted)
		}
		perSplit := map[string]int{}
		for k, n := range f.runs {
			key, q, _ := strings.Cut(k, " ")
			perSplit[key+" "+splitOf[q]] += n
		}
		want := map[string]int{
			"organism:weak train": 2, "organism:weak validation": 2,
			"organism:strong train": 2, "organism:strong validation": 2, "organism:strong holdout": 1,
			"organism:middle train": 2, "organism:middle validation": 2,
		}
		if fmt.Sprint(perSplit) != fmt.Sprint(want) {
			t.Errorf("ordered=%v runs per split %v, want %v", ordered, perSplit, want)
		}
		for _, c := range rep.Candidates {
			for _, cs := range c.Cases {
				if cs.Split == SplitHoldout {
					t.Errorf("%s records a holdout case", c.ManifestKey)
				}
			}
		}
		if rep.Holdout.Total != 1 || rep.Holdout.Passed != 1 {
			t.Errorf("holdout %+v", rep.Holdout.Score)
		}
	}
}

func TestConcurrencyDoesNotChangeTheReport(t *testing.T) {
	t.Parallel()
	reporttest.SameAtEveryConcurrency(t, []int{1, 4, 32}, func(n int) ([]byte, error) {
		cfg, f := fixture(t,
			spec{"one", behavior{answer: wrongOn("beta"), calls: 2, units: 50, tokIn: 7, tokOut: 3}},
			spec{"two", behavior{ordered: true, calls: 1, units: 900, tokIn: 100, tokOut: 1}},
			spec{"three", behavior{fail: true}},
		)
		f.jitter = true
		return run(t, cfg, f, Options{Concurrency: n}).Encode()
	})
}

func TestOrderedSessionKeepsCaseOrder(t *testing.T) {
	t.Parallel()
	cfg, f := fixture(t, spec{"a", behavior{ordered: true}}, spec{"b", behavior{answer: wrongOn("gamma")}})
	f.jitter = true
	var mu sync.Mutex
	var order []string
	run(t, cfg, f, Options{Concurrency: 8, OnRun: func(key, id, _ string) {
		if key == "organism:a" {
			mu.Lock()
			order = append(order, id)
			mu.Unlock()
		}
	}})
	if got := strings.Join(order, ","); got != "train-a,train-b,val-c,val-d,hold-e" {
		t.Errorf("ordered candidate ran %s", got)
	}
}

func TestReportShapeAndUsage(t *testing.T) {
	t.Parallel()
	cfg, f := fixture(t, spec{"a", behavior{calls: 2, units: 10, tokIn: 5, tokOut: 1}})
	rep := run(t, cfg, f, Options{})
	v := rep.Value()
	c := v["candidates"].([]any)[0].(map[string]any)
	if got := limitsText(c["usage"].(map[string]any)); got != `{"tokensIn":40,"tokensOut":8}` {
		t.Errorf("usage %s (no cost, summed over 4 selection cases)", got)
	}
	if got := limitsText(c["work"].(map[string]any)); got != `{"agentCalls":8,"steps":8,"units":40}` {
		t.Errorf("work %s", got)
	}
	cs := c["cases"].([]any)[0].(map[string]any)
	keys := canon.SortedKeys(cs)
	if strings.Join(keys, ",") != "args,expect,id,outcome,outputs,passed,receiptDigest,split,usage,work" {
		t.Errorf("case keys %v", keys)
	}
	for _, k := range []string{"scorer", "lineage", "budget"} {
		if _, ok := v[k]; ok {
			t.Errorf("report carries %s without being configured", k)
		}
	}
	if f.execs["organism:a"]["x"] != "cmd:true" {
		t.Errorf("candidate executors not passed: %v", f.execs)
	}
}

func TestScorer(t *testing.T) {
	t.Parallel()
	cfg, f := fixture(t, spec{"a", behavior{answer: func(q string) any { return strings.ToUpper(q) }}}, spec{"b", behavior{}})
	var err error
	cfg.Scorer, err = evidence.CompileScorer(map[string]any{"contract": "algal.expr.v1",
		"program": []any{"eq", []any{"get", "outputs", "answer"}, []any{"get", "args", "q"}}}, "scorer")
	if err != nil {
		t.Fatal(err)
	}
	rep := run(t, cfg, f, Options{})
	if rep.Candidates[0].Validation.Passed != 0 || rep.Candidates[1].Validation.Passed != 2 {
		t.Errorf("scores %+v %+v", rep.Candidates[0].Validation, rep.Candidates[1].Validation)
	}
	if res, err := Verify(context.Background(), rep.Value(), f); err != nil || !res.OK {
		t.Fatalf("verify %+v %v", res, err)
	}
	cfg.Scorer, _ = evidence.CompileScorer(map[string]any{"contract": "algal.expr.v1", "program": 1.0}, "scorer")
	_, err = Run(context.Background(), cfg, f, Options{})
	faulttest.Want(t, err, fault.ScorerInvalid)
}

func generatorFixture(t testing.TB, emitted any, field string) (*Config, *fakeRunner) {
	t.Helper()
	cfg, f := fixture(t)
	g := mustParse(t, generatorManifest)
	f.behave[g.Key] = &behavior{emitted: emitted, calls: 1, units: 700}
	for _, k := range []string{"gen-one", "gen-two", "gen-three"} {
		f.behave["organism:"+k] = &behavior{answer: echo}
	}
	f.behave["organism:gen-two"].answer = wrongOn("gamma")
	cfg.Generator = &Generator{Manifest: g, Args: map[string]any{"task": "echo"}, Output: "candidates", Field: field,
		Executors: map[string]string{"writer": "scripted:/r.json"}}
	return cfg, f
}

func TestGeneratorPopulation(t *testing.T) {
	t.Parallel()
	one, two := candidateValue(t, "gen-one"), candidateValue(t, "gen-two")
	invalid := map[string]any{"contract": "algal.organism.v1", "key": "organism:broken", "cells": "nope"}
	incompatible := candidateValue(t, "gen-three")
	incompatible["interface"] = map[string]any{"inputs": map[string]any{"x": map[string]any{"cell": "src", "port": "value"}}, "outputs": map[string]any{"answer": map[string]any{"cell": "echo", "port": "value"}}}
	many := []any{}
	for i := 0; i <= MaxCandidates; i++ {
		many = append(many, candidateValue(t, fmt.Sprintf("gen-%d", i)))
	}
	for _, tc := range []struct {
		name    string
		emitted any
		field   string
		code    string // "" for success
		at      string
	}{
		{"valid list", []any{one, two}, "", "", ""},
		{"under field", map[string]any{"candidates": []any{one, two}}, "candidates", "", ""},
		{"field missing", map[string]any{"other": []any{one}}, "candidates", fault.Parse, "generator.field"},
		{"object without field", map[string]any{"candidates": []any{one}}, "", fault.Parse, "generator.output"},
		{"invalid member", []any{one, invalid}, "", fault.Parse, "generator.output[1]"},
		{"duplicate", []any{one, two, one}, "", fault.Parse, "generator.output[2]"},
		{"over bound", many, "", fault.BudgetExhausted, "generator.output"},
		{"empty", []any{}, "", fault.Parse, "generator.output"},
		{"incompatible interface", []any{one, incompatible}, "", fault.Parse, "generator.output[1]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, f := generatorFixture(t, tc.emitted, tc.field)
			res, err := Run(context.Background(), cfg, f, Options{})
			if tc.code != "" {
				faulttest.Want(t, err, tc.code)
				if !strings.HasPrefix(err.Error(), tc.at) {
					t.Errorf("error %q not at %s", err, tc.at)
				}
				if len(f.runs) != 1 {
					t.Errorf("candidates ran before the population was admitted: %v", f.runs)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			rep := res.Report
			g := cfg.Generator.Manifest
			if rep.Lineage == nil || rep.Lineage.GeneratorDigest != g.Digest {
				t.Fatalf("lineage %+v", rep.Lineage)
			}
			if len(rep.Candidates) != 2 || rep.Promoted != digestOf(t, "gen-one") {
				t.Errorf("population %d, promoted %s", len(rep.Candidates), rep.Promoted)
			}
			if f.execs[g.Key]["writer"] != "scripted:/r.json" || f.execs["organism:gen-one"]["x"] != "cmd:true" {
				t.Errorf("executors %v", f.execs)
			}
			v, err := Verify(context.Background(), rep.Value(), f)
			if err != nil {
				t.Fatal(err)
			}
			// 1 generator + 2 candidates x 4 selection cases + 1 holdout.
			if !v.OK || v.CheckedReceipts != 10 {
				t.Fatalf("verify %+v", v)
			}
		})
	}
	t.Run("file duplicate", func(t *testing.T) {
		cfg, f := generatorFixture(t, []any{one}, "")
		cfg.Candidates = []*manifest.Manifest{candidate(t, "gen-one")}
		_, err := Run(context.Background(), cfg, f, Options{})
		faulttest.Want(t, err, fault.Parse)
	})
	t.Run("generator failed", func(t *testing.T) {
		cfg, f := generatorFixture(t, nil, "")
		f.behave["organism:gen"].generatorFailed = true
		_, err := Run(context.Background(), cfg, f, Options{})
		faulttest.Want(t, err, fault.Parse)
	})
}

func configValue(cases []any, extra map[string]any) map[string]any {
	v := map[string]any{"contract": ConfigContract, "candidates": []any{"a.json", "b.json"}, "cases": cases}
	for k, x := range extra {
		v[k] = x
	}
	return v
}

func caseValue(id, split, q string) any {
	return map[string]any{"id": id, "split": split, "args": map[string]any{"q": q}, "expect": map[string]any{"answer": q}}
}

func loader(t testing.TB) ManifestLoader {
	ms := map[string]*manifest.Manifest{"/cfg/a.json": candidate(t, "a"), "/cfg/b.json": candidate(t, "b"),
		"/cfg/a2.json": candidate(t, "a"), "/cfg/gen.json": mustParse(t, generatorManifest)}
	return func(path string) (*manifest.Manifest, error) {
		if m, ok := ms[path]; ok {
			return m, nil
		}
		return nil, fmt.Errorf("no manifest at %s", path)
	}
}

func baseCases() []any {
	return []any{caseValue("t1", "train", "a"), caseValue("v1", "validation", "b"), caseValue("h1", "holdout", "c")}
}

func TestLeakage(t *testing.T) {
	t.Parallel()
	leaky := []any{caseValue("t1", "train", "a"), caseValue("v1", "validation", "b"), caseValue("h1", "holdout", "a"),
		caseValue("t2", "train", "a"), caseValue("h2", "holdout", "a")}
	cfg, err := ParseConfig(configValue(leaky, nil), "/cfg", loader(t), AdmitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Warnings) != 1 || !strings.Contains(cfg.Warnings[0], `"t1" (train) and "h1" (holdout)`) {
		t.Errorf("warnings %q", cfg.Warnings)
	}
	_, err = ParseConfig(configValue(leaky, nil), "/cfg", loader(t), AdmitOptions{StrictSplits: true})
	faulttest.Want(t, err, fault.Parse)
	if !strings.HasPrefix(err.Error(), "cases[h1].args") {
		t.Errorf("strict error %v", err)
	}
	// Same args within one split are not leakage.
	clean := append(baseCases(), caseValue("t2", "train", "a"))
	cfg, err = ParseConfig(configValue(clean, nil), "/cfg", loader(t), AdmitOptions{StrictSplits: true})
	if err != nil || len(cfg.Warnings) != 0 {
		t.Errorf("clean config: %v %q", err, cfg.Warnings)
	}
}

func TestParseConfig(t *testing.T) {
	t.Parallel()
	cfg, err := ParseConfig(configValue(baseCases(), map[string]any{
		"executors": map[string]any{"x": "scripted:r.json"},
		"budget":    map[string]any{"work": 10.0, "attempts": 2.0, "runs": 3.0},
		"generator": map[string]any{"manifest": "gen.json", "args": map[string]any{"task": "t"}, "output": "candidates", "field": "candidates"},
	}), "/cfg", loader(t), AdmitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Executors["x"] != "scripted:/cfg/r.json" || *cfg.Budget != (Limits{10, 2, 3}) || cfg.Generator.Field != "candidates" || len(cfg.Candidates) != 2 {
		t.Errorf("admitted %+v", cfg)
	}
	for _, tc := range []struct {
		name, at, code string
		v              map[string]any
	}{
		{"search", "search", fault.Parse, configValue(baseCases(), map[string]any{"search": map[string]any{"maxGenerations": 2.0}})},
		{"unknown key", "config", fault.Parse, configValue(baseCases(), map[string]any{"prices": map[string]any{}})},
		{"contract", "contract", fault.Parse, configValue(baseCases(), map[string]any{"contract": "algal.bench.config.v1"})},
		{"no source", "config", fault.Parse, configValue(baseCases(), map[string]any{"candidates": []any{}})},
		{"duplicate candidate", "candidates[1]", fault.Parse, configValue(baseCases(), map[string]any{"candidates": []any{"a.json", "a2.json"}})},
		{"missing split", "cases", fault.Parse, configValue(baseCases()[:2], nil)},
		{"bad split", "cases[0].split", fault.Parse, configValue([]any{map[string]any{"id": "x", "split": "test", "args": map[string]any{}, "expect": map[string]any{}}}, nil)},
		{"duplicate id", "cases[3].id", fault.Parse, configValue(append(baseCases(), caseValue("t1", "train", "z")), nil)},
		{"unknown input", "candidates[0]", fault.Parse, configValue([]any{caseValue("t1", "train", "a"), caseValue("v1", "validation", "b"),
			map[string]any{"id": "h1", "split": "holdout", "args": map[string]any{"zz": 1.0}, "expect": map[string]any{"answer": 1.0}}}, nil)},
		{"missing expected output", "candidates[0]", fault.Parse, configValue([]any{caseValue("t1", "train", "a"), caseValue("v1", "validation", "b"),
			map[string]any{"id": "h1", "split": "holdout", "args": map[string]any{}, "expect": map[string]any{}}}, nil)},
		{"too many cases", "cases", fault.BudgetExhausted, configValue(func() []any {
			l := baseCases()
			for i := 0; len(l) <= MaxCases; i++ {
				l = append(l, caseValue(fmt.Sprintf("x%d", i), "train", "a"))
			}
			return l
		}(), nil)},
		{"bad executor", "executors", fault.Parse, configValue(baseCases(), map[string]any{"executors": map[string]any{"x": "anthropic:m"}})},
		{"budget key", "budget", fault.Parse, configValue(baseCases(), map[string]any{"budget": map[string]any{"work": 1.0, "attempts": 1.0}})},
		{"budget bound", "budget.runs", fault.Parse, configValue(baseCases(), map[string]any{"budget": map[string]any{"work": 1.0, "attempts": 1.0, "runs": 5000.0}})},
		{"scorer", "scorer.program", fault.ScorerInvalid, configValue(baseCases(), map[string]any{"scorer": map[string]any{"contract": "algal.expr.v1", "program": []any{"get", "receipt"}}})},
		{"generator output", "generator.output", fault.Parse, configValue(baseCases(), map[string]any{"generator": map[string]any{"manifest": "gen.json", "args": map[string]any{}, "output": "nope"}})},
		{"generator args", "generator.args", fault.Parse, configValue(baseCases(), map[string]any{"generator": map[string]any{"manifest": "gen.json", "args": map[string]any{"x": 1.0}, "output": "candidates"}})},
		{"generator key", "generator", fault.Parse, configValue(baseCases(), map[string]any{"generator": map[string]any{"manifest": "gen.json", "args": map[string]any{}, "output": "candidates", "seed": 1.0}})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseConfig(tc.v, "/cfg", loader(t), AdmitOptions{})
			faulttest.Want(t, err, tc.code)
			if !strings.HasPrefix(err.Error(), tc.at) {
				t.Errorf("want a rejection at %s, got %v", tc.at, err)
			}
		})
	}
}

func sampleReport(t *testing.T) (*Report, *fakeRunner) {
	cfg, f := fixture(t,
		spec{"weak", behavior{answer: wrongOn("gamma"), calls: 1, units: 10}},
		spec{"strong", behavior{calls: 1, units: 10}},
	)
	cfg.Budget = &Limits{Work: 1_000_000_000, Attempts: 1000, Runs: 100}
	return run(t, cfg, f, Options{}), f
}

func reseal(v map[string]any) {
	delete(v, "digest")
	d, _ := canon.Digest(v)
	v["digest"] = d
}

func candOf(v map[string]any, i int) map[string]any {
	return v["candidates"].([]any)[i].(map[string]any)
}

func caseOf(v map[string]any, ci, k int) map[string]any {
	return candOf(v, ci)["cases"].([]any)[k].(map[string]any)
}

func holdOf(v map[string]any, k int) map[string]any {
	return v["holdout"].(map[string]any)["cases"].([]any)[k].(map[string]any)
}

// TestForgeryIsCaught alters one claim at a time, recomputes the report
// digest so only the claim itself can betray the forgery, and expects
// verification to name it.
func TestForgeryIsCaught(t *testing.T) {
	t.Parallel()
	rep, f := sampleReport(t)
	weak, strong := rep.Candidates[0].ManifestDigest, rep.Candidates[1].ManifestDigest
	if res, err := Verify(context.Background(), rep.Value(), f); err != nil || !res.OK || res.CheckedReceipts != 9 {
		t.Fatalf("honest report: %+v %v", res, err)
	}
	for _, tc := range []struct {
		name, want string
		forge      func(v map[string]any)
		store      func()
	}{
		{"pass claim", "candidates[" + weak + "].cases[val-c].passed: claimed true", func(v map[string]any) { caseOf(v, 0, 2)["passed"] = true }, nil},
		{"aggregate", "candidates[" + weak + "].validation: claimed 2/2, its cases give 1/2", func(v map[string]any) {
			candOf(v, 0)["validation"].(map[string]any)["passed"] = 2.0
		}, nil},
		{"work aggregate", "candidates[" + strong + "].work", func(v map[string]any) { candOf(v, 1)["work"].(map[string]any)["units"] = 1.0 }, nil},
		{"promoted digest", "promoted: claimed " + weak, func(v map[string]any) { v["promoted"] = weak }, nil},
		{"holdout outputs", "holdout.cases[hold-e].outputs", func(v map[string]any) {
			holdOf(v, 0)["outputs"] = map[string]any{"answer": "x"}
			holdOf(v, 0)["passed"] = false
		}, nil},
		{"holdout score", "holdout: claimed 0/1", func(v map[string]any) { v["holdout"].(map[string]any)["passed"] = 0.0 }, nil},
		{"holdout on a loser", "holdout.cases[hold-e].receiptDigest: receipt", func(v map[string]any) {
			holdOf(v, 0)["receiptDigest"] = caseOf(v, 0, 0)["receiptDigest"]
		}, nil},
		{"holdout leaked into selection", "candidates[" + weak + "].cases[hold-e].split", func(v map[string]any) {
			c := candOf(v, 0)
			c["cases"] = append(c["cases"].([]any), holdOf(v, 0))
		}, nil},
		{"receipt digest", "candidates[" + strong + "].cases[train-a].args", func(v map[string]any) {
			caseOf(v, 1, 0)["receiptDigest"] = caseOf(v, 1, 1)["receiptDigest"]
		}, nil},
		{"missing receipt", "candidates[" + strong + "].cases[train-a].receiptDigest", func(v map[string]any) {
			caseOf(v, 1, 0)["receiptDigest"] = "sha256:" + strings.Repeat("0", 64)
		}, nil},
		{"tokens", "candidates[" + strong + "].cases[val-d].usage", func(v map[string]any) {
			caseOf(v, 1, 3)["usage"].(map[string]any)["tokensIn"] = 5.0
			candOf(v, 1)["usage"].(map[string]any)["tokensIn"] = 5.0
		}, nil},
		{"workload differs", "candidates[" + strong + "].cases[val-c]", func(v map[string]any) {
			caseOf(v, 1, 2)["expect"] = map[string]any{"answer": "x"}
			caseOf(v, 1, 2)["passed"] = false
		}, nil},
		{"budget binding", "budget.runs[0]", func(v map[string]any) {
			runs := v["budget"].(map[string]any)["runs"].([]any)
			runs[0], runs[1] = runs[1], runs[0]
		}, nil},
		{"replay", "candidates[" + weak + "].cases[train-b]: replay:", func(map[string]any) {}, func() {
			f.replayBad[rep.Candidates[0].Cases[1].ReceiptDigest] = true
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer clear(f.replayBad)
			if tc.store != nil {
				tc.store()
			}
			v := canon.Clone(rep.Value()).(map[string]any)
			tc.forge(v)
			reseal(v)
			res, err := Verify(context.Background(), v, f)
			reporttest.Caught(t, res, err, tc.want, strings.HasPrefix)
		})
	}
	v := canon.Clone(rep.Value()).(map[string]any)
	candOf(v, 0)["manifestKey"] = "organism:other"
	res, _ := Verify(context.Background(), v, f)
	if res.OK || !strings.HasPrefix(res.Mismatches[0], "digest:") {
		t.Errorf("stale digest not reported first: %q", res.Mismatches)
	}
}

func TestParseReportRejects(t *testing.T) {
	t.Parallel()
	rep, _ := sampleReport(t)
	rejects := reporttest.ParseRejects(t, rep.Value(), ParseReport)
	rejects("unknown top key", "report", func(v map[string]any) { v["extra"] = 1.0 })
	rejects("missing key", "report", func(v map[string]any) { delete(v, "holdout") })
	rejects("unknown case key", "candidates[0].cases[0]", func(v map[string]any) { caseOf(v, 0, 0)["effectCalls"] = 1.0 })
	rejects("cost in usage", "candidates[0].usage", func(v map[string]any) { candOf(v, 0)["usage"].(map[string]any)["cost"] = 0.0 })
	rejects("zero total", "candidates[0].train", func(v map[string]any) { candOf(v, 0)["train"] = map[string]any{"passed": 0.0, "total": 0.0} })
	rejects("passed over total", "holdout", func(v map[string]any) { v["holdout"].(map[string]any)["passed"] = 2.0 })
	rejects("count bound", "candidates[0].work.units", func(v map[string]any) { candOf(v, 0)["work"].(map[string]any)["units"] = 5e9 })
	rejects("split", "holdout.cases[0].split", func(v map[string]any) { holdOf(v, 0)["split"] = "test" })
	rejects("suspended", "candidates[0].cases[0].outcome", func(v map[string]any) { caseOf(v, 0, 0)["outcome"] = "suspended" })
	rejects("promoted", "promoted", func(v map[string]any) { v["promoted"] = "organism:x" })
	rejects("lineage", "lineage", func(v map[string]any) { v["lineage"] = map[string]any{"generatorDigest": v["promoted"]} })
	rejects("budget arithmetic", "budget.charged", func(v map[string]any) {
		v["budget"].(map[string]any)["charged"].(map[string]any)["work"] = 1.0
	})
	rejects("too many candidates", "candidates", func(v map[string]any) {
		l := v["candidates"].([]any)
		for len(l) <= MaxCandidates {
			l = append(l, l[0])
		}
		v["candidates"] = l
	})
}

func TestBudgetCompleteAccount(t *testing.T) {
	t.Parallel()
	rep, f := sampleReport(t)
	a := rep.Budget
	if a == nil || a.Refused != nil || a.Charged != (Limits{Work: 90, Attempts: 9, Runs: 9}) || len(a.Runs) != 9 {
		t.Fatalf("account %v", a.Value())
	}
	if a.Runs[0].Ceiling != (Ceiling{Work: 1_000_000, Attempts: 16}) {
		t.Errorf("ceiling %+v", a.Runs[0].Ceiling)
	}
	if a.Runs[8].Manifest != rep.Promoted || a.Runs[8].Receipt != rep.Holdout.Cases[0].ReceiptDigest {
		t.Errorf("last charged run is not the holdout: %+v", a.Runs[8])
	}
	if !strings.Contains(Inspect(rep), "budget: 90/1000000000 work, 9/1000 attempts, 9/100 runs charged") {
		t.Errorf("inspect: %s", Inspect(rep))
	}
	// With a budget everything runs one at a time, so concurrency cannot
	// change the account either.
	cfg, f2 := fixture(t, spec{"weak", behavior{answer: wrongOn("gamma"), calls: 1, units: 10}}, spec{"strong", behavior{calls: 1, units: 10}})
	cfg.Budget = &Limits{Work: 1_000_000_000, Attempts: 1000, Runs: 100}
	f2.jitter = true
	b1, _ := rep.Encode()
	b2, _ := run(t, cfg, f2, Options{Concurrency: 32}).Encode()
	if !bytes.Equal(b1, b2) {
		t.Error("budgeted report depends on concurrency")
	}
	// A charge forged consistently with the totals is caught against the
	// receipt.
	v := canon.Clone(rep.Value()).(map[string]any)
	bv := v["budget"].(map[string]any)
	bv["runs"].([]any)[2].(map[string]any)["charged"].(map[string]any)["work"] = 11.0
	bv["charged"].(map[string]any)["work"] = 91.0
	reseal(v)
	res, err := Verify(context.Background(), v, f)
	if err != nil {
		t.Fatal(err)
	}
	if res.OK || !slices.ContainsFunc(res.Mismatches, func(m string) bool { return strings.HasPrefix(m, "budget.runs[2].charged") }) {
		t.Errorf("forged charge: %q", res.Mismatches)
	}
}

func TestBudgetExhaustion(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		limits  Limits
		runs    int
		reasons string
		refused string // candidate key whose reservation was refused
	}{
		// The upstream foundry-budget example: 7 runs needed, 5 allowed.
		{"runs", Limits{Work: 10_000_000, Attempts: 256, Runs: 5}, 5, "runs", "b"},
		{"work", Limits{Work: 999_999, Attempts: 256, Runs: 100}, 0, "work", "a"},
		{"attempts", Limits{Work: 10_000_000, Attempts: 17, Runs: 2}, 2, "attempts,runs", "a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, f := fixture(t, spec{"a", behavior{calls: 1, units: 100}}, spec{"b", behavior{calls: 1, units: 100}})
			cfg.Cases = []Case{workload[0], workload[1], workload[2], workload[4]}
			cfg.Budget = &tc.limits
			res, err := Run(context.Background(), cfg, f, Options{Concurrency: 8})
			if err != nil {
				t.Fatal(err)
			}
			if res.Report != nil || res.Exhausted == nil {
				t.Fatal("foundry did not stop")
			}
			a := res.Exhausted
			if len(a.Runs) != tc.runs || strings.Join(a.Refused.Reasons, ",") != tc.reasons || a.Refused.Manifest != digestOf(t, tc.refused) {
				t.Fatalf("account %s", mustEncode(t, a.Value()))
			}
			total := 0
			for _, n := range f.runs {
				total += n
			}
			if total != tc.runs {
				t.Errorf("%d runs executed, the account admitted %d", total, tc.runs)
			}
			// The exhausted account round-trips and verifies on its own.
			v, err := canon.Parse(mustEncode(t, a.Value()), 0)
			if err != nil {
				t.Fatal(err)
			}
			ver, err := VerifyFile(context.Background(), v, f)
			if err != nil {
				t.Fatal(err)
			}
			if !ver.OK || ver.Outcome != "exhausted" || ver.CheckedReceipts != tc.runs {
				t.Fatalf("verify %+v", ver)
			}
		})
	}
}

func mustEncode(t testing.TB, v any) []byte {
	t.Helper()
	b, err := canon.Encode(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestAccountVerification(t *testing.T) {
	t.Parallel()
	cfg, f := fixture(t, spec{"a", behavior{calls: 1, units: 100}}, spec{"b", behavior{calls: 1, units: 100}})
	cfg.Budget = &Limits{Work: 10_000_000, Attempts: 256, Runs: 5}
	res, err := Run(context.Background(), cfg, f, Options{})
	if err != nil {
		t.Fatal(err)
	}
	honest := res.Exhausted.Value()
	for _, tc := range []struct {
		name, want string // want: parse error field, or mismatch prefix after "!"
		forge      func(v map[string]any)
		store      func()
	}{
		{"totals", "charged", func(v map[string]any) { v["charged"].(map[string]any)["runs"] = 4.0 }, nil},
		{"reasons", "refused.reasons", func(v map[string]any) { v["refused"].(map[string]any)["reasons"] = []any{"work"} }, nil},
		{"refusal that fits", "refused.ceiling", func(v map[string]any) {
			v["limits"].(map[string]any)["runs"] = 6.0
		}, nil},
		{"admitted beyond limits", "runs", func(v map[string]any) { v["limits"].(map[string]any)["runs"] = 4.0 }, nil},
		{"complete with refusal", "refused", func(v map[string]any) { v["outcome"] = "complete" }, nil},
		{"unknown key", "account", func(v map[string]any) { v["note"] = "x" }, nil},
		{"attempts over ceiling", "runs[0].charged.attempts", func(v map[string]any) {
			v["runs"].([]any)[0].(map[string]any)["charged"].(map[string]any)["attempts"] = 17.0
		}, nil},
		{"charge", "!account.runs[1].charged", func(v map[string]any) {
			v["runs"].([]any)[1].(map[string]any)["charged"].(map[string]any)["work"] = 99.0
			v["charged"].(map[string]any)["work"] = 499.0
		}, nil},
		{"ceiling", "!account.runs[0].ceiling", func(v map[string]any) {
			v["runs"].([]any)[0].(map[string]any)["ceiling"].(map[string]any)["work"] = 5.0
		}, nil},
		{"activity", "!activity", func(v map[string]any) { v["activity"] = "search" }, nil},
		{"replay", "!account.runs[3]: replay:", func(map[string]any) {}, func() {
			f.replayBad[res.Exhausted.Runs[3].Receipt] = true
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer clear(f.replayBad)
			if tc.store != nil {
				tc.store()
			}
			v := canon.Clone(honest).(map[string]any)
			tc.forge(v)
			ver, err := VerifyAccount(context.Background(), v, f)
			if mismatch, ok := strings.CutPrefix(tc.want, "!"); ok {
				reporttest.Caught(t, ver, err, mismatch, strings.HasPrefix)
				return
			}
			reporttest.RejectedAt(t, err, tc.want)
		})
	}
}

func TestUpstreamConfigs(t *testing.T) {
	t.Parallel()
	dir := os.Getenv("ASSAY_UPSTREAM_DIR")
	if dir == "" {
		t.Skip("ASSAY_UPSTREAM_DIR unset: upstream foundry configs not available")
	}
	ex := filepath.Join(dir, "examples")
	for _, tc := range []struct {
		file       string
		candidates int
		generator  bool
		budget     *Limits
		scorer     bool
	}{
		{"foundry.config.json", 2, false, nil, false},
		{"foundry-scorer.config.json", 2, false, nil, true},
		{"foundry-budget.config.json", 2, false, &Limits{Work: 10_000_000, Attempts: 256, Runs: 5}, false},
		{"generated-foundry.config.json", 0, true, nil, false},
	} {
		t.Run(tc.file, func(t *testing.T) {
			cfg, err := LoadConfig(filepath.Join(ex, tc.file), AdmitOptions{StrictSplits: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(cfg.Candidates) != tc.candidates || (cfg.Generator != nil) != tc.generator || (cfg.Scorer != nil) != tc.scorer {
				t.Errorf("admitted %+v", cfg)
			}
			if (tc.budget == nil) != (cfg.Budget == nil) || (tc.budget != nil && *tc.budget != *cfg.Budget) {
				t.Errorf("budget %+v", cfg.Budget)
			}
			if tc.generator {
				if cfg.Generator.Output != "candidates" || cfg.Generator.Field != "candidates" {
					t.Errorf("generator %+v", cfg.Generator)
				}
				return
			}
			// The fake runner echoes through a cell named "echo", which only
			// foundry-echo has: the constant candidate commits nothing.
			f := newFakeRunner()
			f.behave["organism:foundry-echo"] = &behavior{answer: echo}
			f.behave["organism:foundry-constant"] = &behavior{answer: echo}
			res, err := Run(context.Background(), cfg, f, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if tc.budget != nil {
				// 2 candidates x 3 selection cases + 1 holdout need 7 runs.
				if res.Exhausted == nil || len(res.Exhausted.Runs) != 5 || strings.Join(res.Exhausted.Refused.Reasons, ",") != "runs" {
					t.Fatalf("budget example did not exhaust on runs: %+v", res)
				}
				return
			}
			rep := res.Report
			if rep.Promoted != cfg.Candidates[1].Digest || rep.Holdout.Passed != 1 {
				t.Errorf("promoted %s, holdout %+v", rep.Promoted, rep.Holdout.Score)
			}
			v, err := Verify(context.Background(), rep.Value(), f)
			if err != nil || !v.OK || v.CheckedReceipts != 7 {
				t.Fatalf("verify %+v %v", v, err)
			}
		})
	}
}
