package harness

import (
	"fmt"
	"slices"
	"strings"

	"github.com/algal-assay/assay/engine/bench"
	"github.com/algal-assay/assay/harness/gate"
	"github.com/algal-assay/assay/harness/workload"
)

// RepeatsTable is the contender table of a repeated run: for a bench,
// each system's case runs passed over all repeats, pass rate, pass^k and
// pass@k at k = repeats, flaky cases, per-repeat means of tokens, calls
// and cost, and the pooled Pareto set; for a foundry, candidates in
// pooled promotion order with pooled rates, the repeats each won, and
// the promoted one's pooled holdout.
func RepeatsTable(o *Outcome) Table {
	a := o.Repeats
	k := a.K
	hatK, atK := fmt.Sprintf("pass^%d", k), fmt.Sprintf("pass@%d", k)
	if a.Kind == workload.KindBench {
		t := Table{Header: []string{"system", "passed", "pass rate", hatK, atK, "flaky", "tokens/repeat", "calls/repeat", "pareto"}}
		hasCost := o.Bench != nil && o.Bench.Prices != nil
		if hasCost {
			t.Header = append(t.Header, "cost/repeat")
		}
		for i := range a.Contenders {
			c := &a.Contenders[i]
			pareto := "no"
			if slices.Contains(a.Pareto, c.ID) {
				pareto = "yes"
			}
			tok := tokens(o.UnknownUsage[c.ID], gate.MeanCount(c.TokensIn+c.TokensOut, k))
			row := []string{c.ID, fmt.Sprintf("%d/%d", c.Passes, c.Samples), c.PassRate().String(), c.PassHatK(k).String(), c.PassAtK(k).String(),
				flakyCell(c.Flaky()), tok, gate.MeanCount(c.EffectCalls, k), pareto}
			if hasCost {
				cost := bench.FormatCost(c.Cost / float64(k))
				if o.UnknownUsage[c.ID] > 0 {
					cost = "unknown"
				}
				row = append(row, cost)
			}
			t.Rows = append(t.Rows, row)
		}
		return t
	}
	t := Table{Header: []string{"candidate", "promoted", "validation", "train", "holdout", hatK, "flaky", "won repeats"}}
	for _, i := range a.PromotionOrder() {
		c := &a.Contenders[i]
		promoted, holdout := "", "-"
		if c.ManifestDigest == a.Promoted {
			promoted = "yes"
			holdout = fmt.Sprintf("%d/%d", a.Holdout.Passes, a.Holdout.Samples)
		}
		won := "-"
		if len(c.PromotedIn) > 0 {
			won = gate.Ints(c.PromotedIn)
		}
		t.Rows = append(t.Rows, []string{c.ID, promoted, fmt.Sprintf("%d/%d", c.Validation.Passes, c.Validation.Samples),
			fmt.Sprintf("%d/%d", c.Train.Passes, c.Train.Samples), holdout, c.PassHatK(k).String(), flakyCell(c.Flaky()), won})
	}
	return t
}

func flakyCell(ids []string) string {
	if len(ids) == 0 {
		return "0"
	}
	return fmt.Sprintf("%d (%s)", len(ids), strings.Join(ids, ", "))
}
