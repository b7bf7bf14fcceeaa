package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestWorkloadsRunFixtures(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	code, out, errb := runCLI(t, "workloads", "run", "--dir", filepath.Join(tmp, "store"), "--out", filepath.Join(tmp, "runs"), "--concurrency", "2", "../../suites")
	if code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errb)
	}
	for _, want := range []string{
		"PASS bench ticket-triage (revision 1) 18 runs (3 systems x 6 cases) -> ",
		"PASS foundry intent-select (revision 1) 26 runs (4 candidates x 6 selection cases + 2 holdout cases on the winner) -> ",
		"PASS foundry intent-select (revision 1)",
		"frontier-single", "organism:assay-intent-cascade",
		"all 4 workloads passed",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errb, "ticket-triage: running 18 runs (3 systems x 6 cases)") ||
		!strings.Contains(errb, "ticket-triage: pass (complete; 18/18 runs, 16 passed, 2 failed)") {
		t.Errorf("plain progress lines missing:\n%s", errb)
	}
	runs, _ := filepath.Glob(filepath.Join(tmp, "runs", "*", "*", "foundry-run.yml"))
	if len(runs) != 4 {
		t.Errorf("run records %v", runs)
	}
}

// triageBenchIn copies suites/ticket-triage.bench.yaml into dir, its
// fixture paths made absolute and each OLD, NEW pair of edits applied
// once, and returns the copy's path.
func triageBenchIn(t *testing.T, dir string, edits ...string) string {
	t.Helper()
	fixtures, err := filepath.Abs(filepath.Join("..", "..", "fixtures"))
	if err != nil {
		t.Fatal(err)
	}
	body := strings.ReplaceAll(readFile(t, filepath.Join("..", "..", "suites", "ticket-triage.bench.yaml")), "../fixtures", filepath.ToSlash(fixtures))
	for i := 0; i+1 < len(edits); i += 2 {
		body = strings.Replace(body, edits[i], edits[i+1], 1)
	}
	return putFile(t, dir, "ticket-triage.bench.yaml", body)
}

func TestWorkloadsRunGateFailureExitsOne(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	triageBenchIn(t, dir, "cheap-single: 4", "cheap-single: 5")
	code, out, errb := runCLI(t, "workloads", "run", "--dir", "", "--out", filepath.Join(dir, "runs"), dir)
	if code != exitNo {
		t.Fatalf("exit %d\n%s%s", code, out, errb)
	}
	reason := `gate cheap-single passes at least 5 cases: system "cheap-single" passed 4 of 6 cases`
	if strings.Count(out, reason) != 1 || !strings.Contains(out, "  FAIL "+reason) {
		t.Errorf("stdout must give the reason once:\n%s", out)
	}
	// stderr: one JSON error for the one failure.
	var jsonLines []string
	for _, l := range strings.Split(errb, "\n") {
		if strings.HasPrefix(l, "{") {
			jsonLines = append(jsonLines, l)
		}
	}
	if len(jsonLines) != 1 || !strings.Contains(jsonLines[0], `"code":"GATE_FAILED"`) || !strings.Contains(jsonLines[0], "passed 4 of 6 cases") {
		t.Errorf("stderr JSON errors %q", jsonLines)
	}
}

func TestWorkloadsRunRejectsBadYAML(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := putFile(t, dir, "x.bench.yaml", "name: x\nrevision: 1\nsystem: []\n")
	code, out, errb := runCLI(t, "workloads", "run", "--dir", "", "--out", filepath.Join(dir, "runs"), p)
	if code != exitNo || !strings.Contains(errb, `{"error":{"code":"WORKLOAD_INVALID","message":"`+p+`:3:1: system: unknown key \"system\" (did you mean \"systems\"?)`) {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, out, errb)
	}
	// The summary on stdout says why too, for logs that keep only stdout.
	if !strings.Contains(out, "FAIL "+p+" (did not load)\n  FAIL "+p+":3:1: system: unknown key") {
		t.Fatalf("stdout lacks the reason:\n%s", out)
	}
}

func TestWorkloadsRunNothingFound(t *testing.T) {
	t.Parallel()
	code, _, errb := runCLI(t, "workloads", "run", t.TempDir())
	if code != exitError || !strings.Contains(errb, "WORKLOAD_INVALID") {
		t.Fatalf("exit %d: %s", code, errb)
	}
}

// A stop that arrives between two workloads (or just as one completes, when
// the run itself can no longer be cancelled) must still stop the job:
// nothing further runs and the job fails.
func TestWorkloadsRunStopsWhenCancelled(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	var out, errb bytes.Buffer
	c := &cli{stdout: &out, stderr: &errb}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := runWorkloadsCtx(ctx, c, []string{"../../suites"}, workloadFlags{dir: filepath.Join(tmp, "store"), out: filepath.Join(tmp, "runs")})
	if err == nil {
		t.Fatal("a cancelled job succeeded")
	}
	if !strings.Contains(out.String(), "STOP run cancelled before") || strings.Contains(out.String(), "PASS") {
		t.Fatalf("stdout:\n%s", out.String())
	}
	if runs, _ := filepath.Glob(filepath.Join(tmp, "runs", "*")); len(runs) != 0 {
		t.Fatalf("workloads ran after the stop: %v", runs)
	}
}

// --json replaces the summary with one document; --junit writes a report
// naming each failed check and the run directory.
func TestWorkloadsRunJSONAndJUnit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	triageBenchIn(t, dir, "cheap-single: 4", "cheap-single: 5")
	putFile(t, dir, "broken.bench.yml", "name: broken\nrevision: 1\nsystem: []\n")
	junit := filepath.Join(dir, "junit.xml")
	code, out, errb := runCLI(t, "run", "--dir", filepath.Join(dir, "store"), "--out", filepath.Join(dir, "runs"), "--json", "--junit", junit, dir)
	if code != exitNo {
		t.Fatalf("exit %d\n%s%s", code, out, errb)
	}
	var doc struct {
		Passed        bool
		Total, Failed int
		Workloads     []struct {
			File, Name, Code, RunDir string
			Passed                   bool
			Runs                     int
			Reasons                  []string
			Table                    *struct{ Header []string }
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("stdout is not one JSON document: %v\n%s", err, out)
	}
	if doc.Passed || doc.Total != 2 || doc.Failed != 2 || len(doc.Workloads) != 2 {
		t.Fatalf("%+v", doc)
	}
	broken, triage := doc.Workloads[0], doc.Workloads[1]
	if broken.Code != "WORKLOAD_INVALID" || len(broken.Reasons) != 1 || !strings.Contains(broken.Reasons[0], "system: unknown key") {
		t.Errorf("broken: %+v", broken)
	}
	if triage.Name != "ticket-triage" || triage.Code != "GATE_FAILED" || triage.Runs != 18 || triage.RunDir == "" ||
		triage.Table == nil || !slices.Contains(triage.Table.Header, "cost") || len(triage.Reasons) != 1 {
		t.Errorf("triage: %+v", triage)
	}
	x, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`<testsuites name="assay" tests="`,
		`<testcase name="gate: cheap-single passes at least 5 cases" classname="ticket-triage"`,
		`type="GATE_FAILED"`,
		"run directory: " + triage.RunDir,
		`<property name="run directory" value="` + triage.RunDir + `">`,
		`type="WORKLOAD_INVALID"`,
	} {
		if !strings.Contains(string(x), want) {
			t.Errorf("JUnit report lacks %q:\n%s", want, x)
		}
	}
}

// The cost column prints fixed precision, never a float's long tail.
func TestSummaryCostHasFixedPrecision(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	code, out, errb := runCLI(t, "run", "--dir", filepath.Join(tmp, "s"), "--out", filepath.Join(tmp, "r"), "../../suites/ticket-triage.bench.yaml")
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errb)
	}
	if !regexp.MustCompile(`cheap-single +4/6 +\d+ +\d+ +yes +\$0\.\d{6}\n`).MatchString(out) {
		t.Errorf("cost column:\n%s", out)
	}
}

// Without a suites/ directory, `assay run` says what to do.
func TestRunWithoutSuitesSaysWhatToDo(t *testing.T) {
	t.Chdir(t.TempDir())
	code, _, errb := runCLI(t, "run")
	if code != exitError || !strings.Contains(errb, "no suites/ directory here") || !strings.Contains(errb, "assay init") {
		t.Fatalf("exit %d: %s", code, errb)
	}
}
