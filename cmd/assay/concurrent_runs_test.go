package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/harness/rundir"
	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain lets a test start this test binary as the assay command
// (ASSAY_TEST_AS_CLI=1), so process-level tests need no separate build and
// run race-instrumented under go test -race; testscript's scripts
// (script_test.go) exec it as `assay` the same way.
func TestMain(m *testing.M) {
	if os.Getenv("ASSAY_TEST_AS_CLI") == "1" {
		stop := startProfile(os.Getenv("ASSAY_TEST_CPUPROFILE"), os.Getenv("ASSAY_TEST_TRACE"))
		stopDemand := sampleDemand(os.Getenv("ASSAY_TEST_DEMAND"))
		code := run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
		stopDemand()
		stop()
		if f := os.Getenv("ASSAY_TEST_HWM_FILE"); f != "" {
			reportHWM(f)
		}
		os.Exit(code)
	}
	testscript.Main(removingShared{m}, map[string]func(){
		"assay": func() {
			// A script stands in a terminal with `env ASSAY_TEST_TERMINAL=1`:
			// the same seam the in-process tests use (isTerminal).
			if os.Getenv("ASSAY_TEST_TERMINAL") == "1" {
				isTerminal = func(io.Writer) bool { return true }
			}
			os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
		},
	})
}

// removingShared runs the tests, then removes what tests built once to
// share (builtArtifact's tree), which no t.TempDir owns: left behind, every
// run of the package added one more directory to the machine's temp dir.
type removingShared struct{ m *testing.M }

func (r removingShared) Run() int {
	code := r.m.Run()
	if artifactRoot != "" {
		_ = os.RemoveAll(artifactRoot)
	}
	return code
}

// assayProcess prepares this test binary to run as `assay args...` in dir
// (TestMain runs the CLI under ASSAY_TEST_AS_CLI=1), its stdout and stderr
// both collected in out.
func assayProcess(t testing.TB, dir string, args ...string) (cmd *exec.Cmd, out *bytes.Buffer) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd = exec.Command(exe, args...)
	cmd.Dir = dir
	// A non-nil SysProcAttr keeps os.StartProcess from statting dir first:
	// dir is the repository root here, and a stat of it makes go test's
	// cache depend on the root's modification time, which changes whenever
	// `assay run` creates runs/ or .algal/ there.
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	cmd.Env = append(os.Environ(), "ASSAY_TEST_AS_CLI=1")
	out = &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	return cmd, out
}

// exitCode is the exit status behind a finished command's error: 0 for
// nil, -1 when the process did not exit on its own.
func exitCode(err error) int {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	}
	return -1
}

// assayAt runs this test binary as `assay args...` in dir and returns its
// exit code and combined output.
func assayAt(t *testing.T, dir string, args ...string) (int, string) {
	t.Helper()
	cmd, out := assayProcess(t, dir, args...)
	err := cmd.Run()
	code := exitCode(err)
	if code < 0 {
		t.Fatal(err)
	}
	return code, out.String()
}

// Four `assay run` processes of the default workloads at once, on one runs
// root and one store, again and again: every process exits 0 or reports
// the run lock, no staging directory is left, and every stored object is
// named by its digest. Three iterations by default (about 5 s here);
// ASSAY_CONCURRENT_ITERATIONS=50 with -race is the full check.
func TestConcurrentRunsOfTheDefaultWorkloads(t *testing.T) {
	iterations := 3
	if s := os.Getenv("ASSAY_CONCURRENT_ITERATIONS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("ASSAY_CONCURRENT_ITERATIONS=%q", s)
		}
		iterations = n
	}
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	out, store := filepath.Join(tmp, "runs"), filepath.Join(tmp, "store")
	const procs = 4
	locked := 0
	for it := range iterations {
		var wg sync.WaitGroup
		results := make([]string, procs)
		codes := make([]int, procs)
		for p := range procs {
			cmd, buf := assayProcess(t, repo, "run", "--out", out, "--dir", store, "--concurrency", "2")
			wg.Go(func() {
				err := cmd.Run()
				results[p] = buf.String()
				codes[p] = exitCode(err)
			})
		}
		wg.Wait()
		for p := range procs {
			switch {
			case codes[p] == 0:
			case strings.Contains(results[p], "holds the lock on run directory"):
				locked++
			default:
				t.Fatalf("iteration %d, process %d exited %d:\n%s", it, p, codes[p], results[p])
			}
		}
		left, err := rundir.Leftovers(out)
		if err != nil || len(left) > 0 {
			t.Fatalf("iteration %d left %v (%v)", it, left, err)
		}
		checkHidden(t, out)
		checkStore(t, store)
	}
	t.Logf("%d iterations of %d processes; %d reported the lock", iterations, procs, locked)
}

// checkHidden fails on any dot name beside a run directory: staging
// directories, old runs, lock files.
func checkHidden(t *testing.T, out string) {
	t.Helper()
	workloads, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range workloads {
		entries, err := os.ReadDir(filepath.Join(out, w.Name()))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".") {
				t.Fatalf("left beside the run directories: %s", filepath.Join(out, w.Name(), e.Name()))
			}
		}
	}
}

// checkStore fails unless every content-addressed object is named by the
// digest of its bytes and no temporary file is left.
func checkStore(t *testing.T, store string) {
	t.Helper()
	objects := 0
	for _, ns := range []string{"manifests", "values", "runs"} {
		entries, err := os.ReadDir(filepath.Join(store, ns))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			p := filepath.Join(store, ns, e.Name())
			hex, ok := strings.CutSuffix(e.Name(), ".json")
			if !ok {
				t.Fatalf("store holds %s", p)
			}
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if d := canon.DigestBytes(b); d != "sha256:"+hex {
				t.Fatalf("%s holds bytes whose digest is %s", p, d)
			}
			objects++
		}
	}
	if objects == 0 {
		t.Fatal("the store holds no objects")
	}
}
