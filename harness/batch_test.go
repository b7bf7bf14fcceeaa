package harness

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"testing"

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
	var files []string
	for i := range workloads {
		p, err := synth.Write(filepath.Join(dir, "suites"), synth.Spec{Name: fmt.Sprintf("w%02d", i), Systems: 8, Cases: 16, Triage: triage, Gate: true})
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
	}
	wb, err := vm.NewWorkbench(filepath.Join(dir, ".algal"))
	if err != nil {
		t.Fatal(err)
	}
	results, err := RunAll(context.Background(), files, BatchOptions{Options: Options{Runner: wb, Store: wb, Out: filepath.Join(dir, "runs")}})
	if err != nil {
		t.Fatal(err)
	}
	held := liveHeap()
	for _, r := range results {
		if r.Outcome == nil || r.Outcome.Status != "complete" || !r.Passed() || len(SummaryTable(r.Outcome).Rows) != 8 {
			t.Fatalf("%s: %v %v", r.Name(), r.Err, r.Reasons())
		}
		if n, shape := r.RunCount(); n != 8*16 || shape != "8 systems x 16 cases" {
			t.Fatalf("%s: %d runs (%s)", r.Name(), n, shape)
		}
	}
	// results is dead from here on (not used again), so the collection frees it.
	each := (int64(held) - int64(liveHeap())) / workloads
	t.Logf("%d bytes live per finished workload", each)
	if each > perWorkload {
		t.Errorf("a finished workload's result holds %d bytes live; want at most %d", each, perWorkload)
	}
	runtime.KeepAlive(wb)
}

// liveHeap is the heap still reachable after a collection; the second
// collection empties the sync.Pools the first only moved aside.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
