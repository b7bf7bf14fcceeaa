package verify

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/algal-assay/assay/engine/canon"
)

// BenchmarkRunDirectory measures what re-deriving costs: checking a run
// directory as a whole (record, listing, copies, report verified, workload
// compiled, verification and gates re-derived and compared) against
// verifying its report.json alone, as ci verify did before.
func BenchmarkRunDirectory(b *testing.B) {
	runDir, opts := triageRun(b, 0)
	b.Run("whole-directory", func(b *testing.B) {
		for b.Loop() {
			res, err := CheckRun(context.Background(), runDir, opts)
			if err != nil || !res.OK {
				b.Fatalf("%v %v", err, res.Mismatches)
			}
		}
	})
	b.Run("report-only", func(b *testing.B) {
		for b.Loop() {
			v, err := canon.ReadFile(filepath.Join(runDir, "report.json"), 0)
			if err != nil {
				b.Fatal(err)
			}
			res := Result{Kind: KindBench}
			if err := check(context.Background(), &res, v, opts.Evidence); err != nil || len(res.Mismatches) > 0 {
				b.Fatalf("%v %v", err, res.Mismatches)
			}
		}
	})
}
