package harness

import (
	"context"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/algal-assay/assay/engine/heaptest"
	"github.com/algal-assay/assay/engine/vm"
	"github.com/algal-assay/assay/harness/synth"
)

// A batch keeps of each finished workload only what its final table,
// --json and exit code print: the live heap after a collection with every
// result held exceeds the heap once they are dropped by a few KiB per
// workload, not by the workload's cases, compiled config and full report
// (about 240 KB each at 8 systems x 16 cases before results were
// compacted; issue 19: 16 default-sized workloads run together under 128
// MiB). Receipts go to a file store, so the heap holds only what the batch
// keeps.
func TestBatchKeepsCompactResults(t *testing.T) {
	const workloads, perWorkload = 6, 16 << 10
	triage, err := filepath.Abs(filepath.Join("..", "fixtures", "triage"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	files, err := synth.WriteBatch(filepath.Join(dir, "suites"), workloads, synth.Spec{Systems: 8, Cases: 16, Triage: triage, Gate: true})
	if err != nil {
		t.Fatal(err)
	}
	wb, err := vm.NewWorkbench(filepath.Join(dir, ".algal"))
	if err != nil {
		t.Fatal(err)
	}
	results, err := RunAll(context.Background(), files, BatchOptions{Options: Options{Runner: wb, Store: wb, Out: filepath.Join(dir, "runs")}})
	if err != nil {
		t.Fatal(err)
	}
	held := heaptest.Live()
	for _, r := range results {
		if r.Outcome == nil || r.Outcome.Status != "complete" || !r.Passed() || len(SummaryTable(r.Outcome).Rows) != 8 {
			t.Fatalf("%s: %v %v", r.Name(), r.Err, r.Reasons())
		}
		if n, shape := r.RunCount(); n != 8*16 || shape != "8 systems x 16 cases" {
			t.Fatalf("%s: %d runs (%s)", r.Name(), n, shape)
		}
	}
	// results is dead from here on (not used again), so the collection frees it.
	each := heaptest.FreedEach(held, workloads)
	t.Logf("%d bytes live per finished workload", each)
	if each > perWorkload {
		t.Errorf("a finished workload's result holds %d bytes live; want at most %d", each, perWorkload)
	}
	runtime.KeepAlive(wb)
}
