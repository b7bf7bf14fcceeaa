package diff

import (
	"fmt"
	"strings"

	"github.com/algal-assay/assay/engine/significance"
	"github.com/algal-assay/assay/harness/workload"
	"github.com/algal-assay/assay/report"
)

// pText is "p = 0.016", or "p < 0.001".
func pText(p significance.Figure, significant bool, st *Statistics) string {
	s := significance.FormatP(p, significant, st.alpha)
	if strings.HasPrefix(s, "<") {
		return "p " + s
	}
	return "p = " + s
}

// changeVerdict is a paired change in words: "significant (p = 0.016, 7
// fixed / 0 broken)" or "within noise (p = 0.25)".
func changeVerdict(ch *significance.Change, st *Statistics) string {
	if ch.Significant {
		return fmt.Sprintf("significant (%s, %d fixed / %d broken)", pText(ch.PValue, true, st), ch.Fixed, ch.Broken)
	}
	return fmt.Sprintf("within noise (%s)", pText(ch.PValue, false, st))
}

// changeCell is changeVerdict where something changed, else "—".
func changeCell(ch *significance.Change, st *Statistics, changed bool) string {
	if ch == nil || st == nil || !changed && ch.Fixed+ch.Broken == 0 {
		return "—"
	}
	return changeVerdict(ch, st)
}

// flipsNeeded says how many one-way flips the workload's test needs
// before it can call a change significant, or that none can be.
func flipsNeeded(st *Statistics) string {
	if st == nil {
		return ""
	}
	if st.MinFlips == 0 {
		return fmt.Sprintf("With %s, no change can be significant at alpha %s (%s): the case set is too small to tell a change from noise.", plural(st.Cases, "case"), st.Alpha, st.Test)
	}
	return fmt.Sprintf("At least %s must flip one way before a change can be significant (%s, alpha %s, %s).", plural(st.MinFlips, "case"), st.Test, st.Alpha, plural(st.Cases, "case"))
}

// flipsShort is flipsNeeded for a workload listed as unchanged.
func flipsShort(st *Statistics) string {
	switch {
	case st == nil:
		return ""
	case st.MinFlips == 0:
		return "; too few cases for any change to be significant"
	}
	return fmt.Sprintf("; significant from %d one-way flips", st.MinFlips)
}

// marginText says how clearly a side's promotion was decided on the
// validation cases.
func marginText(m *Margin, st *Statistics) string {
	if m == nil || st == nil {
		return ""
	}
	n := m.WinnerOnly - m.RunnerUpOnly
	how := "clear"
	if !m.Significant {
		how = "within noise"
	}
	if n <= 0 {
		return fmt.Sprintf("Promotion over %s not decided by validation cases (%d pass only for %s, %d only for %s): %s (%s).",
			code(m.RunnerUp), m.WinnerOnly, code(m.Winner), m.RunnerUpOnly, code(m.RunnerUp), how, pText(m.PValue, m.Significant, st))
	}
	return fmt.Sprintf("Promotion over %s decided by %s on validation (%d pass only for %s, %d only for %s): %s (%s).",
		code(m.RunnerUp), plural(n, "case"), m.WinnerOnly, code(m.Winner), m.RunnerUpOnly, code(m.RunnerUp), how, pText(m.PValue, m.Significant, st))
}

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
				out = appendLoss(out, st, "system "+code(s.ID), s.Change, Rate{Passed: s.Base.Passed, Total: s.Base.Total}, Rate{Passed: s.Head.Passed, Total: s.Head.Total})
			}
		}
	}
	if f := w.Foundry; f != nil && f.Base != nil && f.Head != nil && !f.Base.Exhausted && !f.Head.Exhausted {
		out = appendLoss(out, st, "promoted candidate "+code(f.Head.Key)+" (validation)", f.PromotedChange, f.Base.Validation, f.Head.Validation)
		if st.FailOn == workload.FailOnAnyRegression {
			out = appendLoss(out, st, "promoted candidate "+code(f.Head.Key)+" (holdout)", nil, f.Base.Holdout, f.Head.Holdout)
		}
	}
	return out
}

// appendLoss adds subject's loss from b to h when the fail-on counts it:
// a significant one (by its paired test ch) or any fall of the pass rate.
func appendLoss(out []string, st *Statistics, subject string, ch *significance.Change, b, h Rate) []string {
	switch {
	case ch != nil && st.FailOn == workload.FailOnSignificantRegression && ch.Significant && ch.Broken > ch.Fixed:
		return append(out, fmt.Sprintf("%s: significant loss, %s", subject, changeVerdict(ch, st)))
	case st.FailOn == workload.FailOnAnyRegression && h.Passed*b.Total < b.Passed*h.Total:
		return append(out, fmt.Sprintf("%s: pass count fell, %s → %s", subject, rate(b), rate(h)))
	}
	return out
}

// passVerdict is the pass-rate verdict a Pareto change carries: " Its
// pass rate: within noise (p = 0.25)."; "" without a paired test.
func passVerdict(s *System, st *Statistics) string {
	if s == nil || s.Change == nil || st == nil {
		return ""
	}
	return " Its pass rate change: " + changeVerdict(s.Change, st) + "."
}

func promotionMargin(p *Promotion) *Margin {
	if p == nil {
		return nil
	}
	return p.Margin
}

func (b *Bench) system(id string) *System {
	for _, s := range b.Systems {
		if s.ID == id {
			return s
		}
	}
	return nil
}

// prStatistics gives pr.html a workload's intervals, verdicts and
// statements, as the comment words them.
func prStatistics(pw *report.PRWorkload, w *Workload) {
	st := w.Statistics
	if st == nil {
		return
	}
	if bn := w.Bench; bn != nil {
		prIntervals(pw, bn, st)
	}
	if f := w.Foundry; f != nil {
		pw.Statistics = append(pw.Statistics, promotionStatements(f, st)...)
	}
	pw.Statistics = append(pw.Statistics, flipsNeeded(st))
}

// prIntervals gives pr.html each system's pass-rate intervals on both
// sides and the verdict of its paired test.
func prIntervals(pw *report.PRWorkload, bn *Bench, st *Statistics) {
	pw.BaseIntervals, pw.HeadIntervals, pw.Changes = map[string]significance.Interval{}, map[string]significance.Interval{}, map[string]string{}
	for _, s := range bn.Systems {
		if s.Base != nil {
			pw.BaseIntervals[s.ID] = s.Base.PassRateCI95
		}
		if s.Head != nil {
			pw.HeadIntervals[s.ID] = s.Head.PassRateCI95
		}
		if s.Base != nil && s.Head != nil {
			pw.Changes[s.ID] = changeCell(s.Change, st, s.Base.Passed != s.Head.Passed || s.Base.Total != s.Head.Total)
		}
	}
}

// promotionStatements say how the promoted candidate's validation changed
// and how clearly the head's promotion was decided, without code marks.
func promotionStatements(f *Foundry, st *Statistics) []string {
	var out []string
	if f.PromotedChange != nil {
		out = append(out, "Validation of the promoted candidate, base against head: "+changeVerdict(f.PromotedChange, st)+".")
	}
	if f.Head != nil {
		if m := marginText(f.Head.Margin, st); m != "" {
			out = append(out, strings.ReplaceAll(m, "`", ""))
		}
	}
	return out
}
