package harness

import (
	"fmt"
	"slices"
	"strings"

	"github.com/algal-assay/assay/engine/bench"
	"github.com/algal-assay/assay/engine/foundry"
	"github.com/algal-assay/assay/engine/significance"
	"github.com/algal-assay/assay/harness/gate"
	"github.com/algal-assay/assay/harness/repeats"
	"github.com/algal-assay/assay/harness/rundir"
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

// repeatsSection is summary.md's account of the repeats: which report
// each repeat left, and every flaky case with the repeats it passed in.
func repeatsSection(o *Outcome) string {
	a := o.Repeats
	if a == nil {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n## Repeats\n\n%d repeats, each an ordinary report verified on its own; `%s` aggregates them and is re-derived from them on every read.\n\n", a.K, repeats.File)
	for i, d := range a.Reports {
		file := workload.RepeatFile(rundir.ReportFile, i+1)
		if slices.Contains(a.Exhausted, i+1) {
			file = workload.RepeatFile(rundir.BudgetFile, i+1) + " (habitat budget exhausted)"
		}
		fmt.Fprintf(&b, "- repeat %d: `%s` `%s`\n", i+1, file, d)
	}
	if a.Kind == workload.KindFoundry && a.Promoted != "" {
		w := a.PromotedContender()
		fmt.Fprintf(&b, "\nPromoted on validation pooled over all repeats: %s; its own repeats promoted it in %d of %d.\n", w.ID, len(w.PromotedIn), a.K)
	}
	var lines []string
	for i := range a.Contenders {
		c := &a.Contenders[i]
		cases := c.Cases
		if a.Kind == workload.KindFoundry && c.ManifestDigest == a.Promoted && a.Holdout != nil {
			cases = append(slices.Clone(cases), a.Holdout.Cases...)
		}
		for _, f := range gate.FlakyCases(cases) {
			lines = append(lines, fmt.Sprintf("- %s: %s\n", c.ID, f))
		}
	}
	if len(lines) == 0 {
		b.WriteString("\nNo flaky case: every case passed in every repeat or in none.\n")
	} else {
		b.WriteString("\nFlaky cases (passed in some repeats, failed in others):\n\n")
		b.WriteString(strings.Join(lines, ""))
	}
	return b.String()
}

// intervalText is "4/6 = 0.667, 95% interval [0.3, 0.9]".
func intervalText(passed, total int, iv significance.Interval) string {
	if total == 0 {
		return "no cases"
	}
	s := fmt.Sprintf("%d/%d = %s", passed, total, significance.Figure(float64(passed)/float64(total)))
	if iv.Defined() {
		s += fmt.Sprintf(", 95%% interval [%s, %s]", iv.Lo, iv.Hi)
	} else {
		s += ", no interval (fewer than two cases)"
	}
	return s
}

// intervalsSection is summary.md's list of pass rates with their 95%
// intervals: Wilson's for single samples, clustered by case with repeats.
func intervalsSection(o *Outcome) string {
	var lines []string
	how := "Wilson score interval; the cases are single samples"
	switch a := o.Repeats; {
	case a != nil:
		how = fmt.Sprintf("clustered by case: mean of the per-case pass rates ± 1.96 standard errors, over %d repeats", a.K)
		for i := range a.Contenders {
			c := &a.Contenders[i]
			if a.Kind == workload.KindBench {
				lines = append(lines, fmt.Sprintf("- %s: %s", c.ID, intervalText(c.Passes, c.Samples, c.PassRateCI95(""))))
				continue
			}
			lines = append(lines, fmt.Sprintf("- %s: validation %s; train %s", c.ID,
				intervalText(c.Validation.Passes, c.Validation.Samples, c.PassRateCI95(foundry.SplitValidation)),
				intervalText(c.Train.Passes, c.Train.Samples, c.PassRateCI95(foundry.SplitTrain))))
		}
		if h := a.Holdout; h != nil {
			lines = append(lines, fmt.Sprintf("- holdout of %s: %s", h.ManifestKey, intervalText(h.Passes, h.Samples, repeats.ClusteredCI(h.Cases, ""))))
		}
	case o.Bench != nil:
		for _, s := range o.Bench.Systems {
			lines = append(lines, fmt.Sprintf("- %s: %s", s.ID, intervalText(int(s.Passed), int(s.Total), significance.Wilson(int(s.Passed), int(s.Total)))))
		}
	case o.Foundry != nil && o.Foundry.Report != nil:
		r := o.Foundry.Report
		for _, i := range foundry.Rank(r.Candidates) {
			c := &r.Candidates[i]
			v, t := c.Validation, c.Train
			lines = append(lines, fmt.Sprintf("- %s: validation %s; train %s", c.ManifestKey,
				intervalText(int(v.Passed), int(v.Total), significance.Wilson(int(v.Passed), int(v.Total))),
				intervalText(int(t.Passed), int(t.Total), significance.Wilson(int(t.Passed), int(t.Total)))))
		}
		h := r.Holdout
		lines = append(lines, fmt.Sprintf("- holdout of the promoted candidate: %s", intervalText(int(h.Passed), int(h.Total), significance.Wilson(int(h.Passed), int(h.Total)))))
	}
	if len(lines) == 0 {
		return ""
	}
	return "\nPass rates with their 95% intervals (" + how + "):\n\n" + strings.Join(lines, "\n") + "\n"
}
