package report

import (
	"fmt"
	"strings"
)

// The comment's promotions section: per changed foundry workload, the
// promoted candidate on both sides, the rankings and the candidates.

func promoted(p *Promotion) string {
	if p == nil {
		return "—"
	}
	if p.Exhausted {
		return "nothing (habitat budget exhausted)"
	}
	return CodeSpan(p.Key) + " (" + CodeSpan(short(p.Digest)) + ")"
}

func promotionsMD(d *Diff) string {
	var b strings.Builder
	var unchanged []string
	n := 0
	for _, w := range d.Workloads {
		f := w.Foundry
		if f == nil {
			continue
		}
		n++
		if w.Status == StatusUnchanged {
			unchanged = append(unchanged, fmt.Sprintf("%s (promotes %s%s)", text(w.Name), promoted(f.Head), flipsShort(w.Statistics)))
			continue
		}
		fmt.Fprintf(&b, "### %s (%s)\n\n", text(w.Name), w.Status)
		promotionLine(&b, f, w.Statistics)
		if f.Base != nil && f.Head != nil && !f.Base.Exhausted && !f.Head.Exhausted {
			promotedMD(&b, f, w.Statistics)
		}
		if m := marginText(promotionMargin(f.Head), w.Statistics); m != "" {
			b.WriteString(m + "\n\n")
		}
		if f.PromotedChanged || rankingChanged(f) {
			rankingsMD(&b, f)
		}
		candidatesMD(&b, f.Candidates, w.Statistics)
		candidateList(&b, "added", f.Added)
		candidateList(&b, "removed", f.Removed)
		candidateList(&b, "revised", f.Revised)
		if k := len(f.Flips); k > 0 {
			fmt.Fprintf(&b, "- %s flipped (see %s)\n", howMany(k, "case outcome"), TitleFlips)
		}
		if w.Status == StatusChanged {
			b.WriteString("\n" + flipsNeeded(w.Statistics) + "\n")
		}
		b.WriteString("\n")
	}
	return closeSection(&b, n, "foundry", unchanged)
}

// promotionLine says what each side promotes and, when the promoted
// candidate changed, how the two compare on validation.
func promotionLine(b *strings.Builder, f *DiffFoundry, st *Statistics) {
	switch {
	case f.PromotedChanged:
		fmt.Fprintf(b, "**Promoted candidate changed**: %s → %s\n\n", promoted(f.Base), promoted(f.Head))
		if f.PromotedChange != nil {
			fmt.Fprintf(b, "Validation, the base's promoted against the head's on the cases both ran: %s.\n\n", ChangeVerdict(f.PromotedChange, st))
		}
	case f.Base != nil && f.Head != nil:
		fmt.Fprintf(b, "Promoted candidate unchanged: %s\n\n", promoted(f.Head))
	case f.Head != nil:
		fmt.Fprintf(b, "Promotes %s\n\n", promoted(f.Head))
	default:
		fmt.Fprintf(b, "Promoted %s at base; the workload no longer runs at head.\n\n", promoted(f.Base))
	}
}

// promotedMD compares the promoted candidates of both sides: their rates
// per split, the candidate count, the validation change of one promoted
// on both sides and the holdout cases it fails at head.
func promotedMD(b *strings.Builder, f *DiffFoundry, st *Statistics) {
	b.WriteString("| promoted | base | head | Δ |\n| --- | --- | --- | --- |\n")
	for _, r := range []struct {
		name string
		b, h Rate
	}{{"validation", f.Base.Validation, f.Head.Validation}, {"train", f.Base.Train, f.Head.Train}, {"holdout", f.Base.Holdout, f.Head.Holdout}} {
		fmt.Fprintf(b, "| %s | %s | %s | %s |\n", r.name, pct(r.b), pct(r.h), ppDelta(r.b, r.h))
	}
	fmt.Fprintf(b, "| candidates | %d | %d | %s |\n\n", f.Base.Candidates, f.Head.Candidates, delta(int64(f.Base.Candidates), int64(f.Head.Candidates)))
	if ch := f.PromotedChange; ch != nil && !f.PromotedChanged && (ch.Fixed+ch.Broken > 0 || f.Base.Validation.Passed != f.Head.Validation.Passed) {
		fmt.Fprintf(b, "Validation change of the promoted candidate: %s.\n\n", ChangeVerdict(ch, st))
	}
	if len(f.Head.HoldoutFailing) > 0 {
		fmt.Fprintf(b, "Holdout cases the promoted candidate fails at head: %s.\n\n", list(f.Head.HoldoutFailing))
	}
}

// rankingsMD shows the promotion order at head, and at base folded away.
func rankingsMD(b *strings.Builder, f *DiffFoundry) {
	b.WriteString(rankingMD("Ranking at head", f.HeadRanking))
	if len(f.BaseRanking) > 0 {
		b.WriteString("<details><summary>Ranking at base</summary>\n\n")
		b.WriteString(rankingMD("", f.BaseRanking))
		b.WriteString("</details>\n\n")
	}
}

// candidatesMD is the table of every candidate's validation and train
// rates on both sides (nothing when no candidate is listed).
func candidatesMD(b *strings.Builder, cs []*CandidatePair, st *Statistics) {
	if len(cs) == 0 {
		return
	}
	b.WriteString("| candidate | validation | validation change | train |\n| --- | --- | --- | --- |\n")
	for _, c := range cs {
		name := tcode(c.Key)
		if c.Head != nil && c.Head.Promoted {
			name += " (promoted)"
		}
		val, tr := candidateRates(c)
		vc := "—"
		if c.Base != nil && c.Head != nil {
			vc = changeCell(c.Change, st, c.Base.Validation.Passed != c.Head.Validation.Passed || c.Base.Validation.Total != c.Head.Validation.Total)
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s |\n", name, val, vc, tr)
	}
	b.WriteString("\n")
}

// candidateRates are a candidate's validation and train cells: the change
// from base to head, or the one side's rate marked new or removed.
func candidateRates(c *CandidatePair) (val, tr string) {
	switch {
	case c.Base == nil:
		return c.Head.Validation.Ratio() + " (new)", c.Head.Train.Ratio()
	case c.Head == nil:
		return c.Base.Validation.Ratio() + " (removed)", c.Base.Train.Ratio()
	}
	return changeText(c.Base.Validation.Ratio(), c.Head.Validation.Ratio(), ppDelta(c.Base.Validation, c.Head.Validation)),
		changeText(c.Base.Train.Ratio(), c.Head.Train.Ratio(), ppDelta(c.Base.Train, c.Head.Train))
}

// candidateList names the candidates added, removed or revised, with
// their digests (nothing when there are none).
func candidateList(b *strings.Builder, label string, cs []Candidate) {
	if len(cs) == 0 {
		return
	}
	var parts []string
	for _, c := range cs {
		if c.Was != "" {
			parts = append(parts, fmt.Sprintf("%s (%s → %s)", CodeSpan(c.Key), CodeSpan(short(c.Was)), CodeSpan(short(c.Digest))))
		} else {
			parts = append(parts, fmt.Sprintf("%s (%s)", CodeSpan(c.Key), CodeSpan(short(c.Digest))))
		}
	}
	fmt.Fprintf(b, "- candidates %s: %s\n", label, strings.Join(parts, ", "))
}

// rankingChanged reports whether the promotion order or a deciding
// column differs between the sides.
func rankingChanged(f *DiffFoundry) bool {
	if len(f.BaseRanking) != len(f.HeadRanking) {
		return len(f.BaseRanking) > 0 && len(f.HeadRanking) > 0
	}
	for i := range f.HeadRanking {
		b, h := f.BaseRanking[i], f.HeadRanking[i]
		if b.Key != h.Key || b.DecidedBy != h.DecidedBy {
			return true
		}
	}
	return false
}

// rankingMD renders a promotion order with every value of the deciding
// column in bold, so a tie broken by one work unit shows as plainly as a
// validation rate.
func rankingMD(title string, places []RankPlace) string {
	if len(places) == 0 {
		return ""
	}
	var b strings.Builder
	if title != "" {
		fmt.Fprintf(&b, "%s (the **bold** value decided each place: validation, then train, then fewer agent calls, then fewer work units, then digest):\n\n", title)
	}
	b.WriteString("| # | candidate | validation | train | agent calls | work units | decided by |\n| --- | --- | --- | --- | --- | --- | --- |\n")
	for _, p := range places {
		cells := []string{p.Validation.Ratio(), p.Train.Ratio(), fmt.Sprint(p.AgentCalls), fmt.Sprint(p.Units)}
		for i, col := range []string{"validation", "train", "agent calls", "work units"} {
			if col == p.DecidedBy {
				cells[i] = "**" + cells[i] + "**"
			}
		}
		name := tcode(p.Key)
		if p.Promoted {
			name += " (promoted)"
		}
		why := p.Why
		if why == "" {
			why = "—"
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %s |\n", p.Place, name, strings.Join(cells, " | "), cell(why))
	}
	b.WriteString("\n")
	return b.String()
}
