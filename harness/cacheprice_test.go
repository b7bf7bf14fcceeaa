package harness

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/bench"
	"github.com/algal-assay/assay/engine/effect/anthropic/anthropictest"
	"github.com/algal-assay/assay/engine/effect/openai/openaitest"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/harness/archive"
	"github.com/algal-assay/assay/harness/rundir"
	"github.com/algal-assay/assay/harness/workload"
)

const cacheBench = `name: live-triage
revision: 1
backends:
  haiku: { api: anthropic, model: claude-haiku-4-5, base-url: BASE }
systems:
  - id: single
    manifest: triage-single.algal.json
    executors: { cheap: "anthropic:haiku" }
cases:
  - { id: double-charge, args: { ticket: "I was charged twice, please refund one." }, expect: { queue: billing } }
  - { id: export-crash, args: { ticket: "The app crashes when I click Export." }, expect: { queue: technical } }
prices:
  claude-haiku-4-5: { input: 1, output: 5, cache-read: 0.1, cache-write: 1.25 }
`

// Cache tokens the Anthropic fake reports (cache_read_input_tokens,
// cache_creation_input_tokens) are kept in the archive entry and priced
// at their own rates, live and in an offline replay alike; summary.md,
// re-derived from the evidence alone, keeps the contract's cost.
func TestCacheTokensPricedAtTheirOwnRates(t *testing.T) {
	t.Parallel()
	const read, write = 300, 40
	fake := anthropictest.New(func(n int, r anthropictest.Request) anthropictest.Reply {
		return anthropictest.Reply{Value: "billing", CacheRead: read, CacheWrite: write}
	})
	defer fake.Close()
	fake.Key = liveKey
	s := writeLiveWorkloads(t, fake.URL)
	if err := os.WriteFile(filepath.Join(s.root, "live-triage.bench.yaml"), []byte(strings.ReplaceAll(cacheBench, "BASE", fake.URL)), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"ANTHROPIC_API_KEY": liveKey}
	o := runBench(t, s, archive.All, env)
	if o.Err != nil {
		t.Fatalf("record: %v", o.Err)
	}
	sys := o.Bench.Systems[0]
	calls := sys.EffectCalls
	if calls != 2 || fake.Count() != 2 {
		t.Fatalf("calls = %d, requests = %d, want 2 each", calls, fake.Count())
	}
	// tokensIn counts every prompt token: input, cache read and write.
	tin, tout := float64(sys.Usage.TokensIn), float64(sys.Usage.TokensOut)
	cr, cw := float64(read*calls), float64(write*calls)
	want := ((tin-cr-cw)*1 + tout*5 + cr*0.1 + cw*1.25) / 1e6
	if contract := (tin*1 + tout*5) / 1e6; math.Abs(sys.Usage.Cost-contract) > 1e-12 {
		t.Fatalf("report cost %v, want the contract's %v", sys.Usage.Cost, contract)
	}
	c, ok := o.Cache["single"]
	if !ok || c.Read != int64(cr) || c.Write != int64(cw) || math.Abs(c.Cost-want) > 1e-12 {
		t.Fatalf("cache tally %+v, want read %v write %v cost %v", c, cr, cw, want)
	}
	table := SummaryTable(o)
	row := strings.Join(table.Rows[0], " | ")
	if !strings.Contains(strings.Join(table.Header, ","), "cache read/write") || !strings.Contains(row, "600/80") || !strings.Contains(row, CostCell(bench0(want))) {
		t.Fatalf("table %v %v, want cache 600/80 and cost %s", table.Header, row, CostCell(bench0(want)))
	}
	summary, err := os.ReadFile(filepath.Join(o.RunDir, rundir.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(summary, []byte("cache")) {
		t.Errorf("summary.md shows cache tokens, which its re-derivation cannot:\n%s", summary)
	}
	entries := archived(t, s.archive)
	if len(entries) != 2 {
		t.Fatalf("archive: %+v", entries)
	}
	for _, e := range entries {
		if len(e.Cache) != 1 || e.Cache[0].Read != read || e.Cache[0].Write != write || e.Cache[0].Executor != "cheap" {
			t.Errorf("entry %s: cache %+v, want one request with %d/%d", e.Case, e.Cache, read, write)
		}
	}
	index, _ := os.ReadFile(filepath.Join(s.archive, archive.IndexFile))
	recorded, _ := os.ReadFile(filepath.Join(o.RunDir, rundir.ReportFile))

	// Offline, no key: the same bytes, the same cache tokens and cost.
	clean := liveSetup{root: t.TempDir()}
	copyTree(t, s.root, clean.root, ".algal", "runs")
	clean.store, clean.out, clean.archive = filepath.Join(clean.root, ".algal"), filepath.Join(clean.root, "runs"), filepath.Join(clean.root, "receipts")
	fake.Reset()
	r := runBench(t, clean, archive.None, nil)
	if r.Err != nil || fake.Count() != 0 {
		t.Fatalf("replay: %v, %d requests", r.Err, fake.Count())
	}
	replayed, _ := os.ReadFile(filepath.Join(r.RunDir, rundir.ReportFile))
	if !bytes.Equal(recorded, replayed) {
		t.Error("the replayed report differs from the recorded one")
	}
	if r.Cache["single"] != c {
		t.Errorf("replayed cache tally %+v, recorded %+v", r.Cache["single"], c)
	}
	if got := strings.Join(SummaryTable(r).Rows[0], " | "); got != row {
		t.Errorf("replayed row %q, recorded %q", got, row)
	}
	// --record missing answers everything from the archive and keeps the
	// counts in the index.
	if r := runBench(t, clean, archive.Missing, nil); r.Err != nil || fake.Count() != 0 {
		t.Fatalf("--record missing: %v, %d requests", r.Err, fake.Count())
	}
	if again, _ := os.ReadFile(filepath.Join(clean.archive, archive.IndexFile)); !bytes.Equal(index, again) {
		t.Errorf("--record missing rewrote the index:\n%s\nwas\n%s", again, index)
	}
}

func bench0(cost float64) bench.Tally { return bench.Tally{Cost: cost} }

// A price's keys are read strictly where they are written, with the
// nearest key suggested; a cache rate is a number, at least 0.
func TestPriceCardCacheRatesAreStrict(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		price, path, msg string
	}{
		{"{ input: 1, output: 2, cache-reed: 0.1 }", "prices.small.cache-reed", `unknown key "cache-reed" (did you mean "cache-read"?)`},
		{"{ input: 1, output: 2, cached-input: 0.1 }", "prices.small.cached-input", "allowed here: input, output, cache-read, cache-write"},
		{"{ input: 1, output: 2, cache-write: -1 }", "prices.small.cache-write", "must be at least 0"},
		{"{ input: 1, output: 2, cache-read: cheap }", "prices.small.cache-read", "must be a number"},
	} {
		src := "name: w\nrevision: 1\nsystems:\n  - { id: a, manifest: m.json, executors: { x: \"openai:small\" } }\ncases:\n  - { id: c, args: {}, expect: {} }\n" +
			"prices:\n  small: " + tc.price + "\n"
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "m.json"), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := workload.Parse(filepath.Join(dir, "w.bench.yaml"), workload.KindBench, []byte(src))
		var he *fault.Error
		if !errors.As(err, &he) || he.Code != workload.CodeWorkload || he.Line != 8 || he.Column == 0 || he.Path != tc.path || !strings.Contains(he.Message, tc.msg) {
			t.Errorf("%s: err = %v, want %s at line 8 saying %q", tc.price, err, tc.path, tc.msg)
		}
	}
	src := "name: w\nrevision: 1\nsystems:\n  - { id: a, manifest: m.json, executors: { cheap: \"openai:small\" } }\ncases:\n  - { id: c, args: { ticket: t }, expect: { queue: billing } }\n" +
		"prices:\n  small: { input: 2, output: 3, cache-read: 0.5 }\n"
	dir := t.TempDir()
	copyFile(t, filepath.Join("..", "fixtures", "triage", "triage-single.algal.json"), filepath.Join(dir, "m.json"))
	w, err := workload.Parse(filepath.Join(dir, "w.bench.yaml"), workload.KindBench, []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if got := w.CacheRates["small"]; got != (workload.CacheRate{Read: 0.5, Write: 2}) {
		t.Errorf("rates %+v, want read 0.5 and write at the input rate 2", got)
	}
	if card := w.Prices["small"].(map[string]any); len(card) != 2 {
		t.Errorf("the contract's card holds %v, want only input and output", card)
	}
}

// OpenAI's cached prompt tokens (prompt_tokens_details.cached_tokens,
// part of prompt_tokens) are cache reads, priced at the cache-read rate;
// a card without a cache-write rate prices writes (none here) at input.
func TestOpenAICachedTokensPricedAtTheCacheReadRate(t *testing.T) {
	t.Parallel()
	const cached = 250
	fake := openaitest.New(func(int, openaitest.Request) openaitest.Reply {
		return openaitest.Reply{Value: "billing", CachedTokens: cached}
	})
	defer fake.Close()
	s := writeLiveWorkloads(t, fake.BaseURL())
	src := strings.NewReplacer("haiku: { api: anthropic, model: claude-haiku-4-5,", "mini: { api: openai, model: small-1,",
		`"anthropic:haiku"`, `"openai:mini"`, "claude-haiku-4-5: { input: 1, output: 5, cache-read: 0.1, cache-write: 1.25 }", "small-1: { input: 1, output: 5, cache-read: 0.5 }",
		"BASE", fake.BaseURL()).Replace(cacheBench)
	if err := os.WriteFile(filepath.Join(s.root, "live-triage.bench.yaml"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	o := runBench(t, s, archive.All, map[string]string{"OPENAI_API_KEY": liveKey})
	if o.Err != nil {
		t.Fatalf("record: %v", o.Err)
	}
	sys := o.Bench.Systems[0]
	tin, tout, cr := float64(sys.Usage.TokensIn), float64(sys.Usage.TokensOut), float64(cached*sys.EffectCalls)
	want := ((tin-cr)*1 + tout*5 + cr*0.5) / 1e6
	if c := o.Cache["single"]; c.Read != int64(cr) || c.Write != 0 || math.Abs(c.Cost-want) > 1e-12 || c.Cost >= sys.Usage.Cost {
		t.Fatalf("cache tally %+v, want read %v and cost %v (below the contract's %v)", c, cr, want, sys.Usage.Cost)
	}
	for _, e := range archived(t, s.archive) {
		if len(e.Cache) != 1 || e.Cache[0].Read != cached || e.Cache[0].Write != 0 {
			t.Errorf("entry %s: cache %+v", e.Case, e.Cache)
		}
	}
}
