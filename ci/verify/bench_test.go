package verify

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/vm"
	"github.com/algal-assay/assay/harness"
)

// BenchmarkRunDirectory measures what re-deriving costs: checking a run
// directory as a whole (record, listing, copies, report verified, workload
// compiled, verification and gates re-derived and compared) against
// verifying its report.json alone, as ci verify did before.
func BenchmarkRunDirectory(b *testing.B) {
	dir := b.TempDir()
	storeDir := filepath.Join(dir, "store")
	wb, err := vm.NewWorkbench(storeDir)
	if err != nil {
		b.Fatal(err)
	}
	wlPath := filepath.Join("..", "..", "suites", "ticket-triage.bench.yaml")
	w, err := harness.Load(wlPath)
	if err != nil {
		b.Fatal(err)
	}
	o, err := harness.Run(context.Background(), w, harness.Options{Runner: wb, Store: wb, Out: filepath.Join(dir, "runs")})
	if err != nil {
		b.Fatal(err)
	}
	ws, err := LoadWorkloads(wlPath)
	if err != nil {
		b.Fatal(err)
	}
	opts := Options{Evidence: wb, StoreDir: storeDir, Workloads: ws}
	b.Run("whole-directory", func(b *testing.B) {
		for b.Loop() {
			res, err := CheckRun(context.Background(), o.RunDir, opts)
			if err != nil || !res.OK {
				b.Fatalf("%v %v", err, res.Mismatches)
			}
		}
	})
	b.Run("report-only", func(b *testing.B) {
		for b.Loop() {
			v, err := canon.ReadFile(filepath.Join(o.RunDir, "report.json"), 0)
			if err != nil {
				b.Fatal(err)
			}
			res := Result{Kind: KindBench}
			if err := check(context.Background(), &res, v, wb); err != nil || len(res.Mismatches) > 0 {
				b.Fatalf("%v %v", err, res.Mismatches)
			}
		}
	})
}
