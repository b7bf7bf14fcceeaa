package report

import (
	"fmt"
	"strings"

	"github.com/algal-assay/assay/engine/significance"
)

// pText is "p = 0.016", or "p < 0.001".
func pText(p significance.Figure, significant bool, st *Statistics) string {
	s := significance.FormatP(p, significant, st.alphaRat())
	if strings.HasPrefix(s, "<") {
		return "p " + s
	}
	return "p = " + s
}

// ChangeVerdict is a paired change in words: "significant (p = 0.016, 7
// fixed / 0 broken)" or "within noise (p = 0.25)".
func ChangeVerdict(ch *significance.Change, st *Statistics) string {
	if ch.Significant {
		return fmt.Sprintf("significant (%s, %d fixed / %d broken)", pText(ch.PValue, true, st), ch.Fixed, ch.Broken)
	}
	return fmt.Sprintf("within noise (%s)", pText(ch.PValue, false, st))
}

// changeCell is ChangeVerdict where something changed, else "—".
func changeCell(ch *significance.Change, st *Statistics, changed bool) string {
	if ch == nil || st == nil || !changed && ch.Fixed+ch.Broken == 0 {
		return "—"
	}
	return ChangeVerdict(ch, st)
}

// flipsNeeded says how many one-way flips the workload's test needs
// before it can call a change significant, or that none can be.
func flipsNeeded(st *Statistics) string {
	if st == nil {
		return ""
	}
	if st.MinFlips == 0 {
		return fmt.Sprintf("With %s, no change can be significant at alpha %s (%s): the case set is too small to tell a change from noise.", howMany(st.Cases, "case"), st.Alpha, st.Test)
	}
	return fmt.Sprintf("At least %s must flip one way before a change can be significant (%s, alpha %s, %s).", howMany(st.MinFlips, "case"), st.Test, st.Alpha, howMany(st.Cases, "case"))
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
			CodeSpan(m.RunnerUp), m.WinnerOnly, CodeSpan(m.Winner), m.RunnerUpOnly, CodeSpan(m.RunnerUp), how, pText(m.PValue, m.Significant, st))
	}
	return fmt.Sprintf("Promotion over %s decided by %s on validation (%d pass only for %s, %d only for %s): %s (%s).",
		CodeSpan(m.RunnerUp), howMany(n, "case"), m.WinnerOnly, CodeSpan(m.Winner), m.RunnerUpOnly, CodeSpan(m.RunnerUp), how, pText(m.PValue, m.Significant, st))
}

// passVerdict is the pass-rate verdict a Pareto change carries: " Its
// pass rate: within noise (p = 0.25)."; "" without a paired test.
func passVerdict(s *DiffSystem, st *Statistics) string {
	if s == nil || s.Change == nil || st == nil {
		return ""
	}
	return " Its pass rate change: " + ChangeVerdict(s.Change, st) + "."
}

func promotionMargin(p *Promotion) *Margin {
	if p == nil {
		return nil
	}
	return p.Margin
}

func (b *DiffBench) system(id string) *DiffSystem {
	for _, s := range b.Systems {
		if s.ID == id {
			return s
		}
	}
	return nil
}
