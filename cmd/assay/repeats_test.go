package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

func TestRunRepeatsFlag(t *testing.T) {
	tmp := t.TempDir()
	store, runs := filepath.Join(tmp, "store"), filepath.Join(tmp, "runs")
	var out, errb bytes.Buffer
	code := run([]string{"run", "--dir", store, "--out", runs, "--repeats", "3", "../../suites/ticket-triage.bench.yaml"}, nil, &out, &errb)
	if code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errb.String())
	}
	for _, want := range []string{"54 runs (3 systems x 6 cases x 3 repeats)", "pass^3", "cheap-single"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("stdout lacks %q:\n%s", want, out.String())
		}
	}
	reps, _ := filepath.Glob(filepath.Join(runs, "ticket-triage", "*", "repeats.json"))
	if len(reps) != 1 {
		t.Fatalf("repeats.json: %v", reps)
	}
	out.Reset()
	errb.Reset()
	code = run([]string{"ci", "verify", "--dir", store, "--workloads", "../../suites", runs}, nil, &out, &errb)
	if code != exitOK {
		t.Fatalf("ci verify of a repeated run: exit %d\n%s\n%s", code, out.String(), errb.String())
	}

	for _, bad := range []string{"33", "-1"} {
		out.Reset()
		errb.Reset()
		if code := run([]string{"run", "--dir", "", "--out", runs, "--repeats", bad, "../../suites/ticket-triage.bench.yaml"}, nil, &out, &errb); code != exitError {
			t.Errorf("--repeats %s: exit %d, want %d (%s)", bad, code, exitError, errb.String())
		}
	}
}
