package diff

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	ghci "github.com/algal-assay/assay/ci/github"
	"github.com/algal-assay/assay/report"
)

// TitlePlot is the job summary's Pareto plot section.
const TitlePlot = "Pareto plots"

// SummarySections are the job summary's sections: the comment's, with the
// Pareto plot of every changed bench workload after the Pareto sets. The
// plot is a Markdown table (one row per system, the frontier in x order):
// job summaries show inline SVG only as an image and Mermaid's xychart has
// no scatter, while a table renders everywhere and keeps exact values.
func SummarySections(d *Diff, o RenderOptions) []ghci.Section {
	s := Sections(d, o)
	plot := PlotMD(d)
	if plot == "" {
		return s
	}
	for i, sec := range s {
		if sec.Title == TitlePareto {
			return slices.Insert(s, i+1, ghci.Section{Title: TitlePlot, Markdown: plot})
		}
	}
	return append(s, ghci.Section{Title: TitlePlot, Markdown: plot})
}

// PlotMD renders the Pareto plot of each changed bench workload as a
// table: x and y at base and head, frontier membership, who dominates.
func PlotMD(d *Diff) string {
	var b strings.Builder
	for _, w := range d.Workloads {
		if w.Bench == nil || w.Status == StatusUnchanged {
			continue
		}
		ref := w.head
		if ref == nil || ref.Bench == nil {
			ref = w.base
		}
		if ref == nil || ref.Bench == nil {
			continue
		}
		xName, yName, dollars, _ := report.PlotAxes(ref.Bench)
		side := func(r *Run) map[string]report.PlotPoint {
			m := map[string]report.PlotPoint{}
			if r != nil && r.Bench != nil {
				_, _, _, pts := report.PlotAxes(r.Bench)
				for _, p := range pts {
					m[p.ID] = p
				}
			}
			return m
		}
		bp, hp := side(w.base), side(w.head)
		xv := func(v float64) string {
			if dollars {
				return report.Money(v)
			}
			return strconv.FormatFloat(v, 'f', -1, 64)
		}
		yv := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
		fmt.Fprintf(&b, "### %s\n\n", text(w.Name))
		fmt.Fprintf(&b, "x: %s (lower is better) · y: %s (higher is better) · the drawn plot is in `pr.html`.\n\n", text(xName), text(yName))
		fmt.Fprintf(&b, "| system | x at base → head | y at base → head | on the frontier at head | dominated at head by |\n| --- | --- | --- | --- | --- |\n")
		for _, s := range w.Bench.Systems {
			pt := func(m map[string]report.PlotPoint, f func(report.PlotPoint) string) string {
				if p, ok := m[s.ID]; ok {
					return f(p)
				}
				return "—"
			}
			x := arrow(pt(bp, func(p report.PlotPoint) string { return xv(p.X) }), pt(hp, func(p report.PlotPoint) string { return xv(p.X) }))
			y := arrow(pt(bp, func(p report.PlotPoint) string { return yv(p.Y) }), pt(hp, func(p report.PlotPoint) string { return yv(p.Y) }))
			on := "—"
			if p, ok := hp[s.ID]; ok {
				on = yesNo(p.Frontier)
			}
			dom := "—"
			if len(s.DominatedBy) > 0 {
				var parts []string
				for _, d := range s.DominatedBy {
					parts = append(parts, text(d.By)+" ("+strings.Join(texts(d.Better), ", ")+")")
				}
				dom = strings.Join(parts, "; ")
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", cell(s.ID), x, y, on, dom)
		}
		var fr []report.PlotPoint
		for _, p := range hp {
			if p.Frontier {
				fr = append(fr, p)
			}
		}
		slices.SortFunc(fr, func(a, b report.PlotPoint) int {
			return cmp.Or(cmp.Compare(a.X, b.X), cmp.Compare(a.Y, b.Y), strings.Compare(a.ID, b.ID))
		})
		var path []string
		for _, p := range fr {
			path = append(path, fmt.Sprintf("%s (%s, %s)", text(p.ID), xv(p.X), yv(p.Y)))
		}
		if len(path) > 0 {
			fmt.Fprintf(&b, "\nFrontier at head, left to right: %s.\n", strings.Join(path, " → "))
		}
		b.WriteString("\n")
	}
	return b.String()
}

func arrow(b, h string) string {
	if b == h {
		return h
	}
	return b + " → " + h
}
