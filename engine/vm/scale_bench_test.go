package vm

import (
	"context"
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/algal-assay/assay/engine/bench"
	"github.com/algal-assay/assay/engine/effect"
	"github.com/algal-assay/assay/engine/evidence"
	"github.com/algal-assay/assay/engine/manifest"
	"github.com/algal-assay/assay/engine/store"
)

// scaleConfig is a bench of nSystems triage systems by nCases tickets.
// Each system's scripted table answers by cell (no queue), so its cases
// may run in any order.
func scaleConfig(b testing.TB, dir string, nSystems, nCases int) *bench.Config {
	b.Helper()
	m := mustManifest(b, triageJSON)
	cfg := &bench.Config{}
	for i := 0; i < nCases; i++ {
		cfg.Cases = append(cfg.Cases, bench.Case{
			ID:     fmt.Sprintf("t%d", i),
			Args:   map[string]any{"ticket": fmt.Sprintf("Ticket %d: the export button crashes the app on large reports.", i)},
			Expect: map[string]any{"summary": fmt.Sprintf("Ticket %d: the export button crashes the app on large reports.", i)},
		})
	}
	labels := []string{"bug", "feature", "bug", "question", "bug", "bug", "feature", "bug"}
	for s := 0; s < nSystems; s++ {
		path := filepath.Join(dir, fmt.Sprintf("s%d.responses.json", s))
		writeJSON(b, path, map[string]any{"route": labels[s%len(labels)]})
		cfg.Systems = append(cfg.Systems, bench.System{ID: fmt.Sprintf("system-%d", s), Manifest: m,
			Executors: map[string]string{"scripted": "scripted:" + path}})
	}
	return cfg
}

func peakRSSMiB() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Maxrss) / 1024 // Linux reports KiB
}

// BenchmarkBench8x256 runs and then verifies a bench of 8 systems by 256
// cases with scripted executors over the file store, reporting each
// phase's seconds, their ratio and the process's peak RSS.
func BenchmarkBench8x256(b *testing.B) {
	ctx := context.Background()
	var runS, verifyS float64
	for i := 0; i < b.N; i++ {
		dir := b.TempDir()
		cfg := scaleConfig(b, dir, 8, 256)
		wb, err := NewWorkbench(filepath.Join(dir, "store"))
		if err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		rep, err := bench.Run(ctx, cfg, wb, bench.Options{})
		if err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		res, err := bench.Verify(ctx, rep.Value(), wb)
		if err != nil || !res.OK || res.CheckedReceipts != 8*256 {
			b.Fatal(err, res)
		}
		runS += t1.Sub(t0).Seconds()
		verifyS += time.Since(t1).Seconds()
	}
	b.ReportMetric(runS/float64(b.N), "run-s")
	b.ReportMetric(verifyS/float64(b.N), "verify-s")
	b.ReportMetric(verifyS/runS, "verify/run")
	b.ReportMetric(peakRSSMiB(), "peak-RSS-MiB")
}

// sleeper is a model executor that takes 20 ms to answer, standing in for
// a slow remote model so the benchmark measures how well cases overlap.
type sleeper struct{}

func (sleeper) ID() string { return "classify-small" } // the preset the triage routes to
func (sleeper) Describe() effect.Descriptor {
	return effect.Descriptor{Effects: []string{"agent", "classifier"}}
}
func (sleeper) Execute(ctx context.Context, _ effect.Request) (effect.Response, error) {
	select {
	case <-time.After(20 * time.Millisecond):
	case <-ctx.Done():
		return effect.Response{}, ctx.Err()
	}
	return effect.Response{Output: "bug"}, nil
}

// sleepyRunner serves every system with the sleeper.
type sleepyRunner struct{ st store.Store }

func (r sleepyRunner) Open(_ context.Context, m *manifest.Manifest, _ map[string]string) (evidence.Session, error) {
	return sleepySession{r.st, m}, nil
}

type sleepySession struct {
	st store.Store
	m  *manifest.Manifest
}

func (sleepySession) Ordered() bool { return false }
func (s sleepySession) Run(ctx context.Context, args map[string]any) (map[string]any, string, error) {
	rec, err := Run(s.m, args, &Host{Store: s.st, Router: effect.NewRouter(sleeper{}), Context: ctx})
	if err != nil {
		return nil, "", err
	}
	ref, err := s.st.Put(store.Runs, rec)
	return rec, ref, err
}

// BenchmarkSlowExecutor measures 256 cases whose one effect takes 20 ms,
// at concurrency 1 and 64; the ratio of the two is the overlap speedup.
func BenchmarkSlowExecutor(b *testing.B) {
	for _, n := range []int{1, 64} {
		b.Run(fmt.Sprintf("concurrency-%d", n), func(b *testing.B) {
			cfg := scaleConfig(b, b.TempDir(), 1, 256)
			for i := 0; i < b.N; i++ {
				if _, err := bench.Run(context.Background(), cfg, sleepyRunner{store.NewMemStore()}, bench.Options{Concurrency: n}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
