package report

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/algal-assay/assay/engine/bench"
	"github.com/algal-assay/assay/engine/significance"
)

// BenchInput is what a bench run's report.html shows.
type BenchInput struct {
	Run
	Report *bench.Report
	// Intervals are the systems' pass-rate 95% intervals when they are
	// not Wilson's of passed/total (a repeated run's, clustered by case).
	Intervals map[string]significance.Interval
	// Parts, for a bench run in parts, list the part reports; the page
	// then shows them instead of the case matrix (each part's report
	// holds its own cases).
	Parts []Part
}

// Part is one part of a bench run in parts as its report.html lists it.
type Part struct {
	Name, Report, Digest string
	Cases, Systems       string
}

type fact struct {
	Name, Value string
	Code        bool // a digest or key, shown in monospace
}

type gateView struct {
	Name, Message string
	Passed        bool
}

type page struct {
	Title    string
	Kind     string
	Subtitle string
	Facts    []fact
	Gates    []gateView
	Verified *Verification
	Notes    []string
}

type systemRow struct {
	ID, Key, Digest        string
	Passed, Tokens, Cost   string
	Calls, Work            string
	Frontier               bool
	DominatedBy            string
	BaseRow                bool // in a comparison: the base values of this system
	Change                 string
	X, Y                   string
	AxisValues             []fact
	Pareto                 string
	PassedDelta, CostDelta string
}

type cellView struct {
	System, Case      string
	Passed            bool
	Outcome, Outputs  string
	Tokens, Cost      string
	Calls, Receipt    string
	Attribution, Work string
}

type caseRow struct {
	ID, Args, Expect string
	Cells            []cellView
}

type benchView struct {
	page
	Criteria string
	Plot     *plotView
	XName    string
	YName    string
	// AxisNote says why x is not the cost signal ("" when it is).
	AxisNote string
	HasCost  bool
	HasAxes  bool
	// UnknownNote explains the unknown cells, "" when there are none.
	UnknownNote string
	AxisNames   []string
	Systems     []systemRow
	SystemIDs   []string
	Cases       []caseRow
	Parts       []Part
}

// axes is the choice of what the plot's two axes show.
type axes struct {
	xName, yName   string
	xPrefix        string
	xInt, yInt     bool
	x, y           func(*bench.SystemResult) float64
	yMax           float64
	xLabel, yLabel string
	// note says why x is not what the reader expects ("" when it is).
	note string
}

// CallsAxisNote is what a plot says when it shows effect calls because no
// system reported tokens or cost.
const CallsAxisNote = "No system reported token counts or a cost, so the horizontal axis shows effect calls instead."

// hasUsage reports whether any system of r reported tokens, a cost, or an
// unknown count: the evidence the plot's default x axis is drawn from.
func hasUsage(r *bench.Report) bool {
	for i := range r.Systems {
		u := r.Systems[i].Usage
		if u.TokensIn+u.TokensOut > 0 || u.Cost != 0 || u.UnknownTokens > 0 || u.CostUnknown() {
			return true
		}
	}
	return false
}

// passedMax is the top of the passed axis: the case count, or more when a
// system counts more case runs than there are cases (the pooled view of a
// run with repeats counts every repeat's).
func passedMax(r *bench.Report) float64 {
	m := int64(len(r.Cases))
	for _, s := range r.Systems {
		m = max(m, s.Total)
	}
	return float64(m)
}

func dirWord(up bool) string {
	if up {
		return "higher is better"
	}
	return "lower is better"
}

// chooseAxes puts the cost signal on x and passed on y; with declared axes
// the first "down" axis goes on x and the first other "up" axis on y
// (passed when there is none), so the better corner is always top left.
func chooseAxes(r *bench.Report) axes {
	passed := func(s *bench.SystemResult) float64 { return float64(s.Passed) }
	if len(r.Axes) == 0 {
		a := axes{yName: bench.CriterionPassed, yInt: true, y: passed, yLabel: "cases passed (higher is better)", yMax: passedMax(r)}
		switch {
		case !hasUsage(r):
			// Nothing reported tokens or cost (scripted answers, the
			// scaffold's own bench): a column of points at x = 0 says
			// nothing, while effect calls still tell the systems apart.
			a.xName, a.xInt, a.xLabel = bench.CriterionCalls, true, "effect calls (lower is better)"
			a.x = func(s *bench.SystemResult) float64 { return float64(s.EffectCalls) }
			a.note = CallsAxisNote
		case r.Prices != nil:
			a.xName, a.xPrefix, a.xLabel = bench.CriterionCost, "$", "cost in dollars (lower is better)"
			a.x = func(s *bench.SystemResult) float64 { return s.Usage.Cost }
		default:
			a.xName, a.xInt, a.xLabel = bench.CriterionTokens, true, "tokens in + out (lower is better)"
			a.x = func(s *bench.SystemResult) float64 { return float64(s.Usage.TokensIn + s.Usage.TokensOut) }
		}
		return a
	}
	xi := slices.IndexFunc(r.Axes, func(a bench.Axis) bool { return a.Dir == "down" })
	if xi < 0 {
		xi = 0
	}
	yi := slices.IndexFunc(r.Axes, func(a bench.Axis) bool { return a.Dir == "up" })
	if yi == xi {
		yi = -1
	}
	xa := r.Axes[xi]
	a := axes{xName: xa.Name, xLabel: xa.Name + " (" + dirWord(xa.Dir == "up") + ")",
		x: func(s *bench.SystemResult) float64 { return s.AxisValues[xa.Name] }}
	if yi >= 0 {
		ya := r.Axes[yi]
		a.yName, a.yLabel = ya.Name, ya.Name+" ("+dirWord(true)+")"
		a.y = func(s *bench.SystemResult) float64 { return s.AxisValues[ya.Name] }
	} else {
		a.yName, a.yInt, a.y, a.yLabel, a.yMax = bench.CriterionPassed, true, passed, "cases passed (not a declared axis)", passedMax(r)
	}
	return a
}

// Money renders a dollar amount as every report does (bench.FormatCost,
// the one cost formatter).
func Money(v float64) string { return bench.FormatCost(v) }

// Unknown is what a cell shows for tokens or a cost the evidence does not
// know (a server omitted usage, the price card has no price for the
// model); UnknownNote explains it under the table.
const (
	Unknown     = "unknown†"
	UnknownNote = "† unknown: some calls reported no token usage, or ran a model the price card has no price for; a total over the rest would understate it, so none is shown."
)

// Cost is a tally's cost: Money, or Unknown when any call's cost is
// unknown (never the $0.000000 its sum would show).
func Cost(t bench.Tally) string {
	if t.CostUnknown() {
		return Unknown
	}
	return Money(t.Cost)
}

// Tokens is a tally's token total, or Unknown when a call's counts are.
func Tokens(t bench.Tally) string {
	if t.UnknownTokens > 0 {
		return Unknown
	}
	return strconv.FormatInt(t.TokensIn+t.TokensOut, 10)
}

func unknownNote(rs ...*bench.Report) string {
	for _, r := range rs {
		if unknownIn(r) {
			return UnknownNote
		}
	}
	return ""
}

// unknownIn reports whether any system's tokens or cost shown are unknown.
func unknownIn(r *bench.Report) bool {
	if r == nil {
		return false
	}
	for _, s := range r.Systems {
		if s.Usage.UnknownTokens > 0 || r.Prices != nil && s.Usage.CostUnknown() {
			return true
		}
	}
	return false
}

func num(v float64) string { return strconv.FormatFloat(v, 'g', 10, 64) }

func criteriaText(r *bench.Report) string {
	var parts []string
	for _, c := range r.Criteria() {
		parts = append(parts, c.Name+" ("+dirWord(c.Up)+")")
	}
	return strings.Join(parts, ", ")
}

// dominatorsText names who dominates id and where: "a (passed, cost); b (cost)".
func dominatorsText(r *bench.Report, id string) (names, detail string) {
	var ns, ds []string
	for _, d := range r.DominatedBy(id) {
		ns = append(ns, d.By)
		ds = append(ds, d.By+" (better on "+strings.Join(d.Better, ", ")+")")
	}
	return strings.Join(ns, ", "), strings.Join(ds, "; ")
}

func jsonText(v any) string {
	if v == nil {
		return "—"
	}
	b, err := canonText(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return b
}

func benchSystemRow(r *bench.Report, s *bench.SystemResult, ax axes) systemRow {
	row := systemRow{ID: s.ID, Key: s.ManifestKey, Digest: s.ManifestDigest,
		Passed: fmt.Sprintf("%d/%d", s.Passed, s.Total), Tokens: Tokens(s.Usage),
		Cost: Cost(s.Usage), Calls: strconv.FormatInt(s.EffectCalls, 10),
		Work:     fmt.Sprintf("%d steps, %d agent calls, %d units", s.Work.Steps, s.Work.AgentCalls, s.Work.Units),
		Frontier: slices.Contains(r.Pareto, s.ID), X: num(ax.x(s)), Y: num(ax.y(s))}
	if ax.xPrefix == "$" {
		row.X = Cost(s.Usage) // the plot places it by the report's sum
	}
	if !row.Frontier {
		_, row.DominatedBy = dominatorsText(r, s.ID)
	}
	for _, a := range r.Axes {
		row.AxisValues = append(row.AxisValues, fact{Name: a.Name, Value: num(s.AxisValues[a.Name])})
	}
	return row
}

// benchData places r's systems; with passed on y each carries the 95%
// interval of its pass rate as an error bar: ivs[id] when given (a
// repeated run's, clustered by case), else Wilson's.
func benchData(r *bench.Report, ax axes, side string, ivs map[string]significance.Interval) []datum {
	var out []datum
	for i := range r.Systems {
		s := &r.Systems[i]
		d := datum{ID: s.ID, Side: side, X: ax.x(s), Y: ax.y(s), Frontier: slices.Contains(r.Pareto, s.ID)}
		iv, ok := ivs[s.ID]
		if !ok {
			iv = significance.Wilson(int(s.Passed), int(s.Total))
		}
		if ax.yName == bench.CriterionPassed && iv.Defined() {
			d.Bar, d.BarLo, d.BarHi = true, float64(iv.Lo)*float64(s.Total), float64(iv.Hi)*float64(s.Total)
		}
		xv := num(d.X)
		if ax.xPrefix == "$" {
			xv = Money(d.X)
			if s.Usage.CostUnknown() {
				// Placed by the report's sum over the calls whose cost is
				// known; the tip says the total is not that.
				xv = Unknown + " (plotted at the known part, " + xv + ")"
			}
		}
		d.Tip = fmt.Sprintf("%s: %s %s, %s %s", s.ID, ax.xName, xv, ax.yName, num(d.Y))
		if d.Bar {
			d.Tip += fmt.Sprintf(" (pass rate 95%% interval %s to %s)", iv.Lo, iv.Hi)
		}
		if side != "" {
			d.Tip = side + " " + d.Tip
		}
		if !d.Frontier {
			names, detail := dominatorsText(r, s.ID)
			d.Dominators = names
			d.Tip += "; dominated by " + detail
		} else {
			d.Tip += "; on the Pareto set"
		}
		out = append(out, d)
	}
	return out
}

func plotDesc(r *bench.Report, ax axes) string {
	var on, off []string
	for i := range r.Systems {
		s := &r.Systems[i]
		if slices.Contains(r.Pareto, s.ID) {
			on = append(on, s.ID)
		} else {
			names, _ := dominatorsText(r, s.ID)
			off = append(off, s.ID+" (dominated by "+names+")")
		}
	}
	d := fmt.Sprintf("Scatter of %d systems, %s on the horizontal axis and %s on the vertical. On the Pareto set: %s.", len(r.Systems), ax.xName, ax.yName, listOr(on, "none"))
	if len(off) > 0 {
		d += " Dominated: " + strings.Join(off, "; ") + "."
	}
	return d
}

func listOr(xs []string, none string) string {
	if len(xs) == 0 {
		return none
	}
	return strings.Join(xs, ", ")
}

func runPage(run Run, kind string) page {
	p := page{Title: run.Workload, Kind: kind, Verified: run.Verification}
	p.Subtitle = strings.TrimSpace(run.Description)
	if run.Slug != "" {
		p.Facts = append(p.Facts, fact{Name: "run", Value: run.Slug, Code: true})
	}
	for _, g := range run.Gates {
		p.Gates = append(p.Gates, gateView{Name: g.Name, Passed: g.Passed, Message: g.Message})
	}
	return p
}

func caseTokens(t bench.Tally) string {
	if t.UnknownTokens > 0 {
		return Unknown
	}
	return fmt.Sprintf("%d in, %d out", t.TokensIn, t.TokensOut)
}

func caseMatrix(r *bench.Report) []caseRow {
	var rows []caseRow
	for _, c := range r.Cases {
		row := caseRow{ID: c.ID, Args: jsonText(c.Args), Expect: jsonText(c.Expect)}
		for i := range r.Systems {
			s := &r.Systems[i]
			cell := cellView{System: s.ID, Case: c.ID, Outcome: "not run"}
			for j := range s.Cases {
				cr := &s.Cases[j]
				if cr.ID != c.ID {
					continue
				}
				cell = cellView{System: s.ID, Case: c.ID, Passed: cr.Passed, Outcome: cr.Outcome, Outputs: jsonText(cr.Outputs),
					Tokens: caseTokens(cr.Usage), Cost: Cost(cr.Usage),
					Calls: strconv.FormatInt(cr.EffectCalls, 10), Receipt: cr.ReceiptDigest,
					Work: fmt.Sprintf("%d steps, %d agent calls, %d units", cr.Work.Steps, cr.Work.AgentCalls, cr.Work.Units)}
				var attr []string
				for _, k := range slices.Sorted(maps.Keys(cr.Attribution)) {
					t := cr.Attribution[k]
					tokens := fmt.Sprintf("%d+%d tokens", t.TokensIn, t.TokensOut)
					if t.UnknownTokens > 0 {
						tokens = "tokens " + Unknown
					}
					attr = append(attr, fmt.Sprintf("%s: %d calls, %s, %s", k, t.Calls, tokens, Cost(t)))
				}
				cell.Attribution = listOr(attr, "—")
				break
			}
			row.Cells = append(row.Cells, cell)
		}
		rows = append(rows, row)
	}
	return rows
}

// Bench renders the report.html of a bench run.
func Bench(in BenchInput) ([]byte, error) {
	r := in.Report
	if r == nil {
		return nil, fmt.Errorf("report: bench report of %q is nil", in.Workload)
	}
	ax := chooseAxes(r)
	v := &benchView{page: runPage(in.Run, "bench"), Criteria: criteriaText(r), XName: ax.xName, YName: ax.yName, AxisNote: ax.note,
		HasCost: r.Prices != nil, HasAxes: len(r.Axes) > 0, UnknownNote: unknownNote(r)}
	v.Facts = append(v.Facts, fact{"report", r.Digest, true}, fact{"workload digest", r.Workload, true},
		fact{Name: "Pareto set", Value: listOr(r.Pareto, "none")}, fact{Name: "Pareto criteria", Value: v.Criteria})
	if r.Scorer != nil {
		v.Facts = append(v.Facts, fact{Name: "scorer", Value: "algal.expr.v1 program"})
	} else {
		v.Facts = append(v.Facts, fact{Name: "scorer", Value: "exact match"})
	}
	for _, a := range r.Axes {
		v.AxisNames = append(v.AxisNames, a.Name)
	}
	v.Plot = layout(plotSpec{ID: "pareto", Title: "Pareto plot of " + in.Workload, Desc: plotDesc(r, ax),
		XLabel: ax.xLabel, YLabel: ax.yLabel, XPrefix: ax.xPrefix, XInteger: ax.xInt, YInteger: ax.yInt, YMax: ax.yMax, Data: benchData(r, ax, "", in.Intervals)})
	for i := range r.Systems {
		v.Systems = append(v.Systems, benchSystemRow(r, &r.Systems[i], ax))
		v.SystemIDs = append(v.SystemIDs, r.Systems[i].ID)
	}
	if len(in.Parts) > 0 {
		v.Parts = in.Parts
		return render("bench", v)
	}
	v.Cases = caseMatrix(r)
	return render("bench", v)
}

// PlotPoint is one system as the Pareto plot places it.
type PlotPoint struct {
	ID       string
	X, Y     float64
	Frontier bool
}

// PlotAxes says what the Pareto plot of r shows: the criterion names on
// each axis, whether x is dollars, and every system's point, so a text
// rendering (the job summary's table) shows the same plot.
func PlotAxes(r *bench.Report) (xName, yName string, dollars bool, points []PlotPoint) {
	ax := chooseAxes(r)
	for i := range r.Systems {
		s := &r.Systems[i]
		points = append(points, PlotPoint{ID: s.ID, X: ax.x(s), Y: ax.y(s), Frontier: slices.Contains(r.Pareto, s.ID)})
	}
	return ax.xName, ax.yName, ax.xPrefix == "$", points
}
