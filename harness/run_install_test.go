package harness

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/foundry"
	"github.com/algal-assay/assay/harness/rundir"
	"github.com/algal-assay/assay/harness/workload"
	"github.com/algal-assay/assay/runrecord"
	"github.com/gofrs/flock"
)

// plantOnFirstCase runs ticket-triage and, when its first case finishes,
// calls plant with the staging directory the run is writing.
func plantOnFirstCase(t *testing.T, plant func(stage string)) (*Outcome, error) {
	t.Helper()
	w := loadWorkload(t, suitePath("ticket-triage.bench.yaml"))
	out := t.TempDir()
	b := newTestBench()
	var once sync.Once
	o, err := Run(context.Background(), w, Options{Runner: b, Store: b, Out: out, Concurrency: 1, OnProgress: func(Progress) {
		once.Do(func() {
			var m []string
			all, _ := filepath.Glob(filepath.Join(out, w.Name, ".*.partial-*"))
			for _, p := range all {
				if !strings.HasSuffix(p, ".lock") {
					m = append(m, p)
				}
			}
			if len(m) != 1 {
				t.Errorf("staging directories: %v", m)
				return
			}
			plant(m[0])
		})
	}})
	return o, err
}

// A disk that fills before the record can say how the run ended must not
// install a run directory whose record says running: it stays in its
// staging directory, named. (The record is made unwritable by putting a
// directory where its rename lands, which fails like a full disk does.)
func TestUnwritableRecordIsNotInstalled(t *testing.T) {
	t.Parallel()
	o, err := plantOnFirstCase(t, func(stage string) {
		rec := filepath.Join(stage, runrecord.RecordFile)
		if err := os.Remove(rec); err != nil {
			t.Error(err)
		}
		if err := os.MkdirAll(filepath.Join(rec, "full"), 0o755); err != nil {
			t.Error(err)
		}
	})
	if err == nil || o == nil {
		t.Fatalf("a run whose record could not be written succeeded: %v", err)
	}
	if o.Status != runrecord.RunRunning || o.Passed() {
		t.Fatalf("status %s passed %v", o.Status, o.Passed())
	}
	if _, serr := os.Stat(o.Compiled.RunDir); !os.IsNotExist(serr) {
		t.Fatalf("the run directory %s was installed (%v)", o.Compiled.RunDir, serr)
	}
	if !strings.Contains(filepath.Base(o.RunDir), ".partial-") || !strings.Contains(err.Error(), "stays in "+o.RunDir) {
		t.Fatalf("RunDir %s, error %v: the staging directory is not named", o.RunDir, err)
	}
	if _, serr := os.Stat(o.RunDir); serr != nil {
		t.Fatalf("the staging directory is gone: %v", serr)
	}
}

// ENOSPC on an artifact (report.json pointed at /dev/full) fails the run,
// and the run directory installed says failed.
func TestDiskFullArtifactEndsFailed(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full on this system")
	}
	o, err := plantOnFirstCase(t, func(stage string) {
		if err := os.Symlink("/dev/full", filepath.Join(stage, rundir.ReportFile)); err != nil {
			t.Error(err)
		}
	})
	if err == nil || !strings.Contains(err.Error(), "no space left on device") {
		t.Fatalf("err %v, want ENOSPC", err)
	}
	if o.Status != runrecord.RunFailed || o.RunDir != o.Compiled.RunDir || recordStatus(t, o.RunDir) != runrecord.RunFailed {
		t.Fatalf("status %s in %s", o.Status, o.RunDir)
	}
}

// Runs of the same inputs at once: each builds its own staging directory,
// installs one after the other under the run directory's lock, and every
// one after the first finds an identical complete run, says so and passes.
func TestConcurrentRunsOfOneSlug(t *testing.T) {
	t.Parallel()
	w := loadWorkload(t, suitePath("ticket-triage.bench.yaml"))
	out := t.TempDir()
	const n = 4
	outcomes := make([]*Outcome, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			b := newTestBench()
			outcomes[i], errs[i] = Run(context.Background(), w, Options{Runner: b, Store: b, Out: out, Concurrency: 2})
		})
	}
	wg.Wait()
	noted := 0
	for i, o := range outcomes {
		if errs[i] != nil || o == nil || !o.Passed() {
			t.Fatalf("run %d: %v", i, errs[i])
		}
		if o.RunDir != o.Compiled.RunDir {
			t.Errorf("run %d points at %s, not the run directory", i, o.RunDir)
		}
		if len(o.Notes) > 0 {
			if !strings.Contains(o.Notes[0], "identical complete run") {
				t.Errorf("run %d: note %q", i, o.Notes[0])
			}
			noted++
		}
	}
	if noted != n-1 {
		t.Errorf("%d runs say they found an identical run, want %d", noted, n-1)
	}
	entries, err := os.ReadDir(filepath.Join(out, w.Name))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || !entries[0].IsDir() {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Fatalf("beside the run directory: %v", names)
	}
}

// A writer that holds a run directory's lock past rundir.LockWait is
// reported by name, with a coded error, and nothing is written.
func TestHeldRunLockIsReported(t *testing.T) {
	w := loadWorkload(t, suitePath("ticket-triage.bench.yaml"))
	out := t.TempDir()
	c, err := workload.Compile(w, out, foundry.AdmitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(c.RunDir), 0o755); err != nil {
		t.Fatal(err)
	}
	lock := filepath.Join(filepath.Dir(c.RunDir), "."+c.Slug+rundir.LockSuffix)
	held := flock.New(lock)
	if ok, err := held.TryLock(); err != nil || !ok {
		t.Fatal(err)
	}
	defer held.Unlock()
	old := rundir.LockWait
	rundir.LockWait = 50 * time.Millisecond
	defer func() { rundir.LockWait = old }()
	b := newTestBench()
	o, err := Run(context.Background(), w, Options{Runner: b, Store: b, Out: out})
	if o != nil || fault.CodeOf(err) != rundir.CodeLocked || !strings.Contains(err.Error(), "holds the lock on run directory "+c.RunDir) {
		t.Fatalf("outcome %v, err %v", o, err)
	}
}

// A re-run of inputs whose complete run an earlier invocation installed
// says the kept run is from an earlier run, not that another run "finished
// first" (which only a run racing it can do).
func TestRerunNotesTheEarlierRun(t *testing.T) {
	t.Parallel()
	w := loadWorkload(t, suitePath("ticket-triage.bench.yaml"))
	out := t.TempDir()
	var notes [][]string
	for range 2 {
		b := newTestBench()
		o, err := Run(context.Background(), w, Options{Runner: b, Store: b, Out: out, Concurrency: 2})
		if err != nil || !o.Passed() {
			t.Fatal(err)
		}
		notes = append(notes, o.Notes)
	}
	if len(notes[0]) != 0 {
		t.Errorf("the first run has notes %q", notes[0])
	}
	if len(notes[1]) != 1 || !strings.Contains(notes[1][0], "from an earlier run") || strings.Contains(notes[1][0], "finished first") {
		t.Errorf("the re-run's notes: %q", notes[1])
	}
}
