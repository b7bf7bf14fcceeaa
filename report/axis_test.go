package report_test

import (
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/bench"
	"github.com/algal-assay/assay/report"
)

// noUsage is a bench whose systems reported no tokens and no cost (scripted
// answers, as in the scaffold's own bench) but made different numbers of
// effect calls.
func noUsage() *bench.Report {
	return &bench.Report{
		Cases:  []bench.Case{{ID: "a"}},
		Pareto: []string{"one-call"},
		Systems: []bench.SystemResult{
			{ID: "one-call", Passed: 1, Total: 1, EffectCalls: 1, Cases: []bench.CaseResult{{ID: "a", Passed: true, EffectCalls: 1}}},
			{ID: "three-calls", Passed: 1, Total: 1, EffectCalls: 3, Cases: []bench.CaseResult{{ID: "a", Passed: true, EffectCalls: 3}}},
		},
	}
}

// With no token or cost data the plot places systems by effect calls and
// says so, instead of stacking every system at x = 0.
func TestPlotFallsBackToCalls(t *testing.T) {
	t.Parallel()
	page, err := report.Bench(report.BenchInput{Run: report.Run{Workload: "scaffold"}, Report: noUsage()})
	if err != nil {
		t.Fatal(err)
	}
	html := string(page)
	for _, want := range []string{report.CallsAxisNote, "effect calls (lower is better)", "three-calls: calls 3, passed 1", "calls on the horizontal axis"} {
		if !strings.Contains(html, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	if strings.Contains(html, "tokens in") {
		t.Error("report.html still labels x as tokens")
	}
	xName, _, dollars, pts := report.PlotAxes(noUsage())
	if xName != bench.CriterionCalls || dollars || len(pts) != 2 || pts[0].X != 1 || pts[1].X != 3 {
		t.Errorf("PlotAxes = %q %v %+v, want calls at 1 and 3", xName, dollars, pts)
	}

	// One system with tokens is evidence enough: x stays tokens, no note.
	r := noUsage()
	r.Systems[1].Usage = bench.Tally{TokensIn: 5, TokensOut: 1}
	page, err = report.Bench(report.BenchInput{Run: report.Run{Workload: "live"}, Report: r})
	if err != nil {
		t.Fatal(err)
	}
	if html := string(page); strings.Contains(html, report.CallsAxisNote) || !strings.Contains(html, "tokens in") {
		t.Error("a bench with token counts lost its tokens axis")
	}

	// The PR page of a bench without usage says the same.
	pr, err := report.PR(prInputOf(noUsage()))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(pr), report.CallsAxisNote) {
		t.Error("pr.html lacks the calls-axis note")
	}
}

func prInputOf(r *bench.Report) report.PRInput {
	return report.PRInput{Base: "main", Head: "abc123", Passed: true, Verdict: "ok",
		Workloads: []report.PRWorkload{{Name: "scaffold", Kind: "bench", Status: "changed", BaseBench: r, HeadBench: r}}}
}
