package vm

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/algal-assay/assay/engine/bench"
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
	wb, err := NewWorkbench(filepath.Join(dir, "store"))
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
func TestKilledBenchLeavesAVerifiableStore(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns and kills processes")
	}
	dir := t.TempDir()
	root := filepath.Join(dir, "store")
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 19))
	killed := 0
	for round := range 4 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperBenchWriter$")
		cmd.Env = append(os.Environ(), "ASSAY_VM_CRASH_DIR="+dir)
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(50+rng.IntN(400)) * time.Millisecond)
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) {
			t.Fatal(err)
		}
		err := cmd.Wait()
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ProcessState.Sys().(syscall.WaitStatus).Signal() == syscall.SIGKILL {
			killed++
		} else if err != nil {
			t.Fatalf("round %d: bench failed: %v", round, err)
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
				t.Logf("round %d: %d receipts visible", round, len(refs))
			}
		}
	}
	if killed == 0 {
		t.Fatal("no bench was killed mid-run; the test checked nothing")
	}
	cfg := scaleConfig(t, dir, 4, 200)
	wb, err := NewWorkbench(root)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := bench.Run(context.Background(), cfg, wb, bench.Options{})
	if err != nil {
		t.Fatalf("re-run after the kills: %v", err)
	}
	res, err := bench.Verify(context.Background(), rep.Value(), wb)
	if err != nil || !res.OK || res.CheckedReceipts != 4*200 {
		t.Fatalf("re-run report: %v %+v", err, res)
	}
}
