package diff_test

import (
	"strings"
	"testing"

	"github.com/algal-assay/assay/ci/diff"
	"github.com/algal-assay/assay/engine/bench"
)

func costRun(side string, systems ...bench.SystemResult) *diff.Set {
	rep := &bench.Report{Prices: map[string]bench.Price{"small-1": {Input: 1, Output: 2}}, Systems: systems, Pareto: []string{}}
	return &diff.Set{Root: side, Runs: []*diff.Run{{Workload: "live", Kind: diff.KindBench, Status: "complete", Bench: rep,
		Verification: &diff.Verification{OK: true}, Gate: &diff.GateFile{Passed: true}}}}
}

func system(id string, cost float64, tokens, unknownTokens, unknownCost int64) bench.SystemResult {
	return bench.SystemResult{ID: id, Passed: 1, Total: 1, EffectCalls: 2,
		Usage: bench.Tally{TokensIn: tokens, Cost: cost, UnknownTokens: unknownTokens, UnknownCost: unknownCost}}
}

// A cost the evidence does not know (a server omitted usage, a model has
// no price) is shown as unknown with a note, never as a dollar sum of the
// other calls, and is never reported as a cost regression either way.
func TestUnknownCostIsNeverShownAsDollars(t *testing.T) {
	t.Parallel()
	base := costRun("base", system("omits", 0.25, 100, 0, 0), system("known", 0.10, 50, 0, 0), system("unpriced", 0.10, 50, 0, 0))
	head := costRun("head", system("omits", 0, 0, 2, 2), system("known", 0.20, 90, 0, 0), system("unpriced", 0.30, 70, 0, 1))
	d, err := diff.Compute(base, head, diff.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var grew []string
	for _, r := range d.Regressions {
		if r.Metric == diff.MetricCost {
			grew = append(grew, r.Subject)
		}
	}
	if strings.Join(grew, ",") != "known" {
		t.Errorf("cost regressions for %v; want only known (unknown totals cannot be compared)", grew)
	}
	md := diff.Markdown(d, diff.RenderOptions{})
	for _, want := range []string{
		"| omits | 1/1 | — | 100 → unknown† (n/a) | 0.250000 → unknown† (n/a) |",
		"| unpriced | 1/1 | — | 50 → 70 (+20) | 0.100000 → unknown† (n/a) |",
		"| known | 1/1 | — | 50 → 90 (+40) | 0.100000 → 0.200000 (+0.100000) |",
		"\n" + "† unknown: some calls reported no token usage",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("comment lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "0.000000") {
		t.Errorf("an unknown cost is shown as zero:\n%s", md)
	}
}
