package store

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/crashtest"
)

// crashObject is the i-th object the crash helper writes: about the size
// of a small receipt.
func crashObject(i int) map[string]any {
	return map[string]any{"kind": "receipt", "n": float64(i), "events": strings.Repeat(strconv.Itoa(i%10), 1500+i%700)}
}

func crashRequest(i int) string {
	d, _ := canon.Digest(fmt.Sprint("request ", i))
	return d
}

// TestHelperCrashWriter is not a test: TestKilledWriterLeavesAVerifiableStore
// re-executes the test binary into it. It writes objects and memo records
// through a batch, committing every 64, from ASSAY_STORE_CRASH_FROM until
// it has written ASSAY_STORE_CRASH_N of each or is killed.
func TestHelperCrashWriter(t *testing.T) {
	t.Parallel()
	root := os.Getenv("ASSAY_STORE_CRASH_DIR")
	if root == "" {
		t.Skip("helper process only")
	}
	from, _ := strconv.Atoi(os.Getenv("ASSAY_STORE_CRASH_FROM"))
	n, _ := strconv.Atoi(os.Getenv("ASSAY_STORE_CRASH_N"))
	fs, err := OpenFileStore(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	b := fs.Batch()
	for i := from; i < from+n; i++ {
		if _, err := b.Put(Runs, crashObject(i)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(4)
		}
		if _, err := b.PutEffect(map[string]any{"requestDigest": crashRequest(i), "executor": "e", "output": float64(i)}, "e"); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(5)
		}
		if i%64 == 63 {
			if err := b.Commit(); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(6)
			}
		}
	}
	if err := b.Commit(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(6)
	}
	os.Exit(0)
}

func crashWriter(t *testing.T, root string, from, n int) *exec.Cmd {
	t.Helper()
	cmd := crashtest.Child("TestHelperCrashWriter", "ASSAY_STORE_CRASH_DIR="+root, "ASSAY_STORE_CRASH_FROM="+strconv.Itoa(from), "ASSAY_STORE_CRASH_N="+strconv.Itoa(n))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd
}

// checkVisible verifies every object and memo record a reader can see.
func checkVisible(t *testing.T, root string) (objects, memos int) {
	t.Helper()
	fs, err := OpenFileStore(root)
	if err != nil {
		t.Fatal(err)
	}
	refs, err := fs.List(Runs)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range refs {
		if _, ok, err := fs.Get(Runs, d); err != nil || !ok {
			t.Fatalf("visible object %s does not verify: %v", d, err)
		}
	}
	entries, _ := os.ReadDir(filepath.Join(root, "effects"))
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), TempPrefix) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(root, "effects", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		v, err := canon.Parse(b, MaxObjectBytes)
		if err != nil {
			t.Fatalf("visible memo record %s is torn: %q", e.Name(), b)
		}
		rd, _ := v.(map[string]any)["requestDigest"].(string)
		if rec, ok, err := fs.GetEffect(rd, "e"); err != nil || !ok || rec["requestDigest"] != rd {
			t.Fatalf("visible memo record %s does not read back: %v %v", e.Name(), ok, err)
		}
		memos++
	}
	return len(refs), memos
}

// A writer killed (SIGKILL) at random points leaves a store in which every
// visible object verifies, and a writer that runs to the end afterwards
// completes and cleans up what the killed ones left. Each round starts
// further on, so kills land among new writes as well as re-puts of what
// earlier rounds left.
func TestKilledWriterLeavesAVerifiableStore(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("spawns and kills processes")
	}
	root := filepath.Join(t.TempDir(), ".algal")
	const n, rounds, step = 400, 6, 100
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 19))
	killed := 0
	for round := range rounds {
		// Kill among this round's new writes: round 0 writes n objects,
		// each later one step more than the rounds before left.
		before, fresh := 0, n
		if round > 0 {
			before, fresh = n+(round-1)*step, step
		}
		target := before + 1 + rng.IntN(fresh-1)
		cmd := crashWriter(t, root, round*step, n)
		didKill, err := crashtest.KillAt(cmd, filepath.Join(root, "runs"), target)
		if err != nil {
			t.Fatalf("round %d: writer failed: %v", round, err)
		}
		if didKill {
			killed++
		}
		objects, memos := checkVisible(t, root)
		t.Logf("round %d: killed at >= %d objects: %d objects, %d memo records visible", round, target, objects, memos)
	}
	if killed == 0 {
		t.Fatal("no writer was killed mid-write; the test checked nothing")
	}
	all := (rounds-1)*step + n
	if err := crashWriter(t, root, 0, all).Wait(); err != nil {
		t.Fatalf("re-put after the kills: %v", err)
	}
	objects, memos := checkVisible(t, root)
	if objects != all || memos != all {
		t.Fatalf("after the re-put: %d objects and %d memo records, want %d each", objects, memos, all)
	}
	fs, _ := OpenFileStore(root)
	if left, busy, err := fs.Leftovers(); err != nil || busy || len(left) != 0 {
		t.Fatalf("leftovers after a clean writer: %v busy=%v %v", left, busy, err)
	}
}
