package report_test

import (
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/bench"
	"github.com/algal-assay/assay/report"
)

// A system whose server omitted usage shows its tokens and cost as
// unknown, with the note saying why, in every table of report.html; a
// known cost is still dollars.
func TestUnknownCostInReport(t *testing.T) {
	t.Parallel()
	omitted := bench.Tally{UnknownTokens: 1, UnknownCost: 1}
	known := bench.Tally{TokensIn: 10, TokensOut: 2, Cost: 0.000014}
	rep := &bench.Report{
		Cases:  []bench.Case{{ID: "a"}},
		Prices: map[string]bench.Price{"small-1": {Input: 1, Output: 2}},
		Pareto: []string{"known"},
		Systems: []bench.SystemResult{
			{ID: "omits", Passed: 1, Total: 1, EffectCalls: 1, Usage: omitted, Attribution: map[string]bench.Tally{"small-1": {Calls: 1, UnknownTokens: 1, UnknownCost: 1}},
				Cases: []bench.CaseResult{{ID: "a", Passed: true, EffectCalls: 1, Usage: omitted, Attribution: map[string]bench.Tally{"small-1": {Calls: 1, UnknownTokens: 1, UnknownCost: 1}}}}},
			{ID: "known", Passed: 1, Total: 1, EffectCalls: 1, Usage: known,
				Cases: []bench.CaseResult{{ID: "a", Passed: true, EffectCalls: 1, Usage: known}}},
		},
	}
	page, err := report.Bench(report.BenchInput{Run: report.Run{Workload: "live"}, Report: rep})
	if err != nil {
		t.Fatal(err)
	}
	html := string(page)
	for _, want := range []string{report.Unknown, report.UnknownNote, "$0.000014", "small-1: 1 calls, tokens " + report.Unknown + ", " + report.Unknown} {
		if !strings.Contains(html, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	// (The plot's axis may still have a $0.000000 tick.)
	for _, bad := range []string{"<td>$0.000000</td>", "<dd>$0.000000</dd>", "cost $0.000000,"} {
		if strings.Contains(html, bad) {
			t.Errorf("report.html shows an unknown cost as zero: %q", bad)
		}
	}
	if report.Cost(known) != "$0.000014" || report.Cost(omitted) != report.Unknown || report.Tokens(omitted) != report.Unknown {
		t.Errorf("Cost/Tokens: %s %s %s", report.Cost(known), report.Cost(omitted), report.Tokens(omitted))
	}
}
