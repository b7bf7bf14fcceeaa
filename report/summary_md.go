package report

import (
	"fmt"
	"strings"

	"github.com/algal-assay/assay/engine/significance"
)

// SummaryMD renders a run directory's summary.md: what ran, the contender
// table, the gate verdicts and the verification. It carries no wall-clock
// values, so the same run gives the same file.
func SummaryMD(r *Run) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s (%s, revision %d)\n\n", r.Workload, r.Kind, r.Revision)
	if r.Description != "" {
		fmt.Fprintf(&b, "%s\n\n", strings.TrimSpace(r.Description))
	}
	summaryFacts(&b, r)
	b.WriteString("\n## Results\n\n")
	b.WriteString(r.Table.Markdown())
	summaryPassRates(&b, r.PassRates)
	summaryRepeats(&b, r.RepeatsAccount)
	b.WriteString("\n## Gate\n\n")
	summaryGate(&b, r)
	b.WriteString("\n## Verification\n\n")
	summaryVerification(&b, r.Verification)
	return b.String()
}

// summaryFacts is the list under the title: the run, its inputs and its
// report, what it promoted or why it could not, and its warnings.
func summaryFacts(b *strings.Builder, r *Run) {
	fmt.Fprintf(b, "- run: `%s`\n- inputs: `%s`\n", r.Slug, r.Identity)
	if r.Repeats > 0 {
		fmt.Fprintf(b, "- repeats: %d (the lines below are repeat 1's; the table pools every repeat)\n", r.Repeats)
	}
	if f := r.Bench; f != nil {
		fmt.Fprintf(b, "- report: `%s`\n- pareto: %s\n", f.Digest, strings.Join(f.Pareto, ", "))
		if p := r.Parts; p != nil {
			fmt.Fprintf(b, "- parts: %d (%s to %s), each at most %d cases and %d systems; totals in `%s`\n", p.Count, p.First, p.Last, p.MaxCases, p.MaxSystems, p.Aggregate)
		}
	}
	if f := r.Foundry; f != nil {
		fmt.Fprintf(b, "- report: `%s`\n- promoted: `%s`\n- holdout: %d/%d\n", f.Digest, f.Promoted, f.HoldoutPassed, f.HoldoutTotal)
		if l := f.Lineage; l != nil {
			fmt.Fprintf(b, "- generator: `%s` (run `%s`)\n", l.Generator, l.Run)
		}
	}
	if r.BudgetExhausted {
		b.WriteString("- the habitat budget was exhausted before promotion (see budget.json)\n")
	}
	for _, warn := range r.Warnings {
		fmt.Fprintf(b, "- warning: %s\n", warn)
	}
}

// summaryPassRates lists the pass rates with their 95% intervals and
// says how the intervals were computed (nothing without a row).
func summaryPassRates(b *strings.Builder, p *PassRates) {
	if p == nil || len(p.Rows) == 0 {
		return
	}
	how := "Wilson score interval; the cases are single samples"
	if p.Repeats > 0 {
		how = fmt.Sprintf("clustered by case: mean of the per-case pass rates ± 1.96 standard errors, over %d repeats", p.Repeats)
	}
	lines := make([]string, len(p.Rows))
	for i, row := range p.Rows {
		lines[i] = passRateLine(row)
	}
	b.WriteString("\nPass rates with their 95% intervals (" + how + "):\n\n" + strings.Join(lines, "\n") + "\n")
}

// passRateLine is one row of the pass rates: "- a: 4/6 = 0.667, 95%
// interval [0.3, 0.9]", a candidate's validation and train, or the
// holdout of the promoted candidate.
func passRateLine(row PassRateRow) string {
	switch {
	case row.Holdout && row.Subject == "":
		return "- holdout of the promoted candidate: " + intervalText(row.Passed)
	case row.Holdout:
		return fmt.Sprintf("- holdout of %s: %s", row.Subject, intervalText(row.Passed))
	case row.Passed != nil:
		return fmt.Sprintf("- %s: %s", row.Subject, intervalText(row.Passed))
	}
	return fmt.Sprintf("- %s: validation %s; train %s", row.Subject, intervalText(row.Validation), intervalText(row.Train))
}

// intervalText is "4/6 = 0.667, 95% interval [0.3, 0.9]".
func intervalText(r *PassRate) string {
	if r == nil || r.Total == 0 {
		return "no cases"
	}
	s := fmt.Sprintf("%d/%d = %s", r.Passed, r.Total, significance.Figure(float64(r.Passed)/float64(r.Total)))
	if r.CI95.Defined() {
		return s + fmt.Sprintf(", 95%% interval [%s, %s]", r.CI95.Lo, r.CI95.Hi)
	}
	return s + ", no interval (fewer than two cases)"
}

// summaryRepeats is the account of the repeats: which report each repeat
// left, what a foundry promoted over all of them, and every flaky case
// with the repeats it passed in (nothing for a single sample).
func summaryRepeats(b *strings.Builder, a *RepeatsAccount) {
	if a == nil {
		return
	}
	fmt.Fprintf(b, "\n## Repeats\n\n%d repeats, each an ordinary report verified on its own; `%s` aggregates them and is re-derived from them on every read.\n\n", a.K, a.Aggregate)
	for i, r := range a.Reports {
		file := r.File
		if r.Exhausted {
			file += " (habitat budget exhausted)"
		}
		fmt.Fprintf(b, "- repeat %d: `%s` `%s`\n", i+1, file, r.Digest)
	}
	if p := a.Promoted; p != nil {
		fmt.Fprintf(b, "\nPromoted on validation pooled over all repeats: %s; its own repeats promoted it in %d of %d.\n", p.ID, p.PromotedIn, a.K)
	}
	if len(a.Flaky) == 0 {
		b.WriteString("\nNo flaky case: every case passed in every repeat or in none.\n")
		return
	}
	b.WriteString("\nFlaky cases (passed in some repeats, failed in others):\n\n")
	for _, f := range a.Flaky {
		fmt.Fprintf(b, "- %s: %s (passed in %s of %d)\n", f.Subject, f.Case, repeatWord(f.PassedIn), f.Runs)
	}
}

// repeatWord names the repeats a case passed in: "repeat 2", "repeats
// 1, 3".
func repeatWord(rs []int) string {
	if len(rs) == 1 {
		return "repeat " + repeatList(rs)
	}
	return "repeats " + repeatList(rs)
}

// summaryGate lists each gate rule's verdict, or says why there are none.
func summaryGate(b *strings.Builder, r *Run) {
	switch {
	case r.BudgetExhausted:
		b.WriteString("The workload fails: the foundry promoted no candidate.\n")
	case len(r.Gates) == 0:
		b.WriteString("No gate rules: the workload passes when its evidence verifies.\n")
	}
	for _, g := range r.Gates {
		mark := "PASS"
		if !g.Passed {
			mark = "FAIL"
		}
		fmt.Fprintf(b, "- **%s** %s: %s\n", mark, g.Name, g.Message)
	}
}

// summaryVerification says whether every receipt checked and replayed,
// listing the mismatches when not ("" when the run was not verified).
func summaryVerification(b *strings.Builder, v *Verification) {
	switch {
	case v == nil:
	case v.OK:
		fmt.Fprintf(b, "Verified: %d receipts checked and replayed.\n", v.CheckedReceipts)
	default:
		fmt.Fprintf(b, "NOT verified (%d receipts checked):\n\n", v.CheckedReceipts)
		for _, m := range v.Mismatches {
			fmt.Fprintf(b, "- %s\n", m)
		}
	}
}

// Markdown renders t as a GitHub table ("" when it has no header).
func (t Table) Markdown() string {
	if len(t.Header) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("| " + strings.Join(t.Header, " | ") + " |\n|")
	for range t.Header {
		b.WriteString(" --- |")
	}
	b.WriteString("\n")
	for _, r := range t.Rows {
		b.WriteString("| " + strings.Join(r, " | ") + " |\n")
	}
	return b.String()
}
