package report

import (
	"fmt"
	"strings"
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
	b.WriteString(r.Intervals)
	b.WriteString(r.RepeatsAccount)
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
		b.WriteString(r.PartsNote)
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
