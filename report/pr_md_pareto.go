package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/algal-assay/assay/engine/bench"
)

// The comment's Pareto section: per changed bench workload, how the
// Pareto set moved and why, and the systems table with both sides.

// tokensText is a side's token total, or unknown (with the note under
// the table) when a call's counts are.
func tokensText(s *SystemStats) string {
	if s.TokensUnknown > 0 {
		return Unknown
	}
	return fmt.Sprint(s.Tokens)
}

// amountText is a side's cost in dollars, or unknown when a call's cost
// is: never the 0.000000 a sum without those calls would show.
func amountText(s *SystemStats) string {
	if s.CostUnknown > 0 {
		return Unknown
	}
	return bench.FormatDollars(s.Cost)
}

// unknownOr is the change d, or n/a when either side is unknown.
func unknownOr(unknownCalls int64, d string) string {
	if unknownCalls > 0 {
		return "n/a"
	}
	return d
}

func paretoMD(d *Diff) string {
	var b strings.Builder
	var unchanged []string
	n := 0
	for _, w := range d.Workloads {
		if w.Bench == nil {
			continue
		}
		n++
		bn := w.Bench
		if w.Status == StatusUnchanged {
			unchanged = append(unchanged, fmt.Sprintf("%s (Pareto set: %s%s)", text(w.Name), list(bn.ParetoHead), flipsShort(w.Statistics)))
			continue
		}
		fmt.Fprintf(&b, "### %s (%s)\n\n", text(w.Name), w.Status)
		paretoChange(&b, w)
		systemsMD(&b, bn, w.Statistics)
		if revised := revisedSystems(bn); len(revised) > 0 {
			fmt.Fprintf(&b, "\nRevised organisms: %s.\n", strings.Join(revised, "; "))
		}
		if k := len(bn.Flips); k > 0 {
			fmt.Fprintf(&b, "\n%s flipped (see %s).\n", howMany(k, "case outcome"), TitleFlips)
		}
		if w.Status == StatusChanged {
			b.WriteString("\n" + flipsNeeded(w.Statistics) + "\n")
		}
		b.WriteString("\n")
	}
	return closeSection(&b, n, "bench", unchanged)
}

// paretoChange says how the Pareto set moved, and why each system that
// left or joined it did.
func paretoChange(b *strings.Builder, w *DiffWorkload) {
	bn := w.Bench
	switch {
	case w.Status == StatusAdded:
		fmt.Fprintf(b, "Pareto set: %s\n\n", list(bn.ParetoHead))
	case w.Status == StatusRemoved:
		fmt.Fprintf(b, "Pareto set at base: %s; the workload no longer runs at head.\n\n", list(bn.ParetoBase))
	case len(bn.Joined)+len(bn.Left) == 0:
		fmt.Fprintf(b, "Pareto set unchanged: %s\n\n", list(bn.ParetoHead))
	default:
		fmt.Fprintf(b, "Pareto set: %s → %s · joined: %s · left: %s\n\n", list(bn.ParetoBase), list(bn.ParetoHead), list(bn.Joined), list(bn.Left))
		crit := criteriaNames(w)
		for _, s := range bn.Systems {
			if s.Pareto == "left" {
				fmt.Fprintf(b, "- **%s** left the Pareto set: %s.%s\n", text(s.ID), dominatedText(s.DominatedBy, crit), passVerdict(s, w.Statistics))
			}
		}
		for _, id := range bn.Joined {
			fmt.Fprintf(b, "- **%s** joined the Pareto set: no system is as good on every criterion (%s) and better on one.%s\n", text(id), strings.Join(crit, ", "), passVerdict(bn.system(id), w.Statistics))
		}
		b.WriteString("\n")
	}
}

// systemsMD is the table of every system on both sides (a cost column
// when the bench prices its calls), with a note when a cell is unknown.
func systemsMD(b *strings.Builder, bn *DiffBench, st *Statistics) {
	b.WriteString("| system | passed | change | tokens | ")
	if bn.HasCost {
		b.WriteString("cost $ | ")
	}
	b.WriteString("calls | Pareto |\n| --- | --- | --- | --- | ")
	if bn.HasCost {
		b.WriteString("--- | ")
	}
	b.WriteString("--- | --- |\n")
	unknown := false
	for _, s := range bn.Systems {
		unknown = unknown || hasUnknown(s, bn.HasCost)
		r := commentSystemCells(s, st)
		fmt.Fprintf(b, "| %s | %s | %s | %s | ", cell(s.ID), r.passed, r.verdict, r.tokens)
		if bn.HasCost {
			fmt.Fprintf(b, "%s | ", r.cost)
		}
		fmt.Fprintf(b, "%s | %s |\n", r.calls, r.pareto)
	}
	if unknown {
		b.WriteString("\n" + UnknownNote + "\n")
	}
}

// hasUnknown reports whether a side of s has calls without usage (or
// unpriced ones, when the bench prices its calls).
func hasUnknown(s *DiffSystem, hasCost bool) bool {
	for _, st := range []*SystemStats{s.Base, s.Head} {
		if st != nil && (st.TokensUnknown > 0 || hasCost && st.CostUnknown > 0) {
			return true
		}
	}
	return false
}

// systemCells are one system's cells in the Pareto table.
type systemCells struct {
	passed, verdict, tokens, cost, calls, pareto string
}

// commentSystemCells words a system's cells: the change from base to head, or the
// one side's values marked new or removed.
func commentSystemCells(s *DiffSystem, st *Statistics) systemCells {
	switch {
	case s.Base == nil:
		h := s.Head
		return systemCells{passed: fmt.Sprintf("%d/%d (new)", h.Passed, h.Total), verdict: "—",
			tokens: tokensText(h), cost: amountText(h), calls: fmt.Sprint(h.Calls), pareto: yesNo(h.OnPareto)}
	case s.Head == nil:
		b := s.Base
		return systemCells{passed: fmt.Sprintf("%d/%d (removed)", b.Passed, b.Total), verdict: "—",
			tokens: tokensText(b), cost: amountText(b), calls: fmt.Sprint(b.Calls), pareto: "—"}
	}
	b, h := s.Base, s.Head
	return systemCells{
		passed:  changeText(fmt.Sprintf("%d/%d", b.Passed, b.Total), fmt.Sprintf("%d/%d", h.Passed, h.Total), delta(b.Passed, h.Passed)),
		verdict: changeCell(s.Change, st, b.Passed != h.Passed || b.Total != h.Total),
		tokens:  changeText(tokensText(b), tokensText(h), unknownOr(b.TokensUnknown+h.TokensUnknown, delta(b.Tokens, h.Tokens))),
		cost:    changeText(amountText(b), amountText(h), unknownOr(b.CostUnknown+h.CostUnknown, fdelta(b.Cost, h.Cost))),
		calls:   changeText(fmt.Sprint(b.Calls), fmt.Sprint(h.Calls), delta(b.Calls, h.Calls)),
		pareto:  paretoCell(s),
	}
}

// paretoCell is the Pareto column of a system on both sides.
func paretoCell(s *DiffSystem) string {
	switch s.Pareto {
	case "joined":
		return "**joined**"
	case "left":
		if len(s.DominatedBy) > 0 {
			return "**left**: dominated by " + dominatorNames(s.DominatedBy)
		}
		return "**left**"
	case "stays":
		return "yes"
	}
	return "no"
}

// revisedSystems names each system whose organism differs between the
// sides, with both digests.
func revisedSystems(bn *DiffBench) []string {
	var revised []string
	for _, s := range bn.Systems {
		if s.Base != nil && s.Head != nil && s.Base.ManifestDigest != s.Head.ManifestDigest {
			revised = append(revised, fmt.Sprintf("%s runs %s (%s → %s)", text(s.ID), CodeSpan(s.Head.ManifestKey), CodeSpan(short(s.Base.ManifestDigest)), CodeSpan(short(s.Head.ManifestDigest))))
		}
	}
	return revised
}

// closeSection ends the Pareto or the promotion section, which held n
// workloads of its kind: a section without any says so instead, and the
// unchanged ones are named together on its last line.
func closeSection(b *strings.Builder, n int, kind string, unchanged []string) string {
	if n == 0 {
		return "No " + kind + " workloads.\n"
	}
	if len(unchanged) > 0 {
		fmt.Fprintf(b, "Unchanged: %s.\n", strings.Join(unchanged, "; "))
	}
	return b.String()
}

// criteriaNames are the Pareto criteria of a bench workload at head (else
// base), in report order.
func criteriaNames(w *DiffWorkload) []string {
	var names []string
	if r := benchAtHead(w); r != nil {
		for _, c := range r.Criteria() {
			names = append(names, c.Name)
		}
	}
	return names
}

// benchAtHead is the workload's bench report at head, else at base (nil
// when neither side left one).
func benchAtHead(w *DiffWorkload) *bench.Report {
	if w.HeadBench != nil {
		return w.HeadBench
	}
	return w.BaseBench
}

func dominatorNames(ds []Dominator) string {
	names := make([]string, len(ds))
	for i, d := range ds {
		names[i] = d.By
	}
	return list(names)
}

// dominatedText says who dominates a system and where: "cheap-single
// dominates it (better on passed and cost, as good on calls)".
func dominatedText(ds []Dominator, crit []string) string {
	if len(ds) == 0 {
		return "it is off the Pareto set at head"
	}
	var parts []string
	for _, d := range ds {
		var same []string
		for _, c := range crit {
			if !slices.Contains(d.Better, c) {
				same = append(same, c)
			}
		}
		p := fmt.Sprintf("%s dominates it (better on %s", text(d.By), and(texts(d.Better)))
		if len(same) > 0 {
			p += ", as good on " + and(texts(same))
		}
		parts = append(parts, p+")")
	}
	return strings.Join(parts, "; ")
}
