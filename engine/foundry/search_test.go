package foundry

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/evidence"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/fault/faulttest"
	"github.com/algal-assay/assay/engine/internal/reporttest"
	"github.com/algal-assay/assay/engine/manifest"
)

// searchGeneratorManifest takes a task and the search feedback.
const searchGeneratorManifest = `{"contract":"algal.organism.v1","key":"organism:evolver","name":"evolver",
 "budgets":{"maxSteps":8,"maxAgentCalls":1,"maxWork":100000},
 "interface":{"inputs":{"task":{"cell":"src","port":"task"},"feedback":{"cell":"src","port":"feedback"}},
  "outputs":{"candidates":{"cell":"writer","port":"out"}}},
 "cells":[{"id":"src","kind":"input","outputs":{"task":"text","feedback":"json"}},
  {"id":"writer","kind":"agent","inputs":{"task":"text","feedback":"json"},"prompt":"Improve the population.","view":{"inputs":["task","feedback"]},"output":{"kind":"json","schema":{"type":"array"}}}],
 "edges":[{"from":{"cell":"src","port":"task"},"to":{"cell":"writer","port":"task"}},
  {"from":{"cell":"src","port":"feedback"},"to":{"cell":"writer","port":"feedback"}}]}`

// evolvingRunner serves the generator one emitted value per run, in
// order (the last one repeats), the way a scripted queue shared by the
// search's single generator session does; candidates behave as in
// fakeRunner.
type evolvingRunner struct {
	*fakeRunner
	outputs []any
	n       int
}

type evolvingSession struct {
	*fakeSession
	r *evolvingRunner
}

func (r *evolvingRunner) Open(ctx context.Context, m *manifest.Manifest, execs map[string]string) (evidence.Session, error) {
	s, err := r.fakeRunner.Open(ctx, m, execs)
	if err != nil || m.Key != "organism:evolver" {
		return s, err
	}
	return &evolvingSession{s.(*fakeSession), r}, nil
}

func (s *evolvingSession) Run(ctx context.Context, args map[string]any) (map[string]any, string, error) {
	s.b.emitted = s.r.outputs[min(s.r.n, len(s.r.outputs)-1)]
	s.r.n++
	return s.fakeSession.Run(ctx, args)
}

// searchFixture: generation 0 proposes weak, generation 1 strong (and
// weak again, which collapses), generation 2 mid. strong wins from
// generation 1 on, so it survives into generation 2 and the result.
func searchFixture(t testing.TB, generations int) (*Config, *evolvingRunner) {
	t.Helper()
	cfg, f := fixture(t)
	f.behave["organism:evolver"] = &behavior{emitted: []any{}, calls: 1, units: 700}
	f.behave["organism:weak"] = &behavior{answer: wrongOn("gamma", "delta"), calls: 1, units: 10}
	f.behave["organism:strong"] = &behavior{answer: echo, calls: 1, units: 10}
	f.behave["organism:mid"] = &behavior{answer: wrongOn("delta"), calls: 1, units: 10}
	weak, strong, mid := candidateValue(t, "weak"), candidateValue(t, "strong"), candidateValue(t, "mid")
	r := &evolvingRunner{fakeRunner: f, outputs: []any{[]any{weak}, []any{strong, weak}, []any{mid}}}
	cfg.Generator = &Generator{Manifest: mustParse(t, searchGeneratorManifest), Args: map[string]any{"task": "echo"}, Output: "candidates"}
	cfg.Search = &SearchSettings{MaxGenerations: generations, FeedbackInput: "feedback"}
	return cfg, r
}

func runSearch(t testing.TB, cfg *Config, r evidence.Runner, opts Options) *SearchReport {
	t.Helper()
	rep, err := RunSearch(context.Background(), cfg, r, opts)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func digests(cands []CandidateResult) []string {
	out := make([]string, len(cands))
	for i := range cands {
		out[i] = cands[i].ManifestDigest
	}
	return out
}

func TestSearchEndToEnd(t *testing.T) {
	t.Parallel()
	cfg, r := searchFixture(t, 3)
	rep := runSearch(t, cfg, r, Options{})
	weak, strong, mid := digestOf(t, "weak"), digestOf(t, "strong"), digestOf(t, "mid")
	wantPop := [][]string{{weak}, {weak, strong}, {strong, mid}}
	wantProposed := [][]string{{weak}, {strong, weak}, {mid}}
	wantWinner := []string{weak, strong, strong}
	if len(rep.Generations) != 3 {
		t.Fatalf("%d generations", len(rep.Generations))
	}
	for i, g := range rep.Generations {
		if got := digests(g.Candidates); strings.Join(got, ",") != strings.Join(wantPop[i], ",") {
			t.Errorf("generation %d population %v, want %v", i, got, wantPop[i])
		}
		if strings.Join(g.Proposed, ",") != strings.Join(wantProposed[i], ",") {
			t.Errorf("generation %d proposed %v", i, g.Proposed)
		}
		if g.Promoted != wantWinner[i] {
			t.Errorf("generation %d promoted %s", i, g.Promoted)
		}
		for _, c := range g.Candidates {
			for _, cs := range c.Cases {
				if cs.Split == SplitHoldout {
					t.Errorf("generation %d ran holdout", i)
				}
			}
		}
	}
	// The feedback each generator run received is what the previous
	// generation implies; generation 0 gets null.
	for i, g := range rep.Generations {
		receipt, _ := r.Receipt(g.ReceiptDigest)
		fb, ok := receipt["args"].(map[string]any)["src"].(map[string]any)["feedback"]
		var prev *Generation
		if i > 0 {
			prev = &rep.Generations[i-1]
		}
		if !ok || !canon.Equal(fb, SearchFeedback(i, prev)) {
			t.Errorf("generation %d feedback %v", i, fb)
		}
	}
	fb := SearchFeedback(1, &rep.Generations[0]).(map[string]any)
	c0 := fb["candidates"].([]any)[0].(map[string]any)
	if fb["promoted"] != weak || c0["validation"].(map[string]any)["passed"] != 0.0 || c0["usage"] == nil || fb["generation"] != 1.0 {
		t.Errorf("feedback shape %v", fb)
	}
	if got := digests(rep.Result.Candidates); strings.Join(got, ",") != strong+","+mid {
		t.Errorf("result population %v", got)
	}
	if rep.Result.Promoted != strong || rep.Result.Lineage == nil || rep.Result.Lineage.ReceiptDigest != rep.Generations[2].ReceiptDigest {
		t.Errorf("result %s lineage %+v", rep.Result.Promoted, rep.Result.Lineage)
	}
	if rep.Result.Holdout.Total != 1 || rep.Result.Holdout.Passed != 1 {
		t.Errorf("holdout %+v", rep.Result.Holdout.Score)
	}
	v, err := VerifyDocument(context.Background(), rep.Value(), r)
	// Result: 2x4 cases + 1 holdout + lineage = 10. Generations: cases
	// (4, 8, 8) + one winner re-check and one generator run each = 26.
	if err != nil || !v.OK || v.CheckedReceipts != 36 {
		t.Fatalf("verify %+v %v", v, err)
	}
	// The report round-trips through the strict parser byte for byte.
	b1, _ := rep.Encode()
	parsed, err := canon.Parse(b1, 0)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseSearchReport(parsed)
	if err != nil {
		t.Fatal(err)
	}
	if b2, _ := back.Encode(); !bytes.Equal(b1, b2) {
		t.Error("parse/encode round trip changed the report")
	}
}

func TestSearchSeedsCompeteFromGenerationZero(t *testing.T) {
	t.Parallel()
	cfg, r := searchFixture(t, 1)
	r.behave["organism:seed"] = &behavior{answer: echo, calls: 0, units: 5}
	cfg.Candidates = []*manifest.Manifest{candidate(t, "seed")}
	rep := runSearch(t, cfg, r, Options{})
	seed, weak := digestOf(t, "seed"), digestOf(t, "weak")
	if got := digests(rep.Generations[0].Candidates); strings.Join(got, ",") != seed+","+weak {
		t.Errorf("population %v", got)
	}
	if rep.Result.Promoted != seed {
		t.Errorf("promoted %s", rep.Result.Promoted)
	}
	if v, err := VerifySearch(context.Background(), rep.Value(), r); err != nil || !v.OK {
		t.Fatalf("verify %+v %v", v, err)
	}
}

func TestSearchConcurrencyIsByteIdentical(t *testing.T) {
	t.Parallel()
	// Three runs at each concurrency: jitter reorders the cases each time.
	reporttest.SameAtEveryConcurrency(t, []int{1, 1, 1, 3, 3, 3, 16, 16, 16}, func(n int) ([]byte, error) {
		cfg, r := searchFixture(t, 3)
		r.jitter = true
		return runSearch(t, cfg, r, Options{Concurrency: n}).Encode()
	})
}

func TestSearchRunRejections(t *testing.T) {
	t.Parallel()
	t.Run("population bound", func(t *testing.T) {
		cfg, r := searchFixture(t, 2)
		var many []any
		for i := range MaxCandidates {
			key := fmt.Sprintf("many-%d", i)
			r.behave["organism:"+key] = &behavior{answer: echo}
			many = append(many, candidateValue(t, key))
		}
		// Generation 1: 32 new proposals beside the survivor.
		r.outputs = []any{[]any{candidateValue(t, "weak")}, many}
		_, err := RunSearch(context.Background(), cfg, r, Options{})
		faulttest.Want(t, err, fault.BudgetExhausted)
	})
	t.Run("generator failed", func(t *testing.T) {
		cfg, r := searchFixture(t, 2)
		r.behave["organism:evolver"].generatorFailed = true
		_, err := RunSearch(context.Background(), cfg, r, Options{})
		faulttest.Want(t, err, fault.Parse)
	})
	t.Run("not a search config", func(t *testing.T) {
		cfg, r := searchFixture(t, 2)
		cfg.Search = nil
		_, err := RunSearch(context.Background(), cfg, r, Options{})
		faulttest.Want(t, err, fault.Parse)
	})
	t.Run("budget", func(t *testing.T) {
		cfg, r := searchFixture(t, 2)
		cfg.Budget = &Limits{Work: 1, Attempts: 1, Runs: 1}
		_, err := RunSearch(context.Background(), cfg, r, Options{})
		faulttest.Want(t, err, fault.Parse)
	})
}

func genOf(v map[string]any, i int) map[string]any {
	return v["generations"].([]any)[i].(map[string]any)
}

func genCand(v map[string]any, g, i int) map[string]any {
	return genOf(v, g)["candidates"].([]any)[i].(map[string]any)
}

func resultOf(v map[string]any) map[string]any { return v["result"].(map[string]any) }

// forgedGeneratorRun stores a generator receipt that emits what the
// generator emitted in generation gen but received other args.
func forgedGeneratorRun(t *testing.T, r *evolvingRunner, cfg *Config, gen int, args map[string]any) string {
	t.Helper()
	r.n = gen
	sess, err := r.Open(context.Background(), cfg.Generator.Manifest, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, d, err := sess.Run(context.Background(), evidence.CellArgs(cfg.Generator.Manifest, args))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestSearchForgeryIsCaught alters one claim at a time, recomputes every
// digest so only the claim can betray the forgery, and expects
// verification to name it.
func TestSearchForgeryIsCaught(t *testing.T) {
	t.Parallel()
	cfg, r := searchFixture(t, 3)
	rep := runSearch(t, cfg, r, Options{})
	weak, strong, mid := digestOf(t, "weak"), digestOf(t, "strong"), digestOf(t, "mid")
	// Generator runs with a wrong feedback, and with another task.
	wrongFeedback := forgedGeneratorRun(t, r, cfg, 1, map[string]any{"task": "echo", "feedback": SearchFeedback(1, nil)})
	wrongTask := forgedGeneratorRun(t, r, cfg, 1, map[string]any{"task": "other", "feedback": SearchFeedback(1, &rep.Generations[0])})
	for _, tc := range []struct {
		name   string
		forge  func(v map[string]any)
		reseal bool
		want   string
	}{
		{"digest", func(map[string]any) {}, false, ""},
		{"proposed altered", func(v map[string]any) { genOf(v, 2)["proposed"] = []any{strong} }, true, "generations[2].proposed: the generator receipt"},
		{"proposed dropped", func(v map[string]any) { genOf(v, 1)["proposed"] = []any{strong} }, true, "generations[1].proposed: the generator receipt"},
		{"proposal not evaluated", func(v map[string]any) {
			genOf(v, 2)["candidates"] = genOf(v, 2)["candidates"].([]any)[:1]
		}, true, "generations[2].proposed[0]: " + mid + " was not evaluated"},
		{"survivor dropped", func(v map[string]any) {
			genOf(v, 1)["candidates"] = genOf(v, 1)["candidates"].([]any)[1:]
		}, true, "generations[1].candidates: the previous winner " + weak + " did not survive"},
		{"population reordered", func(v map[string]any) {
			c := genOf(v, 1)["candidates"].([]any)
			c[0], c[1] = c[1], c[0]
		}, true, "generations[1].candidates: the population is not the previous winner"},
		{"chain: wrong feedback", func(v map[string]any) { genOf(v, 1)["receiptDigest"] = wrongFeedback }, true,
			"generations[1].receiptDigest: no generator input received the feedback generation 0 implies"},
		{"chain: fixed args changed", func(v map[string]any) { genOf(v, 1)["receiptDigest"] = wrongTask }, true,
			`generations[1].receiptDigest: generator input "task" differs from generation 0`},
		{"chain: earlier evidence rewritten", func(v map[string]any) {
			// Claim generation 0's winner had fewer work units: the
			// feedback generation 1 received no longer follows.
			c := genCand(v, 0, 0)
			c["work"].(map[string]any)["units"] = 1.0
		}, true, "generations[1].receiptDigest: no generator input received the feedback generation 0 implies"},
		{"generation promoted", func(v map[string]any) { genOf(v, 1)["promoted"] = weak }, true, "generations[1].promoted: claimed " + weak},
		{"generation pass claim", func(v map[string]any) {
			genCand(v, 0, 0)["cases"].([]any)[2].(map[string]any)["passed"] = true
		}, true, "generations[0].candidates[" + weak + "].cases[val-c].passed"},
		{"holdout leak", func(v map[string]any) {
			genCand(v, 0, 0)["cases"].([]any)[0].(map[string]any)["split"] = SplitHoldout
		}, true, "holdout evidence leaked into generation selection"},
		{"generation generator", func(v map[string]any) { genOf(v, 0)["generatorDigest"] = mid }, true, "generations[0].generatorDigest: claimed " + mid},
		{"result promoted", func(v map[string]any) { resultOf(v)["promoted"] = mid; reseal(resultOf(v)) }, true, "result.promoted: claimed " + mid},
		{"result population", func(v map[string]any) {
			res := resultOf(v)
			res["candidates"] = res["candidates"].([]any)[:1]
			reseal(res)
		}, true, "result.candidates: the final population is not the last winner followed by the last proposals"},
		{"result lineage", func(v map[string]any) {
			resultOf(v)["lineage"].(map[string]any)["receiptDigest"] = genOf(v, 1)["receiptDigest"]
			reseal(resultOf(v))
		}, true, "result.lineage: names generator"},
		{"result claim", func(v map[string]any) {
			holdOf(resultOf(v), 0)["passed"] = false
			reseal(resultOf(v))
		}, true, "result: holdout.cases[hold-e].passed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := canon.Clone(rep.Value()).(map[string]any)
			tc.forge(v)
			if tc.reseal {
				reseal(v)
			} else {
				v["digest"] = "sha256:" + strings.Repeat("0", 64)
				tc.want = "digest: claimed"
			}
			ver, err := VerifySearch(context.Background(), v, r)
			reporttest.Caught(t, ver, err, tc.want, strings.Contains)
		})
	}
	// A missing generator receipt is named too.
	v := canon.Clone(rep.Value()).(map[string]any)
	delete(r.receipts, rep.Generations[0].ReceiptDigest)
	ver, err := VerifySearch(context.Background(), v, r)
	if err != nil || ver.OK || !strings.Contains(strings.Join(ver.Mismatches, "\n"), "generations[0].receiptDigest") {
		t.Errorf("missing generator receipt: %+v %v", ver, err)
	}
}

func TestParseSearchReportRejects(t *testing.T) {
	t.Parallel()
	cfg, r := searchFixture(t, 2)
	good := runSearch(t, cfg, r, Options{}).Value()
	many := make([]any, MaxGenerations+1)
	for i := range many {
		g := canon.Clone(genOf(good, 0)).(map[string]any)
		g["generation"] = float64(i)
		many[i] = g
	}
	for _, tc := range []struct {
		name  string
		forge func(v map[string]any)
		code  string
		field string
	}{
		{"unknown key", func(v map[string]any) { v["extra"] = 1.0 }, fault.Parse, "report"},
		{"missing result", func(v map[string]any) { delete(v, "result") }, fault.Parse, "report"},
		{"contract", func(v map[string]any) { v["contract"] = ReportContract }, fault.Parse, "contract"},
		{"generator digest", func(v map[string]any) { v["generatorDigest"] = "sha256:x" }, fault.Parse, "generatorDigest"},
		{"no generations", func(v map[string]any) { v["generations"] = []any{} }, fault.Parse, "generations"},
		{"too many generations", func(v map[string]any) { v["generations"] = many }, fault.BudgetExhausted, "generations"},
		{"generation index", func(v map[string]any) { genOf(v, 1)["generation"] = 0.0 }, fault.Parse, "generations[1].generation"},
		{"generation key", func(v map[string]any) { genOf(v, 0)["holdout"] = map[string]any{} }, fault.Parse, "generations[0]"},
		{"generation missing key", func(v map[string]any) { delete(genOf(v, 0), "promoted") }, fault.Parse, "generations[0]"},
		{"empty proposals", func(v map[string]any) { genOf(v, 0)["proposed"] = []any{} }, fault.Parse, "generations[0].proposed"},
		{"proposal digest", func(v map[string]any) { genOf(v, 0)["proposed"] = []any{"weak"} }, fault.Parse, "generations[0].proposed[0]"},
		{"candidate shape", func(v map[string]any) { delete(genCand(v, 0, 0), "usage") }, fault.Parse, "generations[0].candidates[0].usage"},
		{"result shape", func(v map[string]any) { resultOf(v)["contract"] = SearchContract }, fault.Parse, "result.contract"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := canon.Clone(good).(map[string]any)
			tc.forge(v)
			_, err := ParseSearchReport(v)
			faulttest.Want(t, err, tc.code)
			if fe, ok := err.(*fault.Error); !ok || fe.Path != tc.field {
				t.Errorf("field %v, want %q", err, tc.field)
			}
			if _, err := VerifyDocument(context.Background(), v, r); err == nil {
				t.Error("VerifyDocument accepted a malformed report")
			}
		})
	}
}

func TestSearchConfig(t *testing.T) {
	t.Parallel()
	dir := "/cfg" // where loader keeps its manifests
	gen := mustParse(t, searchGeneratorManifest)
	load := func(path string) (*manifest.Manifest, error) {
		if strings.HasSuffix(path, "gen.json") {
			return gen, nil
		}
		return loader(t)(path)
	}
	generator := func(args map[string]any) map[string]any {
		return map[string]any{"manifest": "gen.json", "args": args, "output": "candidates"}
	}
	search := map[string]any{"maxGenerations": 2.0, "feedbackInput": "feedback"}
	base := func(extra map[string]any) map[string]any {
		all := map[string]any{"generator": generator(map[string]any{"task": "t"}), "search": search}
		for k, v := range extra {
			all[k] = v
		}
		return configValue(baseCases(), all)
	}
	cfg, err := ParseConfig(base(nil), dir, load, AdmitOptions{Search: true})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Search == nil || cfg.Search.MaxGenerations != 2 || cfg.Search.FeedbackInput != "feedback" {
		t.Fatalf("search %+v", cfg.Search)
	}
	// Outside search mode the block is refused, as upstream does.
	_, err = ParseConfig(base(nil), dir, load, AdmitOptions{})
	faulttest.Want(t, err, fault.Parse)
	if !strings.Contains(err.Error(), "foundry search") {
		t.Errorf("message %q", err)
	}
	for _, tc := range []struct {
		name  string
		v     map[string]any
		field string
	}{
		{"no block", func() map[string]any { v := base(nil); delete(v, "search"); return v }(), "search"},
		{"null block", base(map[string]any{"search": nil}), "search"},
		{"zero generations", base(map[string]any{"search": map[string]any{"maxGenerations": 0.0, "feedbackInput": "feedback"}}), "search.maxGenerations"},
		{"nine generations", base(map[string]any{"search": map[string]any{"maxGenerations": 9.0, "feedbackInput": "feedback"}}), "search.maxGenerations"},
		{"fractional", base(map[string]any{"search": map[string]any{"maxGenerations": 1.5, "feedbackInput": "feedback"}}), "search.maxGenerations"},
		{"string count", base(map[string]any{"search": map[string]any{"maxGenerations": "2", "feedbackInput": "feedback"}}), "search.maxGenerations"},
		{"unknown key", base(map[string]any{"search": map[string]any{"maxGenerations": 2.0, "feedbackInput": "feedback", "seed": 1.0}}), "search"},
		{"no feedback input", base(map[string]any{"search": map[string]any{"maxGenerations": 2.0}}), "search"},
		{"empty feedback input", base(map[string]any{"search": map[string]any{"maxGenerations": 2.0, "feedbackInput": ""}}), "search.feedbackInput"},
		{"budget", base(map[string]any{"budget": map[string]any{"work": 10.0, "attempts": 1.0, "runs": 3.0}}), "budget"},
		{"no generator", func() map[string]any {
			v := base(map[string]any{"candidates": []any{"a.json"}})
			delete(v, "generator")
			return v
		}(), "generator"},
		{"feedback not an input", base(map[string]any{"search": map[string]any{"maxGenerations": 2.0, "feedbackInput": "history"}}), "search.feedbackInput"},
		{"feedback fixed in args", base(map[string]any{"generator": generator(map[string]any{"task": "t", "feedback": nil})}), "generator.args"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseConfig(tc.v, dir, load, AdmitOptions{Search: true})
			faulttest.Want(t, err, fault.Parse)
			if fe, ok := err.(*fault.Error); !ok || fe.Path != tc.field {
				t.Errorf("field %v, want %q", err, tc.field)
			}
		})
	}
}

func TestInspectSearch(t *testing.T) {
	t.Parallel()
	cfg, r := searchFixture(t, 3)
	rep := runSearch(t, cfg, r, Options{})
	out, err := InspectDocument(rep.Value())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"search " + rep.Digest,
		"0           1         1           organism:weak",
		"1           2         2           organism:strong",
		"2           1         2           organism:strong",
		"organism:strong (promoted)",
		"holdout 1/1",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("inspect lacks %q:\n%s", want, out)
		}
	}
}

// FuzzParseSearchReport: the strict parser never panics, and whatever it
// accepts re-encodes to a report it accepts again with the same bytes.
func FuzzParseSearchReport(f *testing.F) {
	cfg, r := searchFixture(f, 2)
	b, err := runSearch(f, cfg, r, Options{}).Encode()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte(`{"contract":"algal.search.v1","generations":[],"digest":"x"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := canon.Parse(data, 1<<20)
		if err != nil {
			return
		}
		s, err := ParseSearchReport(v)
		if err != nil {
			return
		}
		first, err := s.Encode()
		if err != nil {
			t.Fatal(err)
		}
		again, err := canon.Parse(first, 0)
		if err != nil {
			t.Fatal(err)
		}
		s2, err := ParseSearchReport(again)
		if err != nil {
			t.Fatalf("re-encoded report rejected: %v", err)
		}
		if second, _ := s2.Encode(); !bytes.Equal(first, second) {
			t.Fatal("encode is not stable")
		}
	})
}
