package harness

import (
	"context"
	"path/filepath"
	"sync"
	"testing"

	"github.com/algal-assay/assay/engine/evidence"
	"github.com/algal-assay/assay/engine/manifest"
	"github.com/algal-assay/assay/engine/store"
	"github.com/algal-assay/assay/engine/vm"
	"github.com/algal-assay/assay/harness/workload"
)

// testBench is the VM-backed workbench the CLI runs on (vm.Workbench over
// a memory store), with hooks that let a test fail or cancel a run
// part-way and count the receipts verification reads. It holds the
// workbench rather than embedding it, so a run sees only the runner and
// store methods (no WithoutMemo or WithExecutors that would bypass the
// hooks).
type testBench struct {
	wb *vm.Workbench

	mu   sync.Mutex
	runs int
	// before is called before each run with its 1-based number; an error
	// fails that run.
	before func(n int) error
	// receiptReads counts Receipt calls by digest.
	receiptReads map[string]int
}

func newTestBench() *testBench {
	return &testBench{wb: &vm.Workbench{Store: store.NewMemStore()}}
}

// testSession is one contender's workbench session behind the hooks.
type testSession struct {
	evidence.Session
	b *testBench
}

func (b *testBench) Open(ctx context.Context, m *manifest.Manifest, specs map[string]string) (evidence.Session, error) {
	s, err := b.wb.Open(ctx, m, specs)
	if err != nil {
		return nil, err
	}
	return &testSession{Session: s, b: b}, nil
}

func (s *testSession) Run(ctx context.Context, args map[string]any) (map[string]any, string, error) {
	s.b.mu.Lock()
	s.b.runs++
	n, before := s.b.runs, s.b.before
	s.b.mu.Unlock()
	if before != nil {
		if err := before(n); err != nil {
			return nil, "", err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, "", err
	}
	return s.Session.Run(ctx, args)
}

func (b *testBench) Manifest(d string) (*manifest.Manifest, error) { return b.wb.Manifest(d) }

func (b *testBench) Receipt(d string) (map[string]any, error) {
	b.mu.Lock()
	if b.receiptReads == nil {
		b.receiptReads = map[string]int{}
	}
	b.receiptReads[d]++
	b.mu.Unlock()
	return b.wb.Receipt(d)
}

func (b *testBench) Replay(ctx context.Context, rec map[string]any, m *manifest.Manifest) ([]string, error) {
	return b.wb.Replay(ctx, rec, m)
}

// runEveryFixture runs each fixture workload under suites/ on a fresh
// test bench, in a subtest named after its file, and hands check the
// outcome and the bench that stored its receipts.
func runEveryFixture(t *testing.T, check func(t *testing.T, o *Outcome, b *testBench)) {
	t.Helper()
	paths, err := workload.Discover(filepath.Join("..", "suites"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) < 4 {
		t.Fatalf("want at least 4 fixture workloads, found %v", paths)
	}
	for _, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			b := newTestBench()
			o, err := runFixture(t, filepath.Base(p), b)
			if err != nil {
				t.Fatal(err)
			}
			check(t, o, b)
		})
	}
}

// runOnTestBench runs w on a fresh test bench into a temporary directory
// (concurrency 0 is the default).
func runOnTestBench(t *testing.T, w *workload.Workload, concurrency int) (*Outcome, *testBench) {
	t.Helper()
	b := newTestBench()
	o, err := Run(context.Background(), w, Options{Runner: b, Store: b, Out: t.TempDir(), Concurrency: concurrency})
	if err != nil {
		t.Fatal(err)
	}
	return o, b
}

// runWorkloadFile loads the workload at path and runs it on a fresh test
// bench.
func runWorkloadFile(t *testing.T, path string, concurrency int) (*Outcome, *testBench) {
	t.Helper()
	return runOnTestBench(t, loadWorkload(t, path), concurrency)
}

// loadWorkload loads the workload at path; the test stops if it does not
// load.
func loadWorkload(t testing.TB, path string) *workload.Workload {
	t.Helper()
	w, err := workload.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return w
}
