package vm

import (
	"context"
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/effect"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/manifest"
	"github.com/algal-assay/assay/engine/receipt"
	"github.com/algal-assay/assay/engine/receipt/comparison"
	"github.com/algal-assay/assay/engine/store"
)

// replayCells is the recorded organism: an input feeding an agent, whose
// answer a fn tags.
const replayCells = `{"id":"q","kind":"input","outputs":{"ask":"text"}},
 {"id":"answer","kind":"agent","prompt":"Answer briefly.","inputs":{"ask":"text"},"output":{"kind":"text"}},
 {"id":"tagged","kind":"fn","fn":"tag.v1"}`

var replayEdges = edge("q", "ask", "answer", "ask") + "," + edge("answer", "out", "tagged", "value") + "," +
	edge("q", "ask", "tagged", "tag")

const replayBudgets = `"budgets":{"maxSteps":16,"maxAgentCalls":4,"maxWork":100000}`

func replayManifest(cells, edges string) string {
	return organism("replay-test", cells, edges, replayBudgets)
}

// recordRun runs the base organism with a scripted answer and returns the
// sealed receipt and the store it ran on.
func recordRun(t *testing.T) (map[string]any, store.Store) {
	t.Helper()
	st := store.NewMemStore()
	m := mustManifest(t, replayManifest(replayCells, replayEdges))
	rec := runAndVerify(t, m, `{"q":{"ask":"hi"}}`, scriptedHost(t, st, `{"answer":"hello"}`))
	return rec, st
}

func scripted(t *testing.T, responses string) []effect.Executor {
	t.Helper()
	sc, err := effect.NewScripted("scripted", obj(t, responses))
	if err != nil {
		t.Fatal(err)
	}
	return []effect.Executor{sc}
}

// compareJSON replays the revision text and checks the record round-trips
// through its parser.
func compareJSON(t *testing.T, rec map[string]any, revision string, opts ReplayOptions) *Comparison {
	t.Helper()
	c, err := CompareValue(rec, parseJSON(t, revision), opts)
	if err != nil {
		t.Fatalf("compare: %v", err)
	}
	back, err := comparison.Parse(c.Value())
	if err != nil {
		t.Fatalf("own record does not parse: %v\n%s", err, enc(c.Value()))
	}
	if enc(back.Value()) != enc(c.Value()) {
		t.Fatalf("record does not round-trip:\n%s\n%s", enc(back.Value()), enc(c.Value()))
	}
	return c
}

func prefixPaths(c *Comparison) string {
	var ps []string
	for _, e := range c.Prefix {
		ps = append(ps, e.Path)
	}
	return strings.Join(ps, ",")
}

// countingExec records whether any live request reached it.
type countingExec struct {
	calls int
	inner effect.Executor
}

func (c *countingExec) ID() string                  { return c.inner.ID() }
func (c *countingExec) Describe() effect.Descriptor { return c.inner.Describe() }
func (c *countingExec) Execute(ctx context.Context, req effect.Request) (effect.Response, error) {
	c.calls++
	return c.inner.Execute(ctx, req)
}

func TestReplayIdentical(t *testing.T) {
	t.Parallel()
	rec, st := recordRun(t)
	before, _ := st.List(store.Values)
	live := &countingExec{inner: scripted(t, `{"answer":"something else"}`)[0]}
	c := compareJSON(t, rec, replayManifest(replayCells, replayEdges), ReplayOptions{Store: st, Executors: []effect.Executor{live}})
	if c.Verdict != VerdictIdentical || c.Divergence != nil || c.Reason != nil {
		t.Fatalf("verdict %s: %s", c.Verdict, enc(c.Value()))
	}
	if got := prefixPaths(c); got != "q,answer,tagged" {
		t.Fatalf("prefix %q", got)
	}
	if live.calls != 0 {
		t.Fatalf("a recorded request reached the live executor %d times", live.calls)
	}
	// An identical revision reproduces the receipt bit for bit.
	if c.RevisedReceipt != rec["digest"] || c.Receipt != rec["digest"] || c.Revision != rec["manifestDigest"] {
		t.Fatalf("digests: %s", enc(c.Value()))
	}
	if c.EffectsMatch == nil || !*c.EffectsMatch || c.OriginalOutcome != "complete" || c.RevisedOutcome != "complete" {
		t.Fatalf("evidence: %s", enc(c.Value()))
	}
	after, _ := st.List(store.Values)
	if len(after) != len(before) {
		t.Fatal("the comparison wrote to the caller's store")
	}
	ad, _ := canon.Digest(rec["args"])
	if c.Args != ad {
		t.Fatalf("args digest %s, want %s", c.Args, ad)
	}
}

func TestReplayChangedPromptDiverges(t *testing.T) {
	t.Parallel()
	rec, st := recordRun(t)
	rev := replayManifest(strings.Replace(replayCells, "Answer briefly.", "Answer verbosely.", 1), replayEdges)
	c := compareJSON(t, rec, rev, ReplayOptions{Store: st, Executors: scripted(t, `{"answer":"a much longer answer"}`)})
	if c.Verdict != VerdictDiverged {
		t.Fatalf("verdict %s: %s", c.Verdict, enc(c.Value()))
	}
	if got := prefixPaths(c); got != "q" {
		t.Fatalf("prefix %q, want q", got)
	}
	d := c.Divergence
	if d == nil || d.Kind != DivergeCell || d.Path != "answer" || d.Original == nil || d.Revised == nil ||
		d.Original.Status != "committed" || d.Revised.Status != "committed" || d.Original.Digest == d.Revised.Digest {
		t.Fatalf("divergence %s", enc(c.Value()["divergence"]))
	}
	if want, _ := canon.Digest(cell(t, rec, "answer")); d.Original.Digest != want {
		t.Fatalf("original side digest %s, want the recorded cell's %s", d.Original.Digest, want)
	}
	if got := cell(t, c.Revised, "answer")["outputs"].(map[string]any)["out"]; got != "a much longer answer" {
		t.Fatalf("revised answer %v", got)
	}
	if c.Revised["manifestDigest"] == rec["manifestDigest"] || c.RevisedReceipt != c.Revised["digest"] {
		t.Fatal("revised receipt identity wrong")
	}
	// The revised receipt is a real receipt: it checks.
	if err := receipt.Check(c.Revised); err != nil {
		t.Fatal(err)
	}
}

func TestReplayAddedCell(t *testing.T) {
	t.Parallel()
	rec, st := recordRun(t)
	cells := replayCells + `,{"id":"echoed","kind":"fn","fn":"echo.v1"}`
	edges := replayEdges + "," + edge("tagged", "value", "echoed", "value")
	c := compareJSON(t, rec, replayManifest(cells, edges), ReplayOptions{Store: st})
	if c.Verdict != VerdictDiverged || strings.Join(c.Added, ",") != "echoed" {
		t.Fatalf("verdict %s added %v", c.Verdict, c.Added)
	}
	if got := prefixPaths(c); got != "q,answer,tagged" {
		t.Fatalf("prefix %q", got)
	}
	d := c.Divergence
	if d == nil || d.Kind != DivergeCell || d.Path != "echoed" || d.Original != nil || d.Revised == nil || d.Revised.Status != "committed" {
		t.Fatalf("divergence %s", enc(c.Value()["divergence"]))
	}
}

func TestReplayDroppedCell(t *testing.T) {
	t.Parallel()
	rec, st := recordRun(t)
	cells := `{"id":"q","kind":"input","outputs":{"ask":"text"}},
	 {"id":"answer","kind":"agent","prompt":"Answer briefly.","inputs":{"ask":"text"},"output":{"kind":"text"}}`
	c := compareJSON(t, rec, replayManifest(cells, edge("q", "ask", "answer", "ask")), ReplayOptions{Store: st})
	d := c.Divergence
	if c.Verdict != VerdictDiverged || d == nil || d.Path != "tagged" || d.Original == nil || d.Revised != nil {
		t.Fatalf("%s", enc(c.Value()))
	}
}

func TestReplayMissingInput(t *testing.T) {
	t.Parallel()
	rec, st := recordRun(t)
	// The revision wires an input port the recorded args never supplied.
	cells := strings.Replace(replayCells, `"outputs":{"ask":"text"}`, `"outputs":{"ask":"text","extra":"text"}`, 1) +
		`,{"id":"probe","kind":"fn","fn":"echo.v1"}`
	edges := replayEdges + "," + edge("q", "extra", "probe", "value")
	c := compareJSON(t, rec, replayManifest(cells, edges), ReplayOptions{Store: st})
	if c.Verdict != VerdictCouldNotReplay || c.Reason == nil || c.Reason.Code != comparison.ReasonMissingInput || c.Reason.Path != "q.extra" {
		t.Fatalf("%s", enc(c.Value()))
	}
	if c.RevisedReceipt != "" || c.Revised != nil || c.Revision == "" || c.EffectsMatch != nil {
		t.Fatalf("a missing input ran anyway: %s", enc(c.Value()))
	}
	// Supplying the value through the args override makes it replayable.
	c = compareJSON(t, rec, replayManifest(cells, edges), ReplayOptions{Store: st, Args: obj(t, `{"q":{"extra":"more"}}`)})
	if c.Verdict != VerdictDiverged || c.Divergence.Path != "q" {
		t.Fatalf("with override: %s", enc(c.Value()))
	}
	if ask := c.Revised["args"].(map[string]any)["q"].(map[string]any)["ask"]; ask != "hi" {
		t.Fatalf("override replaced the whole cell: ask=%v", ask)
	}
}

func TestReplayChangedRouteMissingEffect(t *testing.T) {
	t.Parallel()
	rec, st := recordRun(t)
	cells := strings.Replace(replayCells, `"output":{"kind":"text"}}`, `"output":{"kind":"text"},"route":{"provider":"bigger"}}`, 1)
	c := compareJSON(t, rec, replayManifest(cells, replayEdges), ReplayOptions{Store: st})
	r := c.Reason
	if c.Verdict != VerdictCouldNotReplay || r == nil || r.Code != comparison.ReasonMissingEffect || r.Path != "answer" || !canon.IsDigest(r.Request) {
		t.Fatalf("%s", enc(c.Value()))
	}
	if r.Request == cell(t, rec, "answer")["effectDigest"] {
		t.Fatal("the unanswered request is the recorded one")
	}
	if got := prefixPaths(c); got != "q" {
		t.Fatalf("prefix %q", got)
	}
	if c.Revised["outcome"] != "failed" || c.RevisedReceipt == "" {
		t.Fatalf("partial run not recorded: %s", enc(c.Value()))
	}
}

func TestReplayInvalidManifest(t *testing.T) {
	t.Parallel()
	rec, st := recordRun(t)
	for name, rev := range map[string]string{
		"does not parse": `{"contract":"algal.organism.v1","key":"bogus"}`,
		"unknown fn":     replayManifest(strings.Replace(replayCells, "tag.v1", "nope.v1", 1), replayEdges),
	} {
		t.Run(name, func(t *testing.T) {
			c := compareJSON(t, rec, rev, ReplayOptions{Store: st})
			if c.Verdict != VerdictCouldNotReplay || c.Reason.Code != comparison.ReasonManifestInvalid || c.Reason.Detail == nil || c.RevisedReceipt != "" {
				t.Fatalf("%s", enc(c.Value()))
			}
			if sd, _ := canon.Digest(parseJSON(t, rev)); c.Supplied != sd {
				t.Fatalf("supplied %s, want %s", c.Supplied, sd)
			}
		})
	}
}

func TestReplayRefusesTamperedReceipt(t *testing.T) {
	t.Parallel()
	rec, st := recordRun(t)
	forged := parseJSON(t, enc(rec)).(map[string]any)
	forged["args"] = obj(t, `{"q":{"ask":"bye"}}`)
	_, err := CompareValue(forged, parseJSON(t, replayManifest(replayCells, replayEdges)), ReplayOptions{Store: st})
	if fault.CodeOf(err) != "DIGEST_MISMATCH" {
		t.Fatalf("err %v", err)
	}
}

func TestReplayNeverCallsLiveTools(t *testing.T) {
	t.Parallel()
	rec, st := recordRun(t)
	cells := replayCells + `,{"id":"notify","kind":"tool","tool":"notify.v1"}`
	edges := replayEdges + "," + edge("tagged", "value", "notify", "message")
	sig, err := manifest.ParseSignature("notify.v1", parseJSON(t, `{"inputs":{"message":"text"},"outputs":{"value":"json"},"effect":"write","cost":1,"maxOutputBytes":4096}`))
	if err != nil {
		t.Fatal(err)
	}
	c := compareJSON(t, rec, replayManifest(cells, edges),
		ReplayOptions{Store: st, ToolSignatures: map[string]manifest.Signature{"notify.v1": sig}})
	if c.Verdict != VerdictCouldNotReplay || c.Reason.Code != comparison.ReasonMissingEffect || c.Reason.Path != "notify" {
		t.Fatalf("%s", enc(c.Value()))
	}
}

func TestReplayDeterministic(t *testing.T) {
	t.Parallel()
	rec, st := recordRun(t)
	rev := replayManifest(strings.Replace(replayCells, "Answer briefly.", "Answer verbosely.", 1), replayEdges)
	a := compareJSON(t, rec, rev, ReplayOptions{Store: st, Executors: scripted(t, `{"answer":"x"}`)})
	b := compareJSON(t, rec, rev, ReplayOptions{Store: st, Executors: scripted(t, `{"answer":"x"}`)})
	if enc(a.Value()) != enc(b.Value()) {
		t.Fatalf("two comparisons differ:\n%s\n%s", enc(a.Value()), enc(b.Value()))
	}
}

func TestReplayCompareManifest(t *testing.T) {
	t.Parallel()
	rec, st := recordRun(t)
	m := mustManifest(t, replayManifest(replayCells, replayEdges))
	c, err := Compare(rec, m, ReplayOptions{Store: st})
	if err != nil || c.Verdict != VerdictIdentical || c.Supplied != m.Digest {
		t.Fatalf("%v %s", err, enc(c.Value()))
	}
}

func TestParseComparisonRejects(t *testing.T) {
	t.Parallel()
	rec, st := recordRun(t)
	good := compareJSON(t, rec, replayManifest(replayCells, replayEdges), ReplayOptions{Store: st}).Value()
	zero := "sha256:" + strings.Repeat("0", 64)
	manyPrefix := make([]any, comparison.MaxPrefix+1)
	for i := range manyPrefix {
		manyPrefix[i] = map[string]any{"path": "c" + itoa(i), "digest": zero}
	}
	cases := map[string]func(v map[string]any){
		"contract":             func(v map[string]any) { v["contract"] = "algal.other.v1" },
		"unknown key":          func(v map[string]any) { v["extra"] = true },
		"bad digest":           func(v map[string]any) { v["receipt"] = "not-a-digest" },
		"unknown verdict":      func(v map[string]any) { v["verdict"] = "maybe" },
		"diverged, no sign":    func(v map[string]any) { v["verdict"] = VerdictDiverged },
		"could-not, no reason": func(v map[string]any) { v["verdict"] = VerdictCouldNotReplay },
		"identical w/ added":   func(v map[string]any) { v["added"] = []any{"x"} },
		"identical, no receipt": func(v map[string]any) {
			v["revisedReceipt"] = nil
		},
		"identical, outcomes differ": func(v map[string]any) {
			v["outcomes"] = map[string]any{"original": "complete", "revised": "failed"}
		},
		"reason on identical": func(v map[string]any) {
			v["reason"] = map[string]any{"code": comparison.ReasonManifestInvalid}
		},
		"manifest-invalid with receipt": func(v map[string]any) {
			v["verdict"] = VerdictCouldNotReplay
			v["reason"] = map[string]any{"code": comparison.ReasonManifestInvalid}
		},
		"missing-effect without path": func(v map[string]any) {
			v["verdict"] = VerdictCouldNotReplay
			v["revisedReceipt"] = nil
			v["reason"] = map[string]any{"code": comparison.ReasonMissingEffect}
		},
		"prefix over bound": func(v map[string]any) { v["prefix"] = manyPrefix },
		"prefix repeats": func(v map[string]any) {
			v["prefix"] = []any{map[string]any{"path": "a", "digest": zero}, map[string]any{"path": "a", "digest": zero}}
		},
		"added unsorted": func(v map[string]any) {
			v["verdict"] = VerdictDiverged
			v["added"] = []any{"b", "a"}
		},
		"added repeats": func(v map[string]any) {
			v["verdict"] = VerdictDiverged
			v["added"] = []any{"a", "a"}
		},
		"cell divergence without sides": func(v map[string]any) {
			v["verdict"] = VerdictDiverged
			v["divergence"] = map[string]any{"kind": "cell", "path": "q", "original": nil, "revised": nil}
		},
		"detail over bound": func(v map[string]any) {
			v["verdict"] = VerdictDiverged
			v["divergence"] = map[string]any{"kind": "work", "path": nil, "original": nil, "revised": nil,
				"detail": strings.Repeat("x", comparison.MaxDetail+1)}
		},
		"oversized": func(v map[string]any) {
			v["verdict"] = VerdictDiverged
			v["divergence"] = map[string]any{"kind": "work", "path": nil, "original": nil, "revised": nil,
				"detail": strings.Repeat("x", comparison.MaxBytes)}
		},
		"effectsMatch type": func(v map[string]any) { v["effectsMatch"] = "yes" },
	}
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			v := parseJSON(t, enc(good)).(map[string]any)
			mutate(v)
			_, err := comparison.Parse(v)
			if c, ok := err.(*fault.Error); !ok || c.Code != fault.Parse {
				t.Fatalf("want PARSE_FAILED, got %v", err)
			}
		})
	}
	// A well-formed diverged record with a receipt-level divergence parses.
	v := parseJSON(t, enc(good)).(map[string]any)
	v["verdict"] = VerdictDiverged
	v["divergence"] = map[string]any{"kind": "work", "path": nil, "original": nil, "revised": nil, "detail": "units 1 vs 2"}
	if _, err := comparison.Parse(v); err != nil {
		t.Fatal(err)
	}
}

func BenchmarkReplayCompare(b *testing.B) {
	st := store.NewMemStore()
	m := mustManifest(b, replayManifest(replayCells, replayEdges))
	rec, err := Run(m, obj(b, `{"q":{"ask":"hi"}}`), scriptedHost(b, st, `{"answer":"hello"}`))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if c, err := Compare(rec, m, ReplayOptions{Store: st}); err != nil || c.Verdict != VerdictIdentical {
			b.Fatal(err)
		}
	}
}
