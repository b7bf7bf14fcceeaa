package assaysuite_test

import (
	"go/doc/comment"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/algal-assay/assay/internal/secondmodule"
)

// writeFiles writes name -> content under dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// docSuite is the suite file the package doc shows another repository
// writing: its one code block.
func docSuite(t *testing.T) string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "assaysuite.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		t.Fatal(err)
	}
	var code []string
	for _, b := range new(comment.Parser).Parse(f.Doc.Text()).Content {
		if c, ok := b.(*comment.Code); ok {
			code = append(code, c.Text)
		}
	}
	if len(code) != 1 {
		t.Fatalf("the package doc shows %d code blocks, want the one suite file", len(code))
	}
	return code[0]
}

// ansi matches the colour codes Ginkgo writes even to a pipe.
var ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")

// verboseSuite is the command the README gives for a suite's measurements.
const verboseSuite = "go test -v ./suites/... -ginkgo.v"

// Another repository's suite is the few lines the package doc shows; this
// builds such a repository as a second module that uses Assay through a
// replace directive and runs its suite, passing and then failing.
func TestSecondModuleSuite(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a second module")
	}
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	organism, err := os.ReadFile(filepath.Join(repo, "fixtures", "triage", "triage-single.algal.json"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	workload := `name: triage
revision: 1
systems:
  - id: single
    manifest: ../organisms/triage.algal.json
    executors: { model: cases }
cases:
  - id: refund
    args: { ticket: "Please refund the second charge." }
    expect: { queue: billing }
    responses:
      model: { route: billing }
gate:
  min-passed: { single: 1 }
`
	writeFiles(t, dir, map[string]string{
		"go.mod":                      "module example.com/triage\n\ngo 1.26.0\n\nrequire github.com/algal-assay/assay v0.0.0\n\nreplace github.com/algal-assay/assay => " + filepath.ToSlash(repo) + "\n",
		"organisms/triage.algal.json": string(organism),
		"suites/triage.bench.yaml":    workload,
		"suites/suite_test.go":        docSuite(t),
	})
	// Assay's own requirement list and go.sum stand in for what the other
	// repository's `go mod tidy` writes from the network.
	secondmodule.Adopt(t, dir, repo)
	out, err := secondmodule.Go(t, dir, "test", "./suites/...")
	if err != nil || !strings.Contains(out, "ok  \texample.com/triage/suites") {
		t.Fatalf("the second module's suite failed: %v\n%s", err, out)
	}
	// The README's command for the measurements shows them: -ginkgo.v
	// with go test's own -v, without which go test prints nothing of a
	// passing package.
	readme, err := os.ReadFile(filepath.Join(repo, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "`"+verboseSuite+"`") {
		t.Errorf("README.md no longer documents `%s`; test the command it does", verboseSuite)
	}
	measured := []string{"passed - " + filepath.Join(dir, "suites", "triage.bench.yaml") + ":4", "1/1", "usage - ", "0 tokens in, 0 out", "1 effect calls", "checked receipts"}
	out, err = secondmodule.Go(t, dir, strings.Fields(verboseSuite)[1:]...)
	if err != nil {
		t.Fatalf("%s: %v\n%s", verboseSuite, err, out)
	}
	out = ansi.ReplaceAllString(out, "")
	for _, want := range measured {
		if !strings.Contains(out, want) {
			t.Errorf("%s does not show %q:\n%s", verboseSuite, want, out)
		}
	}
	quiet, err := secondmodule.Go(t, dir, "test", "./suites/...", "-ginkgo.v")
	if err != nil || strings.Contains(quiet, "checked receipts") {
		t.Errorf("without go test -v, a passing suite's measurements are expected hidden (README says so): %v\n%s", err, quiet)
	}
	// A broken expectation fails the suite at the gate rule's line.
	writeFiles(t, dir, map[string]string{"suites/triage.bench.yaml": strings.Replace(workload, "queue: billing", "queue: account", 1)})
	out, err = secondmodule.Go(t, dir, "test", "./suites/...")
	if err == nil {
		t.Fatalf("a failing gate passed:\n%s", out)
	}
	// The failure itself is located at the workload's line, not in
	// assaysuite.go (Ginkgo's "In [...] at:" and CI annotations use it).
	workloadFile := filepath.Join(dir, "suites", "triage.bench.yaml")
	out = ansi.ReplaceAllString(out, "")
	for _, want := range []string{"gate: single passes at least 1 cases", "triage.bench.yaml:14", "run directory (kept):", "at: " + workloadFile + ":14"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "assaysuite.go") {
		t.Errorf("a failure points into assaysuite.go:\n%s", out)
	}
	// The failed case is named at its own line, and the verdict is said
	// once (no report entry repeats the failure message).
	if !strings.Contains(out, "failed case refund at triage.bench.yaml:8:") {
		t.Errorf("the failure does not point at the failed case's line:\n%s", out)
	}
	if n := strings.Count(out, "passed 0 of 1 cases"); n != 1 {
		t.Errorf("the gate's verdict is printed %d times:\n%s", n, out)
	}
}
