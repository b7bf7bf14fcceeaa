package suites

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// selfTestEnv marks the child process of TestBrokenWorkloadFailsItsSpecs.
const selfTestEnv = "ASSAY_SUITES_SELFTEST"

// The suite must fail when a workload does: this runs the suite binary
// again with one deliberately broken workload (an expectation changed, so
// its min-passed rules fail) and one that does not load, selected by
// label, and checks the exit status, the newcomer-facing message and the
// JUnit report GitHub shows.
func TestBrokenWorkloadFailsItsSpecs(t *testing.T) {
	if os.Getenv(selfTestEnv) != "" {
		t.Skip("inside the self-test child")
	}
	if testing.Short() {
		t.Skip("re-runs the suite")
	}
	src, err := os.ReadFile("ticket-triage.bench.yaml")
	if err != nil {
		t.Fatal(err)
	}
	fixtures, _ := filepath.Abs(filepath.Join("..", "fixtures"))
	body := strings.ReplaceAll(string(src), "../fixtures", filepath.ToSlash(fixtures))
	body = strings.Replace(body, "name: ticket-triage", "name: broken-triage", 1)
	old := "expect: { queue: billing }\n    responses:\n      cheap: { route: billing, screen: billing }"
	if !strings.Contains(body, old) {
		t.Fatal("ticket-triage.bench.yaml changed; update this test")
	}
	body = strings.Replace(body, old, strings.Replace(old, "queue: billing", "queue: account", 1), 1)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "broken-triage.bench.yaml"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "unloadable.bench.yaml"), []byte("name: unloadable\nrevision: 1\nsystem: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, report := runFailingSuite(t, dir, "broken-triage || unloadable")
	for _, want := range []string{
		// The failing gate spec, with the message a newcomer reads.
		`gate: frontier-single passes at least 6 cases`,
		`system &#34;frontier-single&#34; passed 5 of 6 cases`,
		`broken-triage.bench.yaml:80:5 requires at least 6`,
		`double-charge (outcome complete, expected {&#34;queue&#34;:&#34;account&#34;}, got {&#34;queue&#34;:&#34;billing&#34;})`,
		// The workload that does not load fails under its own name.
		`unloadable.bench.yaml:3:1: system: unknown key`,
	} {
		if !strings.Contains(report, want) {
			t.Errorf("JUnit report lacks %q", want)
		}
	}
	// Every failing rule is its own failure: the first does not skip the
	// others.
	if n := strings.Count(report, `status="failed"`); n != 4 {
		t.Errorf("%d failed specs, want 4 (three gate rules and the workload that does not load)", n)
	}
	// The failed workload's run directory is kept and named in the report.
	kept := regexp.MustCompile(`run directory \(kept\): (\S+broken-triage-r1-[0-9a-f]{10})`).FindStringSubmatch(report)
	if kept == nil {
		t.Error("the JUnit report does not name the kept run directory")
	} else if _, err := os.Stat(filepath.Join(kept[1], "foundry-run.yml")); err != nil {
		t.Errorf("the kept run directory is gone: %v", err)
	}
	// A spec is located at the line of the workload file it checks.
	if !strings.Contains(report, "broken-triage.bench.yaml:80 @") {
		t.Error("the gate spec is not located at its rule's line")
	}
	// The label filter ran only the selected workloads.
	ran, _ := filepath.Glob(filepath.Join(dir, "runs", "*"))
	if len(ran) != 1 || filepath.Base(ran[0]) != "broken-triage" {
		t.Errorf("runs for %v, want only broken-triage", ran)
	}
	// The message is the verdict itself, not a boolean matcher's dump.
	if strings.Contains(report, "to be true") {
		t.Error("a gate failure reads as a boolean assertion instead of its message")
	}
	if t.Failed() {
		t.Logf("suite output:\n%s", out)
	}
}

// runFailingSuite runs the suite binary again over the workloads in dir
// that filter selects, expects it to fail, and returns its output and
// JUnit report; run directories go to dir/runs.
func runFailingSuite(t *testing.T, dir, filter string) (out, junit string) {
	t.Helper()
	report := filepath.Join(dir, "junit.xml")
	cmd := exec.Command(os.Args[0], "-test.run=^TestSuites$", "-ginkgo.no-color",
		"-ginkgo.label-filter="+filter, "-ginkgo.junit-report="+report)
	cmd.Env = append(os.Environ(), selfTestEnv+"=1", "ASSAY_SUITES="+dir, "ASSAY_SUITES_OUT="+filepath.Join(dir, "runs"), "TMPDIR="+t.TempDir())
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err := cmd.Run()
	if _, isExit := err.(*exec.ExitError); !isExit {
		t.Fatalf("the suite must exit non-zero with a failing gate, got %v\n%s", err, buf.String())
	}
	body, err := os.ReadFile(report)
	if err != nil {
		t.Fatalf("no JUnit report: %v\n%s", err, buf.String())
	}
	return buf.String(), string(body)
}

// A failed case read from a case file (`- file: cases.jsonl`) is located
// at its line of that file, both where a gate rule names the case and
// where a system's failed cases are listed, never at that line number of
// the workload file.
func TestFailedCaseInACaseFileIsLocatedThere(t *testing.T) {
	if os.Getenv(selfTestEnv) != "" {
		t.Skip("inside the self-test child")
	}
	if testing.Short() {
		t.Skip("re-runs the suite")
	}
	src, err := os.ReadFile("invoice-extraction.bench.yaml")
	if err != nil {
		t.Fatal(err)
	}
	fixtures, _ := filepath.Abs(filepath.Join("..", "fixtures"))
	body := strings.ReplaceAll(string(src), "../fixtures", filepath.ToSlash(fixtures))
	body = strings.Replace(body, "name: invoice-extraction", "name: broken-invoice", 1)
	// extract-once fails tax-line (line 3 of cases.jsonl) and credit-note
	// (line 5); extract-reviewed fails credit-note.
	for old, broken := range map[string]string{
		"min-passed: { extract-once: 3,":          "min-passed: { extract-once: 4,",
		"extract-reviewed: { credit-note: fail }": "extract-reviewed: { credit-note: pass }",
	} {
		if !strings.Contains(body, old) {
			t.Fatalf("invoice-extraction.bench.yaml no longer has %q; update this test", old)
		}
		body = strings.Replace(body, old, broken, 1)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "broken-invoice.bench.yaml"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	out, report := runFailingSuite(t, dir, "broken-invoice")
	cases := filepath.Join(fixtures, "extraction", "cases.jsonl")
	for _, want := range []string{
		// The min-passed rule lists each failed case at its own line.
		"failed case tax-line at " + cases + ":3:",
		"failed case credit-note at " + cases + ":5:",
		// The outcomes rule for credit-note fails at the case's line.
		"at: " + cases + ":5",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if !strings.Contains(report, "cases.jsonl:5") {
		t.Error("the JUnit report does not locate the failed case in its case file")
	}
	if workload := filepath.Join(dir, "broken-invoice.bench.yaml"); strings.Contains(out, workload+":3:") || strings.Contains(out, workload+":5:") {
		t.Errorf("a case is located at its case-file line of the workload file")
	}
	if t.Failed() {
		t.Logf("suite output:\n%s", out)
	}
}

// A passing suite is quiet: no report entries unless -v, and the run
// directories of passing workloads are removed.
func TestPassingSuiteIsQuiet(t *testing.T) {
	if os.Getenv(selfTestEnv) != "" {
		t.Skip("inside the self-test child")
	}
	if testing.Short() {
		t.Skip("re-runs the suite")
	}
	tmp := t.TempDir()
	run := func(args ...string) string {
		cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestSuites$", "-ginkgo.no-color", "-ginkgo.label-filter=ticket-triage"}, args...)...)
		cmd.Env = append(os.Environ(), selfTestEnv+"=1", "TMPDIR="+tmp)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("suite failed: %v\n%s", err, out)
		}
		return string(out)
	}
	quiet := run()
	if strings.Contains(quiet, "checked receipts") || strings.Contains(quiet, "verdict") {
		t.Errorf("a passing suite printed report entries:\n%s", quiet)
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "assay-suite-*")); len(left) != 0 {
		t.Errorf("a passing workload left %v", left)
	}
	if loud := run("-ginkgo.v"); !strings.Contains(loud, "checked receipts") {
		t.Errorf("-ginkgo.v hides the report entries:\n%s", loud)
	}
}
