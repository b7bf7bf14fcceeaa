package report_test

import (
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/significance"
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
		Bench: &report.BenchFacts{Digest: "sha256:2", Pareto: []string{"a", "b"}},
		Parts: &report.Parts{Count: 2, First: "part-001-report.json", Last: "part-002-report.json", MaxCases: 500, MaxSystems: 8, Aggregate: "aggregate.json"},
		PassRates: &report.PassRates{Repeats: 3, Rows: []report.PassRateRow{
			{Subject: "a", Passed: &report.PassRate{Passed: 3, Total: 3, CI95: significance.Wilson(3, 3)}},
			{Subject: "b", Passed: &report.PassRate{Passed: 1, Total: 1}}}},
		RepeatsAccount: &report.RepeatsAccount{K: 3, Aggregate: "repeats.json", Reports: []report.RepeatReport{
			{File: "report.json", Digest: "sha256:r1"}, {File: "budget-r02.json", Exhausted: true, Digest: "sha256:r2"}},
			Flaky: []report.FlakyRepeatCase{{Subject: "a", Case: "c1", PassedIn: []int{1, 3}, Runs: 3}, {Subject: "b", Case: "c2", PassedIn: []int{2}, Runs: 3}}},
		Table:        report.Table{Header: []string{"system", "passed"}, Rows: [][]string{{"a", "1/1"}}},
		Gates:        []report.Gate{{Name: "a passes", Passed: true, Message: "ok"}, {Name: "b passes", Message: "no"}},
		Verification: &report.Verification{CheckedReceipts: 2, Mismatches: []string{"m1"}}})
	for _, want := range []string{"- repeats: 3 (",
		"- report: `sha256:2`\n- pareto: a, b\n- parts: 2 (part-001-report.json to part-002-report.json), each at most 500 cases and 8 systems; totals in `aggregate.json`\n",
		"| system | passed |\n| --- | --- |\n| a | 1/1 |\n" +
			"\nPass rates with their 95% intervals (clustered by case: mean of the per-case pass rates ± 1.96 standard errors, over 3 repeats):\n\n" +
			"- a: 3/3 = 1, 95% interval [0.4385, 1]\n- b: 1/1 = 1, no interval (fewer than two cases)\n" +
			"\n## Repeats\n\n3 repeats, each an ordinary report verified on its own; `repeats.json` aggregates them and is re-derived from them on every read.\n\n" +
			"- repeat 1: `report.json` `sha256:r1`\n- repeat 2: `budget-r02.json (habitat budget exhausted)` `sha256:r2`\n" +
			"\nFlaky cases (passed in some repeats, failed in others):\n\n- a: c1 (passed in repeats 1, 3 of 3)\n- b: c2 (passed in repeat 2 of 3)\n" +
			"\n## Gate\n\n- **PASS** a passes: ok\n- **FAIL** b passes: no\n",
		"NOT verified (2 receipts checked):\n\n- m1\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("summary.md lacks %q:\n%s", want, got)
		}
	}
}

// A single foundry run's pass rates are Wilson's; the holdout row names
// the promoted candidate only as such, and a repeated foundry says what
// it promoted over all repeats.
func TestSummaryOfAFoundry(t *testing.T) {
	t.Parallel()
	one := report.SummaryMD(&report.Run{Workload: "select", Kind: "foundry", PassRates: &report.PassRates{Rows: []report.PassRateRow{
		{Subject: "k", Validation: &report.PassRate{Passed: 1, Total: 2, CI95: significance.Wilson(1, 2)}, Train: &report.PassRate{}},
		{Holdout: true, Passed: &report.PassRate{}}}}})
	want := "\nPass rates with their 95% intervals (Wilson score interval; the cases are single samples):\n\n" +
		"- k: validation 1/2 = 0.5, 95% interval [0.0945, 0.9055]; train no cases\n- holdout of the promoted candidate: no cases\n"
	if !strings.Contains(one, want) {
		t.Errorf("summary.md lacks %q:\n%s", want, one)
	}
	repeated := report.SummaryMD(&report.Run{Workload: "select", Kind: "foundry", RepeatsAccount: &report.RepeatsAccount{K: 3, Aggregate: "repeats.json",
		Promoted: &report.RepeatPromotion{ID: "k", PromotedIn: 2}}})
	for _, want := range []string{"\nPromoted on validation pooled over all repeats: k; its own repeats promoted it in 2 of 3.\n",
		"\nNo flaky case: every case passed in every repeat or in none.\n"} {
		if !strings.Contains(repeated, want) {
			t.Errorf("summary.md lacks %q:\n%s", want, repeated)
		}
	}
	if strings.Contains(repeated, "Pass rates") {
		t.Errorf("summary.md lists pass rates without any:\n%s", repeated)
	}
}
