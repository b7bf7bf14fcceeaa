package archive

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/effect"
	"github.com/algal-assay/assay/engine/fault"
)

func request(ticket string) effect.Request {
	return effect.Request{"contract": effect.EffectContract, "cellId": "route", "kind": "classifier", "prompt": "Route.",
		"context": map[string]any{"inputs": map[string]any{"ticket": ticket}}, "output": map[string]any{"kind": "text"}}
}

const cfgDigest = "sha256:1111111111111111111111111111111111111111111111111111111111111111"

// receiptFor is a minimal receipt holding one live record per request.
func receiptFor(t testing.TB, answers map[string]string) (map[string]any, []effect.Request) {
	t.Helper()
	var effects []any
	var reqs []effect.Request
	for ticket, out := range answers {
		req := request(ticket)
		d, _ := canon.Digest(req)
		reqs = append(reqs, req)
		effects = append(effects, effect.Record{RequestDigest: d, Executor: "cheap", Output: out,
			Usage: map[string]any{"model": "m-1", "tokensIn": 3.0}, ConfigurationDigest: cfgDigest}.Value())
	}
	return map[string]any{"contract": "algal.run.v1", "effects": effects, "args": map[string]any{}}, reqs
}

func apply(t *testing.T, a *Archive, c, now string, replace bool, answers map[string]string) string {
	t.Helper()
	r, reqs := receiptFor(t, answers)
	d, _ := canon.Digest(r)
	u := Update{Workload: "w", Entries: []Entry{{Contender: c, Case: "case-1", Receipt: d, Models: []string{"m-1"}}},
		Receipts: map[string]map[string]any{d: r}, Now: now, Replace: replace}
	u.Requests = append(u.Requests, reqs...)
	if err := a.Apply(u); err != nil {
		t.Fatal(err)
	}
	return d
}

func TestApplyKeepsRecordedAtAndPrunes(t *testing.T) {
	t.Parallel()
	a, err := Open(filepath.Join(t.TempDir(), "receipts"))
	if err != nil {
		t.Fatal(err)
	}
	first := apply(t, a, "sys", "2026-01-01T00:00:00Z", false, map[string]string{"x": "billing"})
	apply(t, a, "sys", "2026-02-02T00:00:00Z", false, map[string]string{"x": "billing"})
	es, err := a.Entries()
	if err != nil || len(es) != 1 || es[0].RecordedAt != "2026-01-01T00:00:00Z" {
		t.Fatalf("entries %+v %v: an unchanged receipt must keep its recordedAt", es, err)
	}
	second := apply(t, a, "sys", "2026-03-03T00:00:00Z", false, map[string]string{"x": "technical"})
	es, _ = a.Entries()
	if es[0].Receipt != second || es[0].RecordedAt != "2026-03-03T00:00:00Z" {
		t.Fatalf("entries %+v after a new answer", es)
	}
	if _, err := a.Receipt(first); err == nil {
		t.Error("the replaced receipt was not pruned")
	}
	runs, _ := filepath.Glob(filepath.Join(a.Dir(), "runs", "*.json"))
	values, _ := filepath.Glob(filepath.Join(a.Dir(), "values", "*.json"))
	if len(runs) != 1 || len(values) != 1 {
		t.Errorf("archive holds %d receipts and %d requests, want 1 and 1", len(runs), len(values))
	}
	index, _ := os.ReadFile(filepath.Join(a.Dir(), IndexFile))
	if strings.Count(string(index), "\n") != 1 {
		t.Errorf("index:\n%s", index)
	}
}

func TestReadsAreVerified(t *testing.T) {
	t.Parallel()
	a, _ := Open(filepath.Join(t.TempDir(), "receipts"))
	d := apply(t, a, "sys", "2026-01-01T00:00:00Z", false, map[string]string{"x": "billing"})
	hex, _ := canon.DigestHex(d)
	path := filepath.Join(a.Dir(), "runs", hex+".json")
	b, _ := os.ReadFile(path)
	if err := os.WriteFile(path, []byte(strings.Replace(string(b), "billing", "bugging", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := a.Answers("w")
	var f *fault.Error
	if !errors.As(err, &f) || f.Code != fault.DigestMismatch {
		t.Fatalf("a tampered receipt was served: %v", err)
	}
}

func TestIndexIsStrict(t *testing.T) {
	t.Parallel()
	for name, body := range map[string]string{
		"duplicate": `{"case":"c","contender":"s","models":[],"receipt":"` + cfgDigest + `","recordedAt":"t","workload":"w"}` + "\n" +
			`{"case":"c","contender":"s","models":[],"receipt":"` + cfgDigest + `","recordedAt":"t","workload":"w"}` + "\n",
		"unknown field": `{"case":"c","contender":"s","models":[],"receipt":"` + cfgDigest + `","recordedAt":"t","workload":"w","key":"x"}` + "\n",
		"bad digest":    `{"case":"c","contender":"s","models":[],"receipt":"abc","recordedAt":"t","workload":"w"}` + "\n",
		// Repeat 1 is written without the field, so "repeat":1 would be a
		// second spelling of the same entry.
		"repeat 1 written": `{"case":"c","contender":"s","models":[],"receipt":"` + cfgDigest + `","recordedAt":"t","repeat":1,"workload":"w"}` + "\n",
		"repeat 33":        `{"case":"c","contender":"s","models":[],"receipt":"` + cfgDigest + `","recordedAt":"t","repeat":33,"workload":"w"}` + "\n",
		"repeat 2.5":       `{"case":"c","contender":"s","models":[],"receipt":"` + cfgDigest + `","recordedAt":"t","repeat":2.5,"workload":"w"}` + "\n",
		"repeat twice": `{"case":"c","contender":"s","models":[],"receipt":"` + cfgDigest + `","recordedAt":"t","repeat":2,"workload":"w"}` + "\n" +
			`{"case":"c","contender":"s","models":[],"receipt":"` + cfgDigest + `","recordedAt":"t","repeat":2,"workload":"w"}` + "\n",
		"cache empty":         cacheLine(`[]`),
		"cache unknown field": cacheLine(`[{"executor":"x","request":"` + cfgDigest + `","read":1,"write":0,"cost":1}]`),
		"cache bad request":   cacheLine(`[{"executor":"x","request":"abc","read":1,"write":0}]`),
		"cache negative":      cacheLine(`[{"executor":"x","request":"` + cfgDigest + `","read":-1,"write":2}]`),
		"cache fraction":      cacheLine(`[{"executor":"x","request":"` + cfgDigest + `","read":1.5,"write":0}]`),
		"cache zero":          cacheLine(`[{"executor":"x","request":"` + cfgDigest + `","read":0,"write":0}]`),
		"cache twice": cacheLine(`[{"executor":"x","request":"` + cfgDigest + `","read":1,"write":0},` +
			`{"executor":"x","request":"` + cfgDigest + `","read":1,"write":0}]`),
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, IndexFile), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
			a, _ := Open(dir)
			_, err := a.Entries()
			var f *fault.Error
			if !errors.As(err, &f) || f.Code != Code || f.Line == 0 {
				t.Fatalf("err = %v, want %s with a line", err, Code)
			}
		})
	}
}

func cacheLine(list string) string {
	return `{"cache":` + list + `,"case":"c","contender":"s","models":[],"receipt":"` + cfgDigest + `","recordedAt":"t","workload":"w"}` + "\n"
}

// An entry's cache list round-trips through the index, and a recorder
// replaying the entry's answer logs the recorded cache tokens.
func TestCacheTokensRoundTrip(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	body := cacheLine(`[{"executor":"cheap","read":7,"request":"` + cfgDigest + `","write":3}]`)
	if err := os.WriteFile(filepath.Join(dir, IndexFile), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	a, _ := Open(dir)
	e, err := a.Entries()
	if err != nil {
		t.Fatal(err)
	}
	if len(e) != 1 || len(e[0].Cache) != 1 || e[0].Cache[0] != (CacheTokens{Executor: "cheap", Request: cfgDigest, Read: 7, Write: 3}) {
		t.Fatalf("entries %+v", e)
	}
	line, err := canon.Encode(e[0].value())
	if err != nil || string(line)+"\n" != body {
		t.Errorf("re-encoded %s, want %s", line, body)
	}
}

type countingLive struct{ calls int }

func (c *countingLive) ID() string { return "cheap" }
func (c *countingLive) Describe() effect.Descriptor {
	return effect.Descriptor{ConfigurationDigest: cfgDigest}
}
func (c *countingLive) Execute(context.Context, effect.Request) (effect.Response, error) {
	c.calls++
	return effect.Response{Output: "live"}, nil
}

func TestRecorderModes(t *testing.T) {
	t.Parallel()
	a, _ := Open(filepath.Join(t.TempDir(), "receipts"))
	apply(t, a, "sys", "2026-01-01T00:00:00Z", false, map[string]string{"known": "billing"})
	answers, err := a.Answers("w")
	if err != nil || answers.Len() != 1 {
		t.Fatalf("answers %d %v", answers.Len(), err)
	}
	desc := effect.Descriptor{Effects: effect.ModelEffects, ConfigurationDigest: cfgDigest}
	for _, tc := range []struct {
		mode      Mode
		ticket    string
		want      any
		liveCalls int
		miss      bool
	}{
		{None, "known", "billing", 0, false},
		{None, "new", nil, 0, true},
		{Missing, "known", "billing", 0, false},
		{Missing, "new", "live", 1, false},
		{All, "known", "live", 1, false},
	} {
		live := &countingLive{}
		log := NewLog()
		r := NewRecorder("cheap", desc, tc.mode, live, answers, log)
		rec, err := effect.Execute(context.Background(), r, request(tc.ticket), 0)
		if err != nil {
			t.Fatal(err)
		}
		if tc.miss {
			if rec.Err == nil || rec.Err.Code != fault.EffectUnbound || len(log.Misses()) != 1 {
				t.Errorf("%s %s: %+v, want a recorded miss", tc.mode, tc.ticket, rec)
			}
		} else if rec.Output != tc.want {
			t.Errorf("%s %s: output %v, want %v", tc.mode, tc.ticket, rec.Output, tc.want)
		}
		if live.calls != tc.liveCalls {
			t.Errorf("%s %s: %d live calls, want %d", tc.mode, tc.ticket, live.calls, tc.liveCalls)
		}
		if tc.mode == None && !tc.miss && (rec.ConfigurationDigest != cfgDigest || rec.Usage["model"] != "m-1") {
			t.Errorf("replayed record %+v is not the recorded one", rec)
		}
	}
}

// Two recordings of one case: each repeat is answered by its own, a
// repeat with none is a miss, and the index says repeat only from 2 on.
func TestRepeatRecordingsAnswerTheirRepeatOnly(t *testing.T) {
	t.Parallel()
	a, _ := Open(filepath.Join(t.TempDir(), "receipts"))
	r1, reqs := receiptFor(t, map[string]string{"x": "billing"})
	r2, _ := receiptFor(t, map[string]string{"x": "technical"})
	d1, _ := canon.Digest(r1)
	d2, _ := canon.Digest(r2)
	err := a.Apply(Update{Workload: "w", Now: "2026-01-01T00:00:00Z", Requests: reqs,
		Entries:  []Entry{{Contender: "sys", Case: "case-1", Repeat: 2, Receipt: d2, Models: []string{"m-1"}}, {Contender: "sys", Case: "case-1", Repeat: 1, Receipt: d1, Models: []string{"m-1"}}},
		Receipts: map[string]map[string]any{d1: r1, d2: r2}})
	if err != nil {
		t.Fatal(err)
	}
	index, _ := os.ReadFile(filepath.Join(a.Dir(), IndexFile))
	lines := strings.Split(strings.TrimSpace(string(index)), "\n")
	if len(lines) != 2 || strings.Contains(lines[0], `"repeat"`) || !strings.Contains(lines[1], `"repeat":2`) {
		t.Fatalf("index:\n%s", index)
	}
	desc := effect.Descriptor{Effects: effect.ModelEffects, ConfigurationDigest: cfgDigest}
	for rep, want := range map[int]any{1: "billing", 2: "technical", 3: nil} {
		answers, err := a.RepeatAnswers("w", rep)
		if err != nil {
			t.Fatal(err)
		}
		log := NewLog()
		r := NewRecorder("cheap", desc, None, nil, answers, log)
		r.Repeat = rep
		rec, err := effect.Execute(context.Background(), r, request("x"), 0)
		if err != nil {
			t.Fatal(err)
		}
		if want == nil {
			if ms := log.Misses(); len(ms) != 1 || ms[0].Repeat != 3 || !strings.Contains(rec.Err.Message, "in repeat 3") {
				t.Fatalf("repeat 3: %+v, misses %+v", rec, ms)
			}
			continue
		}
		if rec.Output != want {
			t.Fatalf("repeat %d answered %v, want %v", rep, rec.Output, want)
		}
	}
	// Answers is repeat 1's table, as for archives written before repeats.
	if t1, _ := a.Answers("w"); t1.Len() != 1 {
		t.Fatal("Answers does not read repeat 1")
	}
}

// A replayed answer brings the cache tokens recorded with it into the
// run's log, and only under the configuration it was recorded with: an
// entry of another configuration with the same request lends it none.
func TestReplayLogsTheRecordedCacheTokens(t *testing.T) {
	t.Parallel()
	a, _ := Open(filepath.Join(t.TempDir(), "receipts"))
	const otherCfg = "sha256:2222222222222222222222222222222222222222222222222222222222222222"
	req := request("known")
	d, _ := canon.Digest(req)
	u := Update{Workload: "w", Receipts: map[string]map[string]any{}, Now: "2026-01-01T00:00:00Z"}
	for i, x := range []struct {
		cfg   string
		cache []CacheTokens
	}{
		{cfgDigest, []CacheTokens{{Executor: "cheap", Request: d, Read: 7, Write: 2}}},
		{otherCfg, nil},
	} {
		r := map[string]any{"contract": "algal.run.v1", "args": map[string]any{"i": float64(i)}, "effects": []any{effect.Record{RequestDigest: d, Executor: "cheap", Output: "billing",
			Usage: map[string]any{"model": "m-1", "tokensIn": 30.0}, ConfigurationDigest: x.cfg}.Value()}}
		rd, _ := canon.Digest(r)
		u.Receipts[rd] = r
		u.Entries = append(u.Entries, Entry{Contender: "sys", Case: "case-" + x.cfg[7:8], Receipt: rd, Models: []string{"m-1"}, Cache: x.cache})
	}
	if err := a.Apply(u); err != nil {
		t.Fatal(err)
	}
	answers, err := a.Answers("w")
	if err != nil {
		t.Fatal(err)
	}
	for cfg, want := range map[string]bool{cfgDigest: true, otherCfg: false} {
		log := NewLog()
		r := NewRecorder("cheap", effect.Descriptor{Effects: effect.ModelEffects, ConfigurationDigest: cfg}, None, nil, answers, log)
		if rec, err := effect.Execute(context.Background(), r, req, 0); err != nil || rec.Output != "billing" {
			t.Fatalf("%s: replay %+v %v", cfg, rec, err)
		}
		c, ok := log.Cache("cheap", d)
		if ok != want || want && (c.Read != 7 || c.Write != 2) {
			t.Errorf("configuration %s: logged cache %+v %v, want %v", cfg[:9], c, ok, want)
		}
	}
}
