package report_test

import (
	"encoding/xml"
	"strings"
	"testing"

	"github.com/algal-assay/assay/report"
)

// jobResults is a job of three workload files: one that did not load, one
// whose run failed verification and a gate, and a foundry that exhausted
// its habitat budget; the job was then cancelled with files left.
func jobResults() *report.Results {
	return &report.Results{Total: 4, Stopped: "cancelled: interrupt", Workloads: []report.Workload{
		{File: "suites/bad.bench.yaml", Code: "YAML_INVALID", Reasons: []string{"bad yaml"}, Err: "suites/bad.bench.yaml:3:1: bad yaml"},
		{File: "suites/t.bench.yaml", Name: "triage", Kind: "bench", Revision: 2, Runs: 6, Code: "VERIFY_FAILED", Reasons: []string{"verification: r1"},
			Table: report.Table{Header: []string{"system", "passed"}, Rows: [][]string{{"a", "1/2"}}},
			Run: &report.Run{Dir: "runs/triage/x", Status: "complete",
				Verification: &report.Verification{CheckedReceipts: 4, Mismatches: []string{"r1", "r2"}},
				Gates:        []report.Gate{{Name: "a passes", Passed: false, Message: "1 of 2", At: "suites/gate.yaml:4:5", File: "suites/gate.yaml"}}}},
		{File: "suites/f.foundry.yaml", Name: "select", Kind: "foundry", Revision: 1, Passed: false, Code: "RUN_FAILED",
			Run: &report.Run{Dir: "runs/select/y", Status: "complete", BudgetExhausted: true}},
	}}
}

func TestJUnitChecksPerWorkload(t *testing.T) {
	t.Parallel()
	b, err := report.JUnit(jobResults())
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	if !strings.HasPrefix(s, xml.Header) || !strings.HasSuffix(s, "</testsuites>\n") {
		t.Fatalf("not a whole JUnit document:\n%s", s)
	}
	var doc struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Suites   []struct {
			Name  string `xml:"name,attr"`
			Cases []struct {
				Name    string `xml:"name,attr"`
				File    string `xml:"file,attr"`
				Failure *struct {
					Type string `xml:"type,attr"`
					Body string `xml:",chardata"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	// bad: 1 failing check; triage: runs, verifies (fails), gate (fails);
	// select: runs, budget (fails); the cancelled job: 1 failing.
	if doc.Tests != 7 || doc.Failures != 5 || len(doc.Suites) != 4 {
		t.Fatalf("tests %d failures %d suites %d, want 7, 5, 4:\n%s", doc.Tests, doc.Failures, len(doc.Suites), s)
	}
	if got := doc.Suites[0].Name; got != "suites/bad.bench.yaml" {
		t.Errorf("a workload that did not load is named %q, want its file", got)
	}
	gate := doc.Suites[1].Cases[2]
	if gate.Name != "gate: a passes" || gate.File != "suites/gate.yaml" || gate.Failure == nil || gate.Failure.Type != "GATE_FAILED" ||
		!strings.HasSuffix(gate.Failure.Body, "\nrun directory: runs/triage/x") {
		t.Errorf("gate case = %+v", gate)
	}
	if v := doc.Suites[1].Cases[1].Failure; v == nil || v.Type != "VERIFY_FAILED" || !strings.HasPrefix(v.Body, "r1\nr2\n") {
		t.Errorf("verification failure = %+v", v)
	}
	if c := doc.Suites[3].Cases[0]; c.Failure == nil || c.Failure.Type != "CANCELLED" || c.Failure.Body != "cancelled: interrupt" {
		t.Errorf("stopped job = %+v", c)
	}
}

func TestJSONTalliesTheJob(t *testing.T) {
	t.Parallel()
	b, err := report.JSON(jobResults())
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for _, want := range []string{`"total":4`, `"failed":3`, `"notRun":1`, `"passed":false`, `"stopped":"cancelled: interrupt"`,
		`"at":"suites/gate.yaml:4:5"`, `"verified":false`, `"checkedReceipts":4`, `"table":{"header":["system","passed"],"rows":[["a","1/2"]]}`,
		// A workload without gates has "gates":null, and no table without a run.
		`"file":"suites/bad.bench.yaml","gates":null`} {
		if !strings.Contains(s, want) {
			t.Errorf("--json lacks %s:\n%s", want, s)
		}
	}
	if strings.Count(s, `"table"`) != 1 || strings.Contains(s, "\n") {
		t.Errorf("want one table and one line:\n%s", s)
	}
}
