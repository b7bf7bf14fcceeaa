package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// mkfifo f.json; assay ci verify f.json: fails at once, says why.
func TestCIVerifyFIFORootFails(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "f.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("mkfifo:", err)
	}
	type result struct {
		code           int
		stdout, stderr string
	}
	done := make(chan result, 1)
	go func() {
		code, out, errOut := runCLI(t, "ci", "verify", "--dir", filepath.Join(dir, "store"), fifo)
		done <- result{code, out, errOut}
	}()
	select {
	case r := <-done:
		if r.code != exitNo || !strings.Contains(r.stdout, "FAIL "+fifo+"  unrecognised  cannot be read as evidence") || !strings.Contains(r.stdout, "not a regular file") {
			t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
	case <-time.After(30 * time.Second):
		// Unblock the reader so the test process can exit.
		if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			f.Close()
		}
		t.Fatal("ci verify blocked on a FIFO")
	}
}

// The staging directory of a killed run is listed, and does not fail the
// verification of the complete run beside it.
func TestCIVerifyListsInterruptedRun(t *testing.T) {
	clearActionsEnv(t)
	art := builtArtifact(t)
	runs := filepath.Join(art, "head", "runs")
	run := headRun(t, art, "ticket-triage")
	stage := filepath.Join(runs, "ticket-triage", "."+filepath.Base(run)+".partial-1234")
	if err := os.MkdirAll(stage, 0o755); err != nil {
		t.Fatal(err)
	}
	rec, err := os.ReadFile(filepath.Join(run, "foundry-run.yml"))
	if err != nil {
		t.Fatal(err)
	}
	putFile(t, stage, "foundry-run.yml", strings.Replace(string(rec), "status: complete", "status: running", 1))
	t.Chdir(filepath.Join(art, "head", "tree"))
	code, out, errOut := runCLI(t, "ci", "verify", "--dir", filepath.Join(art, "head", "store"), runs)
	if code != exitOK || !strings.Contains(out, "note "+stage+"  interrupted  staging directory of a run that never finished (record status running)") ||
		!strings.Contains(out, "all 4 files verified; 1 leftover of interrupted writes listed") {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
}
