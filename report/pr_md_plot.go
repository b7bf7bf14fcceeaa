package report

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/algal-assay/assay/engine/bench"
)

// TitlePlot is the job summary's Pareto plot section.
const TitlePlot = "Pareto plots"

// JobSummarySections are the job summary's sections: the comment's, with the
// Pareto plot of every changed bench workload after the Pareto sets. The
// plot is a Markdown table (one row per system, the frontier in x order):
// job summaries show inline SVG only as an image and Mermaid's xychart has
// no scatter, while a table renders everywhere and keeps exact values.
func JobSummarySections(d *Diff, o MarkdownOptions) []Section {
	s := CommentSections(d, o)
	plot := plotTablesMD(d)
	if plot == "" {
		return s
	}
	for i, sec := range s {
		if sec.Title == TitlePareto {
			return slices.Insert(s, i+1, Section{Title: TitlePlot, Markdown: plot})
		}
	}
	return append(s, Section{Title: TitlePlot, Markdown: plot})
}

// plotTablesMD renders the Pareto plot of each changed bench workload as a
// table: x and y at base and head, frontier membership, who dominates.
func plotTablesMD(d *Diff) string {
	var b strings.Builder
	for _, w := range d.Workloads {
		if w.Bench == nil || w.Status == StatusUnchanged {
			continue
		}
		ref := benchAtHead(w)
		if ref == nil {
			continue
		}
		xName, yName, dollars, _ := PlotAxes(ref)
		pl := plotSides{base: plotPoints(w.BaseBench), head: plotPoints(w.HeadBench), dollars: dollars}
		fmt.Fprintf(&b, "### %s\n\n", text(w.Name))
		fmt.Fprintf(&b, "x: %s (lower is better) · y: %s (higher is better) · the drawn plot is in `pr.html`.\n\n", text(xName), text(yName))
		fmt.Fprintf(&b, "| system | x at base → head | y at base → head | on the frontier at head | dominated at head by |\n| --- | --- | --- | --- | --- |\n")
		for _, s := range w.Bench.Systems {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", cell(s.ID), pl.move(s.ID, pl.x), pl.move(s.ID, pl.y), pl.onFrontier(s.ID), dominatorsCell(s.DominatedBy))
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
	base, head map[string]PlotPoint
	// dollars: x is a cost, written as money.
	dollars bool
}

// plotPoints are a bench report's plotted points by system (none
// without a report).
func plotPoints(r *bench.Report) map[string]PlotPoint {
	m := map[string]PlotPoint{}
	if r != nil {
		_, _, _, pts := PlotAxes(r)
		for _, p := range pts {
			m[p.ID] = p
		}
	}
	return m
}

func (pl plotSides) x(p PlotPoint) string {
	if pl.dollars {
		return Money(p.X)
	}
	return strconv.FormatFloat(p.X, 'f', -1, 64)
}

func (pl plotSides) y(p PlotPoint) string { return strconv.FormatFloat(p.Y, 'f', -1, 64) }

// move is a system's coordinate at base → head ("—" on a side it is not
// on; one value when it did not move).
func (pl plotSides) move(id string, coord func(PlotPoint) string) string {
	at := func(m map[string]PlotPoint) string {
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
	var fr []PlotPoint
	for _, p := range pl.head {
		if p.Frontier {
			fr = append(fr, p)
		}
	}
	slices.SortFunc(fr, func(a, b PlotPoint) int {
		return cmp.Or(cmp.Compare(a.X, b.X), cmp.Compare(a.Y, b.Y), strings.Compare(a.ID, b.ID))
	})
	var path []string
	for _, p := range fr {
		path = append(path, fmt.Sprintf("%s (%s, %s)", text(p.ID), pl.x(p), pl.y(p)))
	}
	return path
}

// dominatorsCell names who dominates a system and on which criteria ("—"
// when nobody does).
func dominatorsCell(ds []Dominator) string {
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
