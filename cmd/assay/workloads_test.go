package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/algal-assay/assay/harness"
)

func TestWorkloadsRunFixtures(t *testing.T) {
	tmp := t.TempDir()
	var out, errb bytes.Buffer
	code := run([]string{"workloads", "run", "--dir", filepath.Join(tmp, "store"), "--out", filepath.Join(tmp, "runs"), "--concurrency", "2", "../../suites"}, nil, &out, &errb)
	if code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errb.String())
	}
	for _, want := range []string{
		"PASS bench ticket-triage (revision 1)",
		"PASS foundry intent-select (revision 1)",
		"frontier-single", "organism:assay-intent-cascade",
		"all 4 workloads passed",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("stdout lacks %q:\n%s", want, out.String())
		}
	}
	if !strings.Contains(errb.String(), "ticket-triage: pass (complete)") {
		t.Errorf("plain progress lines missing:\n%s", errb.String())
	}
	runs, _ := filepath.Glob(filepath.Join(tmp, "runs", "*", "*", "foundry-run.yml"))
	if len(runs) != 4 {
		t.Errorf("run records %v", runs)
	}
}

func TestWorkloadsRunGateFailureExitsOne(t *testing.T) {
	src, err := os.ReadFile("../../suites/ticket-triage.bench.yaml")
	if err != nil {
		t.Fatal(err)
	}
	fixtures, _ := filepath.Abs("../../fixtures")
	body := strings.ReplaceAll(string(src), "../fixtures", filepath.ToSlash(fixtures))
	body = strings.Replace(body, "cheap-single: 4", "cheap-single: 5", 1)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "ticket-triage.bench.yaml"), []byte(body), 0o644)
	var out, errb bytes.Buffer
	code := run([]string{"workloads", "run", "--dir", "", "--out", filepath.Join(dir, "runs"), dir}, nil, &out, &errb)
	if code != exitRejected {
		t.Fatalf("exit %d\n%s%s", code, out.String(), errb.String())
	}
	if !strings.Contains(out.String(), `gate FAIL cheap-single passes at least 5 cases: system "cheap-single" passed 4 of 6 cases`) {
		t.Errorf("stdout:\n%s", out.String())
	}
}

func TestWorkloadsRunRejectsBadYAML(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "x.bench.yaml")
	os.WriteFile(p, []byte("name: x\nrevision: 1\nsystem: []\n"), 0o644)
	var out, errb bytes.Buffer
	code := run([]string{"workloads", "run", "--dir", "", "--out", filepath.Join(dir, "runs"), p}, nil, &out, &errb)
	if code != exitRejected || !strings.Contains(errb.String(), p+":3:1: system: unknown key") {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, out.String(), errb.String())
	}
	// The summary on stdout says why too, for logs that keep only stdout.
	if !strings.Contains(out.String(), "FAIL "+p+": "+p+":3:1: system: unknown key") {
		t.Fatalf("stdout lacks the reason:\n%s", out.String())
	}
}

func TestWorkloadsRunNothingFound(t *testing.T) {
	var out, errb bytes.Buffer
	code := run([]string{"workloads", "run", t.TempDir()}, nil, &out, &errb)
	if code != exitRejected || !strings.Contains(errb.String(), "WORKLOAD_INVALID") {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
}

// A stop that arrives between two workloads (or just as one completes, when
// the run itself can no longer be cancelled) must still stop the job:
// nothing further runs and the job fails.
func TestWorkloadsRunStopsWhenCancelled(t *testing.T) {
	tmp := t.TempDir()
	var out, errb bytes.Buffer
	c := &cli{stdout: &out, stderr: &errb}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := runWorkloadsCtx(ctx, c, []string{"../../suites"}, workloadFlags{dir: filepath.Join(tmp, "store"), out: filepath.Join(tmp, "runs")})
	if err == nil {
		t.Fatal("a cancelled job succeeded")
	}
	if !strings.Contains(out.String(), "cancelled before") || strings.Contains(out.String(), "PASS") {
		t.Fatalf("stdout:\n%s", out.String())
	}
	if runs, _ := filepath.Glob(filepath.Join(tmp, "runs", "*")); len(runs) != 0 {
		t.Fatalf("workloads ran after the stop: %v", runs)
	}
}

// Warnings (split leakage, an unfinished re-run left beside a complete
// run) reach the job's output, not only summary.md.
func TestPrintSummaryShowsWarnings(t *testing.T) {
	o := &harness.Outcome{
		Workload: &harness.Workload{Name: "w", Kind: harness.KindBench, Revision: 1},
		RunDir:   "runs/w/.w-r1-x.partial-1",
		Status:   "failed",
		Warnings: []string{"this run is failed, so it was left in runs/w/.w-r1-x.partial-1; the complete run of the same inputs in runs/w/w-r1-x was kept"},
	}
	var b bytes.Buffer
	printSummary(&b, []*harness.Outcome{o})
	if !strings.Contains(b.String(), "  warning: this run is failed, so it was left in") {
		t.Fatalf("summary:\n%s", b.String())
	}
}
