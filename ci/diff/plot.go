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
		pl := plotSides{base: plotPoints(w.base), head: plotPoints(w.head), dollars: dollars}
		fmt.Fprintf(&b, "### %s\n\n", text(w.Name))
		fmt.Fprintf(&b, "x: %s (lower is better) · y: %s (higher is better) · the drawn plot is in `pr.html`.\n\n", text(xName), text(yName))
		fmt.Fprintf(&b, "| system | x at base → head | y at base → head | on the frontier at head | dominated at head by |\n| --- | --- | --- | --- | --- |\n")
		for _, s := range w.Bench.Systems {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", cell(s.ID), pl.move(s.ID, pl.x), pl.move(s.ID, pl.y), pl.onFrontier(s.ID), dominatorsText(s.DominatedBy))
		}
		if path := pl.frontier(); len(path) > 0 {
			fmt.Fprintf(&b, "\nFrontier at head, left to right: %s.\n", strings.Join(path, " → "))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// plotSides are a bench's plotted points at base and head, by system.
type plotSides struct {
	base, head map[string]report.PlotPoint
	// dollars: x is a cost, written as money.
	dollars bool
}

// plotPoints are a run's plotted points by system (none when the run or
// its bench report is missing).
func plotPoints(r *Run) map[string]report.PlotPoint {
	m := map[string]report.PlotPoint{}
	if r != nil && r.Bench != nil {
		_, _, _, pts := report.PlotAxes(r.Bench)
		for _, p := range pts {
			m[p.ID] = p
		}
	}
	return m
}

func (pl plotSides) x(p report.PlotPoint) string {
	if pl.dollars {
		return report.Money(p.X)
	}
	return strconv.FormatFloat(p.X, 'f', -1, 64)
}

func (pl plotSides) y(p report.PlotPoint) string { return strconv.FormatFloat(p.Y, 'f', -1, 64) }

// move is a system's coordinate at base → head ("—" on a side it is not
// on; one value when it did not move).
func (pl plotSides) move(id string, coord func(report.PlotPoint) string) string {
	at := func(m map[string]report.PlotPoint) string {
		if p, ok := m[id]; ok {
			return coord(p)
		}
		return "—"
	}
	return arrow(at(pl.base), at(pl.head))
}

// onFrontier says whether a system is on the head's frontier ("—" when it
// does not run at head).
func (pl plotSides) onFrontier(id string) string {
	if p, ok := pl.head[id]; ok {
		return yesNo(p.Frontier)
	}
	return "—"
}

// frontier is the head's frontier from left to right, each point named
// with its coordinates.
func (pl plotSides) frontier() []string {
	var fr []report.PlotPoint
	for _, p := range pl.head {
		if p.Frontier {
			fr = append(fr, p)
		}
	}
	slices.SortFunc(fr, func(a, b report.PlotPoint) int {
		return cmp.Or(cmp.Compare(a.X, b.X), cmp.Compare(a.Y, b.Y), strings.Compare(a.ID, b.ID))
	})
	var path []string
	for _, p := range fr {
		path = append(path, fmt.Sprintf("%s (%s, %s)", text(p.ID), pl.x(p), pl.y(p)))
	}
	return path
}

// dominatorsText names who dominates a system and on which criteria ("—"
// when nobody does).
func dominatorsText(ds []Dominator) string {
	if len(ds) == 0 {
		return "—"
	}
	var parts []string
	for _, d := range ds {
		parts = append(parts, text(d.By)+" ("+strings.Join(texts(d.Better), ", ")+")")
	}
	return strings.Join(parts, "; ")
}

func arrow(b, h string) string {
	if b == h {
		return h
	}
	return b + " → " + h
}
