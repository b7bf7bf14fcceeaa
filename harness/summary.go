package harness

import (
	"fmt"
	"slices"
	"strings"

	"github.com/algal-assay/assay/engine/bench"
	"github.com/algal-assay/assay/engine/foundry"
)

// Table is a summary table: a header and rows of cells.
type Table struct {
	Header []string
	Rows   [][]string
}

// SummaryTable is the per-contender table of an outcome: for a bench,
// system, passed/total, tokens, calls and Pareto membership; for a
// foundry, each candidate in promotion order with validation and train
// rates, and the holdout of the promoted one.
//
// Where the run's live requests reported prompt-cache tokens (o.Cache), a
// bench table shows them in a "cache read/write" column, and its cost
// prices them at the price card's cache rates.
func SummaryTable(o *Outcome) Table { return summaryTable(o, true) }

func summaryTable(o *Outcome, withCache bool) Table {
	if o.brief != nil {
		return o.brief.table
	}
	if o.Repeats != nil {
		return RepeatsTable(o)
	}
	if o.Bench != nil {
		t := Table{Header: []string{"system", "passed", "tokens", "calls", "pareto"}}
		cache := o.Cache
		if !withCache {
			cache = nil
		}
		if cache != nil {
			t.Header = append(t.Header, "cache read/write")
		}
		hasCost := o.Bench.Prices != nil
		if hasCost {
			t.Header = append(t.Header, "cost")
		}
		for _, s := range o.Bench.Systems {
			pareto := "no"
			if slices.Contains(o.Bench.Pareto, s.ID) {
				pareto = "yes"
			}
			row := []string{s.ID, fmt.Sprintf("%d/%d", s.Passed, s.Total), tokens(int(s.Usage.UnknownTokens), fmt.Sprint(s.Usage.TokensIn+s.Usage.TokensOut)), fmt.Sprint(s.EffectCalls), pareto}
			c, cached := cache[s.ID]
			if cache != nil {
				row = append(row, fmt.Sprintf("%d/%d", c.Read, c.Write))
			}
			if hasCost {
				u := s.Usage
				if cached {
					u.Cost = c.Cost
				}
				row = append(row, CostCell(u))
			}
			t.Rows = append(t.Rows, row)
		}
		return t
	}
	if o.Foundry != nil && o.Foundry.Report != nil {
		r := o.Foundry.Report
		t := Table{Header: []string{"candidate", "promoted", "validation", "train", "holdout", "agent calls", "tokens"}}
		for _, i := range foundry.Rank(r.Candidates) {
			c := &r.Candidates[i]
			promoted, holdout := "", "-"
			if c.ManifestDigest == r.Promoted {
				promoted = "yes"
				holdout = fmt.Sprintf("%d/%d", r.Holdout.Passed, r.Holdout.Total)
			}
			t.Rows = append(t.Rows, []string{c.ManifestKey, promoted, fmt.Sprintf("%d/%d", c.Validation.Passed, c.Validation.Total),
				fmt.Sprintf("%d/%d", c.Train.Passed, c.Train.Total), holdout, fmt.Sprint(c.Work.AgentCalls), tokens(o.UnknownUsage[c.ManifestKey], fmt.Sprint(c.Usage.TokensIn+c.Usage.TokensOut))})
		}
		return t
	}
	return Table{}
}

// tokens is a contender's token cell (known, its total or mean), or
// "unknown" when some of its live calls reported no usage: a sum over the
// calls that did would understate it.
func tokens(unknown int, known string) string {
	if unknown > 0 {
		return fmt.Sprintf("unknown (%d calls without usage)", unknown)
	}
	return known
}

// CostCell is a tally's cost as tables show it: dollars, or "unknown"
// with the number of calls that make it so (a server omitted usage, or
// the price card has no price for the model), never a sum that pretends
// those calls were free.
func CostCell(t bench.Tally) string {
	if t.CostUnknown() {
		return fmt.Sprintf("unknown (%d calls unpriced or without usage)", t.UnknownCost)
	}
	return bench.FormatCost(t.Cost)
}

// Markdown renders t as a GitHub table.
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

// Summary renders summary.md: what ran, the contender table, the gate
// verdicts and the verification. It carries no wall-clock values, so the
// same inputs give the same file.
func Summary(o *Outcome) string {
	w := o.Workload
	var b strings.Builder
	fmt.Fprintf(&b, "# %s (%s, revision %d)\n\n", w.Name, w.Kind, w.Revision)
	if w.Description != "" {
		fmt.Fprintf(&b, "%s\n\n", strings.TrimSpace(w.Description))
	}
	fmt.Fprintf(&b, "- run: `%s`\n- inputs: `%s`\n", o.Compiled.Slug, o.Compiled.Identity)
	if o.Repeats != nil {
		fmt.Fprintf(&b, "- repeats: %d (the lines below are repeat 1's; the table pools every repeat)\n", o.Repeats.K)
	}
	if o.Bench != nil {
		fmt.Fprintf(&b, "- report: `%s`\n- pareto: %s\n", o.Bench.Digest, strings.Join(o.Bench.Pareto, ", "))
		b.WriteString(partsSummary(o))
	}
	if o.Foundry != nil {
		if r := o.Foundry.Report; r != nil {
			fmt.Fprintf(&b, "- report: `%s`\n- promoted: `%s`\n- holdout: %d/%d\n", r.Digest, r.Promoted, r.Holdout.Passed, r.Holdout.Total)
			if r.Lineage != nil {
				fmt.Fprintf(&b, "- generator: `%s` (run `%s`)\n", r.Lineage.GeneratorDigest, r.Lineage.ReceiptDigest)
			}
		} else {
			b.WriteString("- the habitat budget was exhausted before promotion (see budget.json)\n")
		}
	}
	for _, warn := range o.Warnings {
		fmt.Fprintf(&b, "- warning: %s\n", warn)
	}
	b.WriteString("\n## Results\n\n")
	// summary.md is re-derived from the evidence alone (Derived.Outcome),
	// which holds no cache token counts.
	b.WriteString(summaryTable(o, false).Markdown())
	b.WriteString(intervalsSection(o))
	b.WriteString(repeatsSection(o))
	b.WriteString("\n## Gate\n\n")
	switch {
	case o.Foundry != nil && o.Foundry.Report == nil:
		b.WriteString("The workload fails: the foundry promoted no candidate.\n")
	case len(o.Gates) == 0:
		b.WriteString("No gate rules: the workload passes when its evidence verifies.\n")
	}
	for _, g := range o.Gates {
		mark := "PASS"
		if !g.Passed {
			mark = "FAIL"
		}
		fmt.Fprintf(&b, "- **%s** %s: %s\n", mark, g.Rule.Name(), g.Message)
	}
	b.WriteString("\n## Verification\n\n")
	if v := o.Verification; v != nil {
		if v.OK {
			fmt.Fprintf(&b, "Verified: %d receipts checked and replayed.\n", v.CheckedReceipts)
		} else {
			fmt.Fprintf(&b, "NOT verified (%d receipts checked):\n\n", v.CheckedReceipts)
			for _, m := range v.Mismatches {
				fmt.Fprintf(&b, "- %s\n", m)
			}
		}
	}
	return b.String()
}
