package vm

import (
	"context"
	"io/fs"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/algal-assay/assay/engine/bench"
	"github.com/algal-assay/assay/engine/store"
)

// storeFootprint sums a store's object files: bytes written (their sizes)
// and bytes the file system allocated for them (st_blocks).
func storeFootprint(b testing.TB, root string) (files int, written, allocated int64) {
	b.Helper()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		var st syscall.Stat_t
		if err := syscall.Lstat(path, &st); err != nil {
			return err
		}
		allocated += st.Blocks * 512
		if d.Type().IsRegular() {
			files++
			written += st.Size
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return files, written, allocated
}

// BenchmarkBenchStore8x256 runs and verifies one contract-sized bench (8
// systems by 256 cases, scripted) over a file store two ways, side by
// side: "each" syncs every object as it is stored (two fsyncs per object,
// the store before batching) and "batch" is vm.NewWorkbench's store.Batch
// with bench.Run's single commit. It reports the seconds of each phase and
// the store's footprint (directories included in disk-MB).
func BenchmarkBenchStore8x256(b *testing.B) {
	ctx := context.Background()
	for _, mode := range []string{"each", "batch"} {
		b.Run("durability="+mode, func(b *testing.B) {
			var runS, verifyS, cpuS float64
			var files int
			var written, allocated int64
			for i := 0; i < b.N; i++ {
				dir := b.TempDir()
				cfg := scaleConfig(b, dir, 8, 256)
				root := filepath.Join(dir, "store")
				fst, err := store.OpenFileStore(root)
				if err != nil {
					b.Fatal(err)
				}
				wb := &Workbench{Store: fst}
				if mode == "batch" {
					wb.Store = fst.Batch()
				}
				t0, c0 := time.Now(), cpuSeconds()
				rep, err := bench.Run(ctx, cfg, wb, bench.Options{})
				if err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				cpuS += cpuSeconds() - c0
				res, err := bench.Verify(ctx, rep.Value(), wb)
				if err != nil || !res.OK || res.CheckedReceipts != 8*256 {
					b.Fatal(err, res)
				}
				runS += t1.Sub(t0).Seconds()
				verifyS += time.Since(t1).Seconds()
				files, written, allocated = storeFootprint(b, root)
			}
			b.ReportMetric(runS/float64(b.N), "run-s")
			b.ReportMetric(cpuS/float64(b.N), "run-cpu-s")
			b.ReportMetric(verifyS/float64(b.N), "verify-s")
			b.ReportMetric(float64(files), "files")
			b.ReportMetric(float64(written)/1e6, "written-MB")
			b.ReportMetric(float64(allocated)/1e6, "disk-MB")
		})
	}
}

// cpuSeconds is the process's user plus system CPU time.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
