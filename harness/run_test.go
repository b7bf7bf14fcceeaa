package harness

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/algal-assay/assay/harness/rundir"
	"github.com/algal-assay/assay/harness/workload"
	"github.com/algal-assay/assay/runrecord"
)

func suitePath(name string) string { return filepath.Join("..", "suites", name) }

func runFixture(t *testing.T, name string, b *testBench) (*Outcome, error) {
	t.Helper()
	w := loadWorkload(t, suitePath(name))
	return Run(context.Background(), w, Options{Runner: b, Store: b, Out: t.TempDir(), Concurrency: 2})
}

func TestRunEveryFixturePasses(t *testing.T) {
	t.Parallel()
	runEveryFixture(t, func(t *testing.T, o *Outcome, _ *testBench) {
		if o.Status != runrecord.RunComplete {
			t.Fatalf("status %s", o.Status)
		}
		if !o.Verification.OK {
			t.Fatalf("verification: %v", o.Verification.Mismatches)
		}
		for _, g := range o.Gates {
			if !g.Passed {
				t.Errorf("gate %s: %s", g.Rule.Name(), g.Message)
			}
		}
		if !o.Passed() {
			t.Error("outcome does not pass")
		}
		t.Log("\n" + SummaryTable(o).Markdown())
	})
}

func TestRunDirectoryAndRecord(t *testing.T) {
	t.Parallel()
	b := newTestBench()
	w := loadWorkload(t, suitePath("ticket-triage.bench.yaml"))
	out := t.TempDir()
	o, err := Run(context.Background(), w, Options{Runner: b, Store: b, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(out, "ticket-triage", o.Compiled.Slug); o.RunDir != want {
		t.Fatalf("run dir %s, want %s", o.RunDir, want)
	}
	// The staging directory is created private (os.MkdirTemp); the run
	// directory it becomes is an ordinary, readable one.
	if st, err := os.Stat(o.RunDir); err != nil || st.Mode().Perm() != 0o755 {
		t.Fatalf("run directory mode %v (%v), want 0755", st.Mode().Perm(), err)
	}
	for _, f := range []string{workload.ConfigFile, rundir.ReportFile, rundir.VerificationFile, rundir.GateFile, rundir.SummaryFile, runrecord.AssemblyFile, runrecord.RecordFile,
		"scripted-cheap.json", "scripted-frontier.json", "system-cheap-single.json", "system-frontier-single.json", "system-escalating.json"} {
		if _, err := os.Stat(filepath.Join(o.RunDir, f)); err != nil {
			t.Errorf("missing %s: %v", f, err)
		}
	}
	view, err := runrecord.Read(o.RunDir, runrecord.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rec := view.Record
	if view.State != runrecord.StateRecord || rec == nil {
		t.Fatalf("state %s: %v", view.State, view.Problem)
	}
	if rec.Status != runrecord.RunComplete || rec.Pipeline != "ticket-triage" || rec.SourceRevision != 1 || rec.RunSlug != o.Compiled.Slug {
		t.Fatalf("record %+v", rec)
	}
	if rec.AssemblySHA256 == "" || rec.FinishedAt == nil {
		t.Fatalf("record not pinned or not finished: %+v", rec)
	}
	want := map[int][]string{
		PhaseCompile:   {"scripted-cheap.json", "scripted-frontier.json", workload.ConfigFile},
		PhaseSource:    nil,
		PhaseEvaluate:  {"system-cheap-single.json", "system-frontier-single.json", "system-escalating.json", rundir.ReportFile},
		PhaseVerify:    {rundir.VerificationFile},
		PhaseSummarize: {rundir.GateFile, rundir.SummaryFile, ReportHTMLFile},
	}
	for _, p := range rec.Phases {
		var files []string
		for _, a := range p.Artifacts {
			files = append(files, a.File)
		}
		if !slicesEqual(files, want[p.N]) {
			t.Errorf("phase %d artifacts %v, want %v", p.N, files, want[p.N])
		}
		wantStatus := runrecord.PhaseDone
		if p.N == PhaseSource {
			wantStatus = runrecord.PhaseSkipped
		}
		if p.Status != wantStatus {
			t.Errorf("phase %d status %s, want %s", p.N, p.Status, wantStatus)
		}
	}
	if ev := rec.Phases[2]; ev.Iterations != 3 || ev.Artifacts[2].Iteration != 3 {
		t.Errorf("evaluate loop: %d iterations, artifacts %+v", ev.Iterations, ev.Artifacts)
	}
	// The same inputs land in the same directory, replacing it whole, and
	// produce the same report bytes.
	first, _ := os.ReadFile(filepath.Join(o.RunDir, rundir.ReportFile))
	if err := os.WriteFile(filepath.Join(o.RunDir, "stale.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	o2, err := Run(context.Background(), w, Options{Runner: newTestBench(), Store: nil, Out: out})
	if err == nil || o2 != nil {
		t.Fatal("a run without a store must be refused")
	}
	b2 := newTestBench()
	o2, err = Run(context.Background(), w, Options{Runner: b2, Store: b2, Out: out, Concurrency: 1})
	if err != nil {
		t.Fatal(err)
	}
	second, _ := os.ReadFile(filepath.Join(o2.RunDir, rundir.ReportFile))
	if o2.RunDir != o.RunDir || string(first) != string(second) {
		t.Fatal("re-run did not reproduce the run directory")
	}
	if _, err := os.Stat(filepath.Join(o2.RunDir, "stale.txt")); !os.IsNotExist(err) {
		t.Fatal("re-run kept a file from the previous run directory")
	}
	entries, _ := os.ReadDir(filepath.Join(out, "ticket-triage"))
	if len(entries) != 1 {
		t.Fatalf("leftover staging directories: %v", entries)
	}
}

func slicesEqual(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestRunFailureMidRun(t *testing.T) {
	t.Parallel()
	b := newTestBench()
	b.before = func(n int) error {
		if n == 4 {
			return errors.New("executor host went away")
		}
		return nil
	}
	o, err := runFixture(t, "intent-select.foundry.yaml", b)
	if err == nil || !strings.Contains(err.Error(), "executor host went away") {
		t.Fatalf("err %v", err)
	}
	if o == nil || o.Status != runrecord.RunFailed || o.Passed() {
		t.Fatalf("outcome %+v", o)
	}
	view, err := runrecord.Read(o.RunDir, runrecord.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[int]string{}
	for _, p := range view.Record.Phases {
		got[p.N] = p.Status
	}
	want := map[int]string{1: "done", 2: "done", 3: "failed", 4: "pending", 5: "pending"}
	for n, s := range want {
		if got[n] != s {
			t.Errorf("phase %d %s, want %s", n, got[n], s)
		}
	}
	if view.Record.Status != runrecord.RunFailed || view.Record.Phases[1].Selected != SourceFiles {
		t.Errorf("record %+v", view.Record)
	}
}

func TestRunCancelled(t *testing.T) {
	t.Parallel()
	b := newTestBench()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b.before = func(n int) error {
		if n == 3 {
			cancel()
		}
		return nil
	}
	w := loadWorkload(t, suitePath("ticket-triage.bench.yaml"))
	o, err := Run(ctx, w, Options{Runner: b, Store: b, Out: t.TempDir(), Concurrency: 1})
	if !errors.Is(err, ErrCancelled) {
		t.Fatalf("err %v", err)
	}
	view, rerr := runrecord.Read(o.RunDir, runrecord.Options{})
	if rerr != nil {
		t.Fatal(rerr)
	}
	if view.Record.Status != runrecord.RunCancelled || view.Record.FinishedAt == nil {
		t.Fatalf("record %+v", view.Record)
	}
	// The interrupted phase stays running under a cancelled run.
	if p := view.Record.Phases[2]; p.Status != runrecord.PhaseRunning {
		t.Errorf("evaluate phase %s", p.Status)
	}
}

func TestRunCancelledBySignal(t *testing.T) {
	b := newTestBench()
	b.before = func(n int) error {
		if n == 2 {
			if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
				return err
			}
			time.Sleep(200 * time.Millisecond) // let the handler cancel the run
		}
		return nil
	}
	w := loadWorkload(t, suitePath("ticket-triage.bench.yaml"))
	o, err := Run(context.Background(), w, Options{Runner: b, Store: b, Out: t.TempDir(), Concurrency: 1, HandleSignals: true})
	if !errors.Is(err, ErrCancelled) {
		t.Fatalf("err %v", err)
	}
	// Said plainly: no staging path, no "already cancelled" from the
	// phase the signal interrupted.
	if err.Error() != "run cancelled: ticket-triage" {
		t.Errorf("err %q, want %q", err, "run cancelled: ticket-triage")
	}
	if o.Status != runrecord.RunCancelled {
		t.Fatalf("status %s", o.Status)
	}
}

// copyFixture writes a suite workload into a temp dir with its fixture
// paths made absolute, after edit.
func copyFixture(t *testing.T, name string, edit func(string) string) string {
	t.Helper()
	src, err := os.ReadFile(suitePath(name))
	if err != nil {
		t.Fatal(err)
	}
	fixtures, _ := filepath.Abs(filepath.Join("..", "fixtures"))
	body := strings.ReplaceAll(string(src), "../fixtures", filepath.ToSlash(fixtures))
	if edit != nil {
		body = edit(body)
	}
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func recordStatus(t *testing.T, dir string) string {
	t.Helper()
	v, err := runrecord.Read(dir, runrecord.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if v.Record == nil {
		t.Fatalf("%s: %v", dir, v.Problem)
	}
	return v.Record.Status
}

// Re-running the same inputs must never trade a complete run directory
// for a failed or cancelled one: the good run stays in place and the
// unfinished one is left beside it, named in the outcome.
func TestUnfinishedRerunKeepsCompleteRun(t *testing.T) {
	t.Parallel()
	w := loadWorkload(t, suitePath("ticket-triage.bench.yaml"))
	out := t.TempDir()
	b := newTestBench()
	good, err := Run(context.Background(), w, Options{Runner: b, Store: b, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	report, _ := os.ReadFile(filepath.Join(good.RunDir, rundir.ReportFile))

	failing := newTestBench()
	failing.before = func(n int) error {
		if n == 2 {
			return errors.New("executor host went away")
		}
		return nil
	}
	bad, err := Run(context.Background(), w, Options{Runner: failing, Store: failing, Out: out, Concurrency: 1})
	if err == nil || bad == nil || bad.Status != runrecord.RunFailed {
		t.Fatalf("err %v outcome %+v", err, bad)
	}
	if got := recordStatus(t, good.RunDir); got != runrecord.RunComplete {
		t.Fatalf("the complete run directory now says %s", got)
	}
	if again, _ := os.ReadFile(filepath.Join(good.RunDir, rundir.ReportFile)); string(again) != string(report) {
		t.Fatal("the complete run's report changed")
	}
	if bad.RunDir == good.RunDir || recordStatus(t, bad.RunDir) != runrecord.RunFailed {
		t.Fatalf("the failed run should stay beside it, got %s", bad.RunDir)
	}
	if !strings.Contains(strings.Join(bad.Warnings, "\n"), good.RunDir) {
		t.Errorf("no warning names the kept run directory: %v", bad.Warnings)
	}

	// A complete re-run replaces the directory again.
	b3 := newTestBench()
	third, err := Run(context.Background(), w, Options{Runner: b3, Store: b3, Out: out})
	if err != nil || third.RunDir != good.RunDir || recordStatus(t, third.RunDir) != runrecord.RunComplete {
		t.Fatalf("err %v dir %s", err, third.RunDir)
	}
}

// A failed run replaces an earlier failed run: only a complete run is
// protected.
func TestFailedRerunReplacesFailedRun(t *testing.T) {
	t.Parallel()
	w := loadWorkload(t, suitePath("ticket-triage.bench.yaml"))
	out := t.TempDir()
	var dirs []string
	for i := 0; i < 2; i++ {
		b := newTestBench()
		b.before = func(n int) error { return errors.New("down") }
		o, err := Run(context.Background(), w, Options{Runner: b, Store: b, Out: out, Concurrency: 1})
		if err == nil || o.Status != runrecord.RunFailed {
			t.Fatalf("err %v", err)
		}
		dirs = append(dirs, o.RunDir)
	}
	if dirs[0] != dirs[1] {
		t.Fatalf("dirs %v", dirs)
	}
	entries, _ := os.ReadDir(filepath.Dir(dirs[0]))
	if len(entries) != 1 {
		t.Fatalf("leftovers: %v", entries)
	}
}

// An exhausted habitat budget promotes nothing: the workload must not
// pass even when its gate has no rule that needs a promotion.
func TestExhaustedBudgetDoesNotPass(t *testing.T) {
	t.Parallel()
	p := copyFixture(t, "intent-select.foundry.yaml", func(s string) string {
		s = s[:strings.Index(s, "\ngate:")] + "\n"
		return s + "budget: { work: 1000000, attempts: 64, runs: 3 }\n"
	})
	o, _ := runWorkloadFile(t, p, 0)
	if o.Foundry == nil || o.Foundry.Report != nil {
		t.Fatal("the budget was not exhausted; tighten the fixture")
	}
	if o.Passed() {
		t.Fatal("a foundry that promoted nothing passed")
	}
}

// The signal handler cancels the record before it cancels the context, so
// a phase can fail on the closed record while ctx.Err() is still nil; the
// run is cancelled all the same.
func TestCancelledRecordMeansCancelledRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w := loadWorkload(t, suitePath("ticket-triage.bench.yaml"))
	rec, err := runrecord.Create(dir, Assembly(w), runrecord.Meta{RunSlug: "s"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if runCancelled(ctx, rec) {
		t.Fatal("a running record with a live context is not cancelled")
	}
	if err := rec.Cancel(); err != nil {
		t.Fatal(err)
	}
	if !runCancelled(ctx, rec) {
		t.Fatal("a cancelled record must count as a cancelled run")
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	rec2, err := runrecord.Create(t.TempDir(), Assembly(w), runrecord.Meta{RunSlug: "s"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !runCancelled(done, rec2) {
		t.Fatal("a cancelled context must count as a cancelled run")
	}
}
