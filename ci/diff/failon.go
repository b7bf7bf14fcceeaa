package diff

import (
	"fmt"

	"github.com/algal-assay/assay/engine/significance"
	"github.com/algal-assay/assay/harness/workload"
	"github.com/algal-assay/assay/report"
)

// compareFailures lists, under the workload's fail-on, the changes that
// fail the check.
func compareFailures(w *Workload) []string {
	st := w.Statistics
	if st == nil || st.FailOn == "" || st.FailOn == workload.FailOnNone || w.Base == nil || w.Head == nil {
		return nil
	}
	var out []string
	if bn := w.Bench; bn != nil {
		for _, s := range bn.Systems {
			if s.Base != nil && s.Head != nil {
				out = appendLoss(out, st, "system "+report.CodeSpan(s.ID), s.Change, Rate{Passed: s.Base.Passed, Total: s.Base.Total}, Rate{Passed: s.Head.Passed, Total: s.Head.Total})
			}
		}
	}
	if f := w.Foundry; f != nil && f.Base != nil && f.Head != nil && !f.Base.Exhausted && !f.Head.Exhausted {
		out = appendLoss(out, st, "promoted candidate "+report.CodeSpan(f.Head.Key)+" (validation)", f.PromotedChange, f.Base.Validation, f.Head.Validation)
		if st.FailOn == workload.FailOnAnyRegression {
			out = appendLoss(out, st, "promoted candidate "+report.CodeSpan(f.Head.Key)+" (holdout)", nil, f.Base.Holdout, f.Head.Holdout)
		}
	}
	return out
}

// appendLoss adds subject's loss from b to h when the fail-on counts it:
// a significant one (by its paired test ch) or any fall of the pass rate.
func appendLoss(out []string, st *Statistics, subject string, ch *significance.Change, b, h Rate) []string {
	switch {
	case ch != nil && st.FailOn == workload.FailOnSignificantRegression && ch.Significant && ch.Broken > ch.Fixed:
		return append(out, fmt.Sprintf("%s: significant loss, %s", subject, report.ChangeVerdict(ch, st)))
	case st.FailOn == workload.FailOnAnyRegression && h.Passed*b.Total < b.Passed*h.Total:
		return append(out, fmt.Sprintf("%s: pass count fell, %s → %s", subject, b.Ratio(), h.Ratio()))
	}
	return out
}
