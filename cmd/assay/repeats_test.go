package main

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestRunRepeatsFlag(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	store, runs := filepath.Join(tmp, "store"), filepath.Join(tmp, "runs")
	code, out, errb := runCLI(t, "run", "--dir", store, "--out", runs, "--repeats", "3", "../../suites/ticket-triage.bench.yaml")
	if code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errb)
	}
	for _, want := range []string{"54 runs (3 systems x 6 cases x 3 repeats)", "pass^3", "cheap-single"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	reps, _ := filepath.Glob(filepath.Join(runs, "ticket-triage", "*", "repeats.json"))
	if len(reps) != 1 {
		t.Fatalf("repeats.json: %v", reps)
	}
	code, out, errb = runCLI(t, "ci", "verify", "--dir", store, "--workloads", "../../suites", runs)
	if code != exitOK {
		t.Fatalf("ci verify of a repeated run: exit %d\n%s\n%s", code, out, errb)
	}

	for _, bad := range []string{"33", "-1"} {
		if code, _, errb := runCLI(t, "run", "--dir", "", "--out", runs, "--repeats", bad, "../../suites/ticket-triage.bench.yaml"); code != exitError {
			t.Errorf("--repeats %s: exit %d, want %d (%s)", bad, code, exitError, errb)
		}
	}
}
