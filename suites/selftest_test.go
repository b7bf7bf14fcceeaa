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
	junit := filepath.Join(dir, "junit.xml")
	cmd := exec.Command(os.Args[0], "-test.run=^TestSuites$", "-ginkgo.no-color",
		"-ginkgo.label-filter=broken-triage || unloadable", "-ginkgo.junit-report="+junit)
	cmd.Env = append(os.Environ(), selfTestEnv+"=1", "ASSAY_SUITES="+dir, "ASSAY_SUITES_OUT="+filepath.Join(dir, "runs"), "TMPDIR="+t.TempDir())
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	if _, isExit := err.(*exec.ExitError); !isExit {
		t.Fatalf("the suite must exit non-zero with a failing gate, got %v\n%s", err, out.String())
	}
	report, rerr := os.ReadFile(junit)
	if rerr != nil {
		t.Fatalf("no JUnit report: %v\n%s", rerr, out.String())
	}
	for _, want := range []string{
		// The failing gate spec, with the message a newcomer reads.
		`gate: frontier-single passes at least 6 cases`,
		`system &#34;frontier-single&#34; passed 5 of 6 cases`,
		`broken-triage.bench.yaml:80:5 requires at least 6`,
		`double-charge (outcome complete, expected {&#34;queue&#34;:&#34;account&#34;}, got {&#34;queue&#34;:&#34;billing&#34;})`,
		// The workload that does not load fails under its own name.
		`unloadable.bench.yaml:3:1: system: unknown key`,
	} {
		if !strings.Contains(string(report), want) {
			t.Errorf("JUnit report lacks %q", want)
		}
	}
	// Every failing rule is its own failure: the first does not skip the
	// others.
	if n := strings.Count(string(report), `status="failed"`); n != 4 {
		t.Errorf("%d failed specs, want 4 (three gate rules and the workload that does not load)", n)
	}
	// The failed workload's run directory is kept and named in the report.
	kept := regexp.MustCompile(`run directory \(kept\): (\S+broken-triage-r1-[0-9a-f]{10})`).FindStringSubmatch(string(report))
	if kept == nil {
		t.Error("the JUnit report does not name the kept run directory")
	} else if _, err := os.Stat(filepath.Join(kept[1], "foundry-run.yml")); err != nil {
		t.Errorf("the kept run directory is gone: %v", err)
	}
	// A spec is located at the line of the workload file it checks.
	if !strings.Contains(string(report), "broken-triage.bench.yaml:80 @") {
		t.Error("the gate spec is not located at its rule's line")
	}
	// The label filter ran only the selected workloads.
	ran, _ := filepath.Glob(filepath.Join(dir, "runs", "*"))
	if len(ran) != 1 || filepath.Base(ran[0]) != "broken-triage" {
		t.Errorf("runs for %v, want only broken-triage", ran)
	}
	// The message is the verdict itself, not a boolean matcher's dump.
	if strings.Contains(string(report), "to be true") {
		t.Error("a gate failure reads as a boolean assertion instead of its message")
	}
	if t.Failed() {
		t.Logf("suite output:\n%s", out.String())
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
