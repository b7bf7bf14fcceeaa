package diff_test

import (
	"context"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/algal-assay/assay/ci/diff"
	"github.com/algal-assay/assay/ci/verify"
	"github.com/algal-assay/assay/engine/heaptest"
	"github.com/algal-assay/assay/engine/vm"
	"github.com/algal-assay/assay/harness"
	"github.com/algal-assay/assay/harness/synth"
)

// A loaded run set keeps of each bench case only its verdict (id,
// passed, receipt digest as 32 bytes, the id shared with the case list),
// not a bench.CaseResult with its digest string: the live heap after a
// collection with the set held exceeds the heap once it is dropped by
// little more than that per case (about 250 bytes per case before; issue
// 19: ci diff of many workloads grew ~0.5 MB per run and side).
func TestLoadSetKeepsCompactCaseVerdicts(t *testing.T) {
	const runs, systems, cases = 6, 8, 64
	const perCase = 128 // bytes per case and system, the report's totals included
	dir := t.TempDir()
	files, err := synth.WriteBatch(filepath.Join(dir, "suites"), runs, synth.Spec{Systems: systems, Cases: cases, Triage: filepath.Join("..", "..", "fixtures", "triage"), Gate: true})
	if err != nil {
		t.Fatal(err)
	}
	wb, err := vm.NewWorkbench(filepath.Join(dir, ".algal"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := harness.RunAll(context.Background(), files, harness.BatchOptions{Options: harness.Options{Runner: wb, Store: wb, Out: filepath.Join(dir, "runs")}}); err != nil {
		t.Fatal(err)
	}
	ws, err := verify.LoadWorkloads(filepath.Join(dir, "suites"))
	if err != nil {
		t.Fatal(err)
	}
	set, err := diff.LoadSet(context.Background(), filepath.Join(dir, "runs"), diff.Evidence{Store: wb, StoreDir: filepath.Join(dir, ".algal"), Workloads: ws})
	if err != nil {
		t.Fatal(err)
	}
	held := heaptest.Live()
	if len(set.Runs) != runs {
		t.Fatalf("%d runs", len(set.Runs))
	}
	for _, r := range set.Runs {
		if r.Bench == nil || len(r.Bench.Systems) != systems || len(r.BenchVerdicts) != systems {
			t.Fatalf("%s: bench %v, %d verdict systems", r.Workload, r.Bench != nil, len(r.BenchVerdicts))
		}
		for i, s := range r.BenchVerdicts {
			if s.ID != r.Bench.Systems[i].ID || len(s.Cases) != cases || r.Bench.Systems[i].Cases != nil {
				t.Fatalf("%s %s: %d verdicts, report system %s holds %d case results", r.Workload, s.ID, len(s.Cases), r.Bench.Systems[i].ID, len(r.Bench.Systems[i].Cases))
			}
			if c := s.Cases[0]; c.ID == "" || len(c.Receipt()) != len("sha256:")+64 {
				t.Fatalf("%s %s: case %+v, receipt %q", r.Workload, s.ID, c, c.Receipt())
			}
		}
	}
	// set is dead from here on (not used again), so the collection frees it.
	each := heaptest.FreedEach(held, runs*systems*cases)
	t.Logf("%d bytes live per case and system of a loaded run", each)
	if each > perCase {
		t.Errorf("a loaded run holds %d bytes per case and system; want at most %d", each, perCase)
	}
	runtime.KeepAlive(ws)
	runtime.KeepAlive(wb)
}
