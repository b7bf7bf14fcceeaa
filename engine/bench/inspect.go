package bench

import (
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/algal-assay/assay/engine/canon"
)

// Inspect renders a report for people: one row per system with its score,
// cost signal, calls and work, whether it is on the Pareto set (and its
// place there), the axis values when axes are declared, then the cases on
// which the systems disagree.
func Inspect(r *Report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "bench %s\nworkload %s, %d cases\n", r.Digest, r.Workload, len(r.Cases))
	fmt.Fprintf(&b, "pareto axes: %s\n\n", paretoAxes(r))
	writeSystems(&b, r)
	if split := disagreements(r); len(split) > 0 {
		b.WriteString("\ncases the systems disagree on:\n" + strings.Join(split, "\n") + "\n")
	}
	if r.Scorer != nil {
		prog, _ := canon.Encode(r.Scorer.Envelope["program"])
		fmt.Fprintf(&b, "scorer: %s\n", prog)
	} else {
		b.WriteString("scorer: exact match\n")
	}
	return b.String()
}

// paretoAxes names the criteria the Pareto set is taken over, with the
// direction that is better.
func paretoAxes(r *Report) string {
	switch {
	case r.Axes != nil:
		names := make([]string, len(r.Axes))
		for i, a := range r.Axes {
			names[i] = a.Name + " " + map[string]string{"up": "↑", "down": "↓"}[a.Dir]
		}
		return strings.Join(names, ", ")
	case r.Prices != nil:
		return "passed ↑, cost in dollars ↓, effect calls ↓"
	}
	return "passed ↑, total tokens ↓, effect calls ↓"
}

// writeSystems writes the table of systems, a row each.
func writeSystems(b *strings.Builder, r *Report) {
	tw := tabwriter.NewWriter(b, 0, 4, 2, ' ', 0)
	head := "system\tpassed\ttokens in/out\tcost\tcalls\twork units\tpareto"
	for _, a := range r.Axes {
		head += "\t" + a.Name
	}
	fmt.Fprintln(tw, head)
	for i := range r.Systems {
		s := &r.Systems[i]
		place := "-"
		if p := slices.Index(r.Pareto, s.ID); p >= 0 {
			place = fmt.Sprintf("#%d", p+1)
		}
		row := fmt.Sprintf("%s\t%d/%d\t%d/%d\t%s\t%d\t%d\t%s", s.ID, s.Passed, s.Total, s.Usage.TokensIn, s.Usage.TokensOut,
			FormatCost(s.Usage.Cost), s.EffectCalls, s.Work.Units, place)
		for _, a := range r.Axes {
			row += "\t" + num(s.AxisValues[a.Name])
		}
		fmt.Fprintln(tw, row)
	}
	tw.Flush()
}

// disagreements lists, a line each, the cases some systems pass and
// others fail.
func disagreements(r *Report) []string {
	var split []string
	for ci, c := range r.Cases {
		var pass, fail []string
		for i := range r.Systems {
			if ci < len(r.Systems[i].Cases) && r.Systems[i].Cases[ci].Passed {
				pass = append(pass, r.Systems[i].ID)
			} else {
				fail = append(fail, r.Systems[i].ID)
			}
		}
		if len(pass) > 0 && len(fail) > 0 {
			split = append(split, fmt.Sprintf("  %s: passed by %s; failed by %s", c.ID, strings.Join(pass, ", "), strings.Join(fail, ", ")))
		}
	}
	return split
}
