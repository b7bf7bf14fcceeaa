package vm

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/algal-assay/assay/engine/bench"
	"github.com/algal-assay/assay/engine/crashtest"
	"github.com/algal-assay/assay/engine/store"
)

// TestHelperBenchWriter is not a test: TestKilledBenchLeavesAVerifiableStore
// re-executes the test binary into it. It runs a 4-system x 200-case bench
// over the workbench store in ASSAY_VM_CRASH_DIR, as `assay run` does.
func TestHelperBenchWriter(t *testing.T) {
	dir := os.Getenv("ASSAY_VM_CRASH_DIR")
	if dir == "" {
		t.Skip("helper process only")
	}
	cfg := scaleConfig(t, dir, 4, 200)
	wb, err := NewWorkbench(os.Getenv("ASSAY_VM_CRASH_STORE"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	if _, err := bench.Run(context.Background(), cfg, wb, bench.Options{Concurrency: 4}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(4)
	}
	os.Exit(0)
}

// A bench killed (SIGKILL) at random points while it stores receipts
// through the workbench's batch leaves a store in which every visible
// object verifies, and the same bench run again afterwards completes and
// its report verifies against that store.
//
// The kill point is a random count of receipts already visible, not a
// random delay: a quiet machine finishes the bench before a delay would
// fire. Each round writes a fresh store, since a second run of the same
// bench into one store writes no new objects.
func TestKilledBenchLeavesAVerifiableStore(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("spawns and kills processes")
	}
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 19))
	killed := 0
	for round := range 4 {
		root := filepath.Join(dir, fmt.Sprintf("store-%d", round))
		target := 1 + rng.IntN(400)
		cmd := crashtest.Child("TestHelperBenchWriter", "ASSAY_VM_CRASH_DIR="+dir, "ASSAY_VM_CRASH_STORE="+root)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		didKill, err := crashtest.KillAt(cmd, filepath.Join(root, "runs"), target)
		if err != nil {
			t.Fatalf("round %d: bench failed: %v", round, err)
		}
		if didKill {
			killed++
		}
		st, err := store.OpenFileStore(root)
		if err != nil {
			t.Fatal(err)
		}
		for _, ns := range []store.Namespace{store.Manifests, store.Runs} {
			refs, err := st.List(ns)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range refs {
				if _, ok, err := st.Get(ns, d); err != nil || !ok {
					t.Fatalf("round %d: visible %s object %s does not verify: %v", round, ns, d, err)
				}
			}
			if ns == store.Runs {
				t.Logf("round %d: killed at >= %d, %d receipts visible", round, target, len(refs))
			}
		}
		cfg := scaleConfig(t, dir, 4, 200)
		wb, err := NewWorkbench(root)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := bench.Run(context.Background(), cfg, wb, bench.Options{})
		if err != nil {
			t.Fatalf("round %d: re-run after the kill: %v", round, err)
		}
		res, err := bench.Verify(context.Background(), rep.Value(), wb)
		if err != nil || !res.OK || res.CheckedReceipts != 4*200 {
			t.Fatalf("round %d: re-run report: %v %+v", round, err, res)
		}
	}
	if killed == 0 {
		t.Fatal("no bench was killed mid-run; the test checked nothing")
	}
}
