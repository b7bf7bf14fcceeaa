package harness

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/algal-assay/assay/engine/bench"
	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/harness/parts"
	"github.com/algal-assay/assay/harness/workload"
	"github.com/algal-assay/assay/runrecord"
)

// runFiles reads every file of a run directory but the record (which
// carries wall-clock times).
func runFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, de := range des {
		if de.Name() == runrecord.RecordFile {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, de.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[de.Name()] = b
	}
	return out
}

func sameFiles(t *testing.T, what string, got, want map[string][]byte) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d files, want %d", what, len(got), len(want))
	}
	for name, b := range want {
		if !bytes.Equal(got[name], b) {
			t.Errorf("%s: %s differs from the uninterrupted run's", what, name)
		}
	}
}

// partRuns counts the case runs of the given parts (1-based).
func partRuns(ps []workload.Part, ns ...int) int {
	n := 0
	for _, p := range ps {
		if slices.Contains(ns, p.N) {
			n += (p.CaseTo - p.CaseFrom) * (p.SystemTo - p.SystemFrom)
		}
	}
	return n
}

// recordIDs lists the evaluate phase's artifact ids by file.
func recordIDs(t *testing.T, dir string) map[string]string {
	t.Helper()
	v, err := runrecord.Read(dir, runrecord.Options{})
	if err != nil || v.Record == nil {
		t.Fatalf("record: %v", err)
	}
	out := map[string]string{}
	for _, ph := range v.Record.Phases {
		if ph.N == PhaseEvaluate {
			for _, a := range ph.Artifacts {
				out[a.File] = a.ID
			}
		}
	}
	return out
}

// A killed run's staging directory holding some finished part reports: a
// re-run takes the ones that are byte for byte a run's report and verify
// against the store and the part config, runs every other part (a torn
// report, an edited one with a recomputed digest, one with an extra field,
// a missing one), removes the leftover, and writes the run directory an
// uninterrupted run writes. The count of case runs is the runner's own.
func TestResumeTakesOnlyTheLeftoverPartsThatVerify(t *testing.T) {
	t.Parallel()
	w := synthWorkload(t, 3, 1400, true) // 6 parts of 256 cases (the last 120) x 3 systems
	b := newTestBench()
	ctx := context.Background()
	whole, err := Run(ctx, w, Options{Runner: b, Store: b, Out: t.TempDir(), Concurrency: 4})
	if err != nil || !whole.Passed() {
		t.Fatalf("uninterrupted run: %v %v", err, whole.Verification)
	}
	ps := whole.Compiled.Parts
	if len(ps) != 6 {
		t.Fatalf("%d parts", len(ps))
	}
	want := runFiles(t, whole.RunDir)

	out := t.TempDir()
	final := filepath.Join(out, w.Name, whole.Compiled.Slug)
	left := filepath.Join(out, w.Name, "."+whole.Compiled.Slug+".partial-killed")
	if err := os.MkdirAll(left, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range want {
		if strings.HasPrefix(name, "part-") {
			if err := os.WriteFile(filepath.Join(left, name), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	edit := func(p workload.Part, f func(map[string]any)) {
		path := filepath.Join(left, p.ReportFile())
		v, err := canon.ReadFile(path, 0)
		if err != nil {
			t.Fatal(err)
		}
		m := v.(map[string]any)
		f(m)
		delete(m, "digest")
		d, err := canon.Digest(m)
		if err != nil {
			t.Fatal(err)
		}
		m["digest"] = d
		data, _ := canon.Encode(m)
		if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Part 1 torn, part 2 claims a passed case failed (digest recomputed),
	// part 4 carries a field no report has, part 6 is missing.
	torn := filepath.Join(left, ps[0].ReportFile())
	data, _ := os.ReadFile(torn)
	if err := os.WriteFile(torn, data[:len(data)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	edit(ps[1], func(m map[string]any) {
		c := m["systems"].([]any)[0].(map[string]any)["cases"].([]any)[0].(map[string]any)
		c["passed"] = !c["passed"].(bool)
	})
	edit(ps[3], func(m map[string]any) { m["note"] = "hand-made" })
	if err := os.Remove(filepath.Join(left, ps[5].ReportFile())); err != nil {
		t.Fatal(err)
	}

	b.runs, b.receiptReads = 0, nil
	var mu sync.Mutex
	var last Progress
	o, err := Run(ctx, w, Options{Runner: b, Store: b, Out: out, Concurrency: 4, OnProgress: func(p Progress) {
		mu.Lock()
		defer mu.Unlock()
		if p.Done > last.Done {
			last = p
		}
	}})
	if err != nil || !o.Passed() {
		t.Fatalf("resumed run: %v %v", err, o.Verification)
	}
	if ran, wantRan := b.runs, partRuns(ps, 1, 2, 4, 6); ran != wantRan {
		t.Errorf("the resumed run made %d case runs, want %d (parts 1, 2, 4 and 6)", ran, wantRan)
	}
	if o.Resume == nil || !slices.Equal(o.Resume.Reused, []int{3, 5}) || !slices.Equal(o.Resume.Ran, []int{1, 2, 4, 6}) || len(o.Resume.Rejected) != 3 {
		t.Fatalf("resume: %+v", o.Resume)
	}
	for i, frag := range []string{ps[0].ReportFile() + ":1:", ps[1].ReportFile() + ": systems[sys-01].passed", ps[3].ReportFile() + `: report: unknown key "note"`} {
		if !strings.Contains(o.Resume.Rejected[i], frag) {
			t.Errorf("rejection %d %q does not mention %q", i, o.Resume.Rejected[i], frag)
		}
	}
	if len(o.Notes) == 0 || !strings.Contains(o.Notes[0], "2 of 6 parts reused") || !strings.Contains(o.Notes[0], "4 run") {
		t.Errorf("notes: %q", o.Notes)
	}
	if wantReused := partRuns(ps, 3, 5); last.Reused != wantReused || last.Done != last.Total {
		t.Errorf("last progress %+v, want %d reused of %d done", last, wantReused, last.Total)
	}
	sameFiles(t, "resumed run", runFiles(t, final), want)
	// A reused part is verified once, before it is taken: the verify
	// phase takes that check's result for the bytes it checked.
	for _, n := range []int{3, 5} {
		for _, d := range reportReceipts(t, want[ps[n-1].ReportFile()]) {
			if k := b.receiptReads[d]; k != 1 {
				t.Fatalf("part %d: receipt %s read %d times, want once", n, d, k)
			}
		}
	}
	ids := recordIDs(t, final)
	for _, p := range ps {
		id := "part-report"
		if p.N == 3 || p.N == 5 {
			id = parts.ReusedReport
		}
		if ids[p.ReportFile()] != id {
			t.Errorf("record: %s is %q, want %q", p.ReportFile(), ids[p.ReportFile()], id)
		}
	}
	if _, err := os.Stat(left); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the claimed leftover is still there: %v", err)
	}

	// A complete run of the same inputs is re-run in full, and so is a
	// leftover under Fresh (which removes it as any leftover).
	if err := os.MkdirAll(left, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if err := os.WriteFile(filepath.Join(left, p.ReportFile()), want[p.ReportFile()], 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b.runs = 0
	o, err = Run(ctx, w, Options{Runner: b, Store: b, Out: out, Concurrency: 4, Fresh: true})
	if err != nil || !o.Passed() || o.Resume != nil {
		t.Fatalf("fresh run: %v %+v", err, o.Resume)
	}
	if b.runs != partRuns(ps, 1, 2, 3, 4, 5, 6) {
		t.Errorf("fresh run made %d case runs", b.runs)
	}
	if _, err := os.Stat(left); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a fresh run left the leftover: %v", err)
	}
}

// A run that failed part-way (its runner broke in part 4) is installed
// as a failed run directory; the next run takes its finished parts 1 to 3
// and runs the rest.
func TestResumeAfterAFailedRun(t *testing.T) {
	t.Parallel()
	w := synthWorkload(t, 3, 1400, false)
	b := newTestBench()
	ctx := context.Background()
	whole, err := Run(ctx, w, Options{Runner: b, Store: b, Out: t.TempDir(), Concurrency: 1})
	if err != nil {
		t.Fatal(err)
	}
	parts := whole.Compiled.Parts
	out := t.TempDir()
	b.runs = 0
	stopAt := partRuns(parts, 1, 2, 3) + 7
	b.before = func(n int) error {
		if n == stopAt {
			return errors.New("the executor went away")
		}
		return nil
	}
	failed, err := Run(ctx, w, Options{Runner: b, Store: b, Out: out, Concurrency: 1})
	if err == nil || failed.Status != runrecord.RunFailed {
		t.Fatalf("the broken run: %v, status %s", err, failed.Status)
	}
	b.before, b.runs = nil, 0
	o, err := Run(ctx, w, Options{Runner: b, Store: b, Out: out, Concurrency: 1})
	if err != nil || !o.Passed() {
		t.Fatalf("re-run: %v", err)
	}
	if o.Resume == nil || !slices.Equal(o.Resume.Reused, []int{1, 2, 3}) || b.runs != partRuns(parts, 4, 5, 6) {
		t.Fatalf("resume %+v after %d case runs", o.Resume, b.runs)
	}
	sameFiles(t, "resumed run", runFiles(t, o.RunDir), runFiles(t, whole.RunDir))
}

// reportReceipts lists the receipt digests a bench report's cases name.
func reportReceipts(t *testing.T, report []byte) []string {
	t.Helper()
	v, err := canon.Parse(report, 0)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := bench.ParseReport(v)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range rep.Systems {
		for _, c := range s.Cases {
			out = append(out, c.ReceiptDigest)
		}
	}
	if len(out) == 0 {
		t.Fatal("a report naming no receipts")
	}
	return out
}

// The verify phase takes the resume check's result for a reused part only
// for the bytes that check read: the same bytes fold without a receipt
// read and to the aggregate a full check gives; other bytes (an edit made
// after the check) are checked in full, and a forged verdict is caught.
func TestVerifyTakesTheResumeCheckOnlyForTheBytesItChecked(t *testing.T) {
	t.Parallel()
	w := synthWorkload(t, 3, 600, true) // 3 parts
	b := newTestBench()
	ctx := context.Background()
	o, err := Run(ctx, w, Options{Runner: b, Store: b, Out: t.TempDir(), Concurrency: 2})
	if err != nil || !o.Passed() {
		t.Fatalf("run: %v %v", err, o.Verification)
	}
	c, p := o.Compiled, o.Compiled.Parts[1]
	cfg, err := bench.LoadConfig(filepath.Join(o.RunDir, p.ConfigFile()))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(o.RunDir, p.ReportFile())
	_, vp, why, err := parts.CheckLeftover(ctx, p, path, cfg, partChecker(c, b))
	if err != nil || why != "" || vp.Checked != 3*256 {
		t.Fatalf("the pre-check: %v %q %+v", err, why, vp)
	}
	full, err := parts.Derive(ctx, c, o.RunDir, parts.DeriveOptions{Written: true}, partChecker(c, b))
	if err != nil || !full.Verification.OK {
		t.Fatalf("full derivation: %v", err)
	}
	b.receiptReads = nil
	d, err := parts.Derive(ctx, c, o.RunDir, parts.DeriveOptions{Written: true, Verified: map[int]*parts.Verified{p.N: vp}}, partChecker(c, b))
	if err != nil || !d.Verification.OK || d.Verification.CheckedReceipts != full.Verification.CheckedReceipts || !sameJSON(d.Value, full.Value) {
		t.Fatalf("derivation with the pre-check: %v %+v", err, d.Verification)
	}
	report, _ := os.ReadFile(path)
	for _, r := range reportReceipts(t, report) {
		if b.receiptReads[r] != 0 {
			t.Fatalf("receipt %s of the pre-checked part read again", r)
		}
	}

	// The same report with one verdict flipped, its digest recomputed.
	v, _ := canon.Parse(report, 0)
	m := v.(map[string]any)
	cs := m["systems"].([]any)[0].(map[string]any)["cases"].([]any)[0].(map[string]any)
	cs["passed"] = !cs["passed"].(bool)
	delete(m, "digest")
	dg, _ := canon.Digest(m)
	m["digest"] = dg
	forged, _ := canon.Encode(m)
	if err := os.WriteFile(path, append(forged, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err = parts.Derive(ctx, c, o.RunDir, parts.DeriveOptions{Written: true, Verified: map[int]*parts.Verified{p.N: vp}}, partChecker(c, b))
	if err != nil {
		t.Fatal(err)
	}
	if d.Verification.OK || len(d.Verification.Mismatches) == 0 || !strings.HasPrefix(d.Verification.Mismatches[0], p.ReportFile()+": ") {
		t.Fatalf("a report edited after the pre-check verified: %+v", d.Verification)
	}
}
