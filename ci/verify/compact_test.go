package verify

import (
	"context"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/algal-assay/assay/engine/heaptest"
	"github.com/algal-assay/assay/engine/vm"
	"github.com/algal-assay/assay/harness"
	"github.com/algal-assay/assay/harness/synth"
)

// Verify keeps of each run directory only its verdict line's facts (the
// record, the re-derived verification and gate verdicts), not the
// re-derived reports with every case result: the live heap after a
// collection with the report held exceeds the heap once it is dropped by
// a few KiB per run directory (about 0.2 MB each at 8 systems x 16 cases
// before; issue 19: ci verify of 16 default-sized workloads under 128
// MiB).
func TestVerifyKeepsCompactRunResults(t *testing.T) {
	const runs, perRun = 6, 16 << 10
	dir := t.TempDir()
	files, err := synth.WriteBatch(filepath.Join(dir, "suites"), runs, synth.Spec{Systems: 8, Cases: 16, Triage: filepath.Join("..", "..", "fixtures", "triage"), Gate: true})
	if err != nil {
		t.Fatal(err)
	}
	wb, err := vm.NewWorkbench(filepath.Join(dir, ".algal"))
	if err != nil {
		t.Fatal(err)
	}
	results, err := harness.RunAll(context.Background(), files, harness.BatchOptions{Options: harness.Options{Runner: wb, Store: wb, Out: filepath.Join(dir, "runs")}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		if !r.Passed() {
			t.Fatalf("%s: %v", r.Name(), r.Reasons())
		}
	}
	ws, err := LoadWorkloads(filepath.Join(dir, "suites"))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Verify(context.Background(), []string{filepath.Join(dir, "runs")}, Options{Evidence: wb, Workloads: ws})
	if err != nil {
		t.Fatal(err)
	}
	held := heaptest.Live()
	if !rep.OK() || len(rep.Results) != runs {
		t.Fatalf("%d results: %s", len(rep.Results), rep.Text())
	}
	for _, res := range rep.Results {
		d := res.Run.Derived
		if res.Detail() != "status complete; gate re-derived: passes" || res.Run.Record == nil || d.Bench != nil || d.Aggregate != nil || len(d.Gates) != 3 || !d.Verification.OK {
			t.Fatalf("%s: %s, holding %+v", res.Path, res.Detail(), d)
		}
	}
	// rep is dead from here on (not used again), so the collection frees it.
	each := heaptest.FreedEach(held, runs)
	t.Logf("%d bytes live per verified run directory", each)
	if each > perRun {
		t.Errorf("a verified run directory's result holds %d bytes live; want at most %d", each, perRun)
	}
	runtime.KeepAlive(ws) // the workloads are not the results'
	runtime.KeepAlive(wb)
}
