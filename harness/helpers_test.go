package harness

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/algal-assay/assay/engine/effect"
	"github.com/algal-assay/assay/engine/evidence"
	"github.com/algal-assay/assay/engine/manifest"
	"github.com/algal-assay/assay/engine/store"
	"github.com/algal-assay/assay/engine/vm"
)

// testBench stands in for the lead's VM-backed workbench: it runs
// organisms on the real VM over a memory store, with executors built from
// the config's specs, and serves the store for verification. Hooks let a
// test fail or cancel a run part-way.
type testBench struct {
	st store.Store

	mu   sync.Mutex
	runs int
	// before is called before each run with its 1-based number; an error
	// fails that run.
	before func(n int) error
	// receiptReads counts Receipt calls by digest.
	receiptReads map[string]int
}

func newTestBench() *testBench { return &testBench{st: store.NewMemStore()} }

type testSession struct {
	b       *testBench
	m       *manifest.Manifest
	router  *effect.Router
	ordered bool
}

func (b *testBench) Open(_ context.Context, m *manifest.Manifest, specs map[string]string) (evidence.Session, error) {
	if _, err := b.st.Put(store.Manifests, m.Value); err != nil {
		return nil, err
	}
	names := make([]string, 0, len(specs))
	for n := range specs {
		names = append(names, n)
	}
	slices.Sort(names)
	var execs []effect.Executor
	ordered := false
	for _, n := range names {
		ex, err := effect.FromSpec(n, specs[n], "")
		if err != nil {
			return nil, err
		}
		ordered = ordered || strings.HasPrefix(specs[n], "scripted:")
		execs = append(execs, ex)
	}
	return &testSession{b: b, m: m, router: effect.NewRouter(execs...), ordered: ordered}, nil
}

func (s *testSession) Ordered() bool { return s.ordered }

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
	rec, err := vm.Run(s.m, args, &vm.Host{Store: s.b.st, Router: s.router, Context: ctx})
	if err != nil {
		return nil, "", err
	}
	d, err := s.b.st.Put(store.Runs, rec)
	return rec, d, err
}

func (b *testBench) Manifest(d string) (*manifest.Manifest, error) {
	v, ok, err := b.st.Get(store.Manifests, d)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("manifest %s not in the store", d)
	}
	return manifest.ParseValue(v)
}

func (b *testBench) Receipt(d string) (map[string]any, error) {
	b.mu.Lock()
	if b.receiptReads == nil {
		b.receiptReads = map[string]int{}
	}
	b.receiptReads[d]++
	b.mu.Unlock()
	v, ok, err := b.st.Get(store.Runs, d)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("receipt %s not in the store", d)
	}
	rec, isObj := v.(map[string]any)
	if !isObj {
		return nil, errors.New("receipt is not an object")
	}
	return rec, nil
}

func (b *testBench) Replay(_ context.Context, rec map[string]any, m *manifest.Manifest) ([]string, error) {
	rep, err := vm.Verify(rec, m, vm.VerifyOptions{Store: b.st})
	if err != nil {
		return nil, err
	}
	return rep.Mismatches, nil
}

// runEveryFixture runs each fixture workload under suites/ on a fresh
// test bench, in a subtest named after its file, and hands check the
// outcome and the bench that stored its receipts.
func runEveryFixture(t *testing.T, check func(t *testing.T, o *Outcome, b *testBench)) {
	t.Helper()
	paths, err := Discover(filepath.Join("..", "suites"))
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
func runOnTestBench(t *testing.T, w *Workload, concurrency int) (*Outcome, *testBench) {
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
func loadWorkload(t testing.TB, path string) *Workload {
	t.Helper()
	w, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return w
}
