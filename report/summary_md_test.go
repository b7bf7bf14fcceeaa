package report_test

import (
	"strings"
	"testing"

	"github.com/algal-assay/assay/report"
)

// A foundry that promoted nothing says so twice: under the title and as
// the gate's verdict; a verified run says how many receipts it replayed.
func TestSummaryOfAnExhaustedFoundry(t *testing.T) {
	t.Parallel()
	got := report.SummaryMD(&report.Run{Workload: "select", Kind: "foundry", Revision: 3, Description: "  picks one  ",
		Slug: "select-abc", Identity: "sha256:1", BudgetExhausted: true, Warnings: []string{"slow"},
		Verification: &report.Verification{OK: true, CheckedReceipts: 9}})
	want := "# select (foundry, revision 3)\n\npicks one\n\n- run: `select-abc`\n- inputs: `sha256:1`\n" +
		"- the habitat budget was exhausted before promotion (see budget.json)\n- warning: slow\n\n## Results\n\n" +
		"\n## Gate\n\nThe workload fails: the foundry promoted no candidate.\n\n## Verification\n\nVerified: 9 receipts checked and replayed.\n"
	if got != want {
		t.Errorf("summary.md =\n%s\nwant\n%s", got, want)
	}
}

func TestSummaryOfABench(t *testing.T) {
	t.Parallel()
	got := report.SummaryMD(&report.Run{Workload: "triage", Kind: "bench", Revision: 1, Slug: "s", Identity: "i", Repeats: 3,
		Bench:     &report.BenchFacts{Digest: "sha256:2", Pareto: []string{"a", "b"}},
		PartsNote: "- parts: 2\n", Intervals: "\nintervals\n", RepeatsAccount: "\nrepeats\n",
		Table:        report.Table{Header: []string{"system", "passed"}, Rows: [][]string{{"a", "1/1"}}},
		Gates:        []report.Gate{{Name: "a passes", Passed: true, Message: "ok"}, {Name: "b passes", Message: "no"}},
		Verification: &report.Verification{CheckedReceipts: 2, Mismatches: []string{"m1"}}})
	for _, want := range []string{"- repeats: 3 (", "- report: `sha256:2`\n- pareto: a, b\n- parts: 2\n",
		"| system | passed |\n| --- | --- |\n| a | 1/1 |\n\nintervals\n\nrepeats\n\n## Gate\n\n- **PASS** a passes: ok\n- **FAIL** b passes: no\n",
		"NOT verified (2 receipts checked):\n\n- m1\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("summary.md lacks %q:\n%s", want, got)
		}
	}
}
