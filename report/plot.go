package report

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Plot geometry, in SVG user units. The viewBox is scaled to the page
// width (at most 1100 px), so at a 1280 px window one unit is about one
// pixel and the 14-unit labels read as 14 px text.
const (
	plotW, plotH          = 960, 520
	padLeft, padRight     = 84, 36
	padTop, padBottom     = 48, 64
	labelSize             = 14
	charWidth             = 7.6 // average advance of the sans-serif face at labelSize
	pointR                = 7
	labelGap              = 10
	innerLeft, innerRight = padLeft, plotW - padRight
	innerTop, innerBottom = padTop, plotH - padBottom
)

// datum is one system on one side, in data coordinates.
type datum struct {
	ID         string
	Side       string // "head", "base" or "" for a single report
	X, Y       float64
	Frontier   bool
	Dominators string // "" on the frontier
	Tip        string // the point's tooltip (SVG title)
	// Bar, when set, is the 95% interval of Y drawn as an error bar
	// (the pass rate's, in cases passed).
	Bar          bool
	BarLo, BarHi float64
}

// plotView is what the template draws.
type plotView struct {
	ID             string
	Title, Desc    string
	XLabel, YLabel string
	W, H           int
	Left, Right    int
	Top, Bottom    int
	XTicks, YTicks []tick
	Paths          []pathView
	Arrows         []arrowView
	Bars           []barView
	Points         []pointView
	Labels         []labelView
	Legend         []legendView
}

type tick struct {
	Pos   string
	Label string
}

type pathView struct {
	Class, D, Label string
}

type arrowView struct {
	ID             string
	X1, Y1, X2, Y2 string
}

// barView is a vertical error bar with caps, as one path.
type barView struct {
	ID, Side, D, Tip string
}

type pointView struct {
	ID, Side, Class string
	CX, CY, R       string
	Tip             string
}

type labelView struct {
	X, Y, Anchor, Class, Text string
}

type legendView struct {
	Class, Text string
}

// axisScale maps a data range onto a pixel range with round ticks.
type axisScale struct {
	lo, hi   float64
	p0, p1   float64
	step     float64
	decimals int
}

func (s axisScale) at(v float64) float64 {
	if s.hi == s.lo {
		return (s.p0 + s.p1) / 2
	}
	return s.p0 + (v-s.lo)/(s.hi-s.lo)*(s.p1-s.p0)
}

// niceStep is a 1, 2 or 5 times a power of ten near span/target.
func niceStep(span float64, target int) float64 {
	if span <= 0 || math.IsInf(span, 0) || math.IsNaN(span) {
		return 1
	}
	raw := span / float64(target)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if raw <= m*mag {
			return m * mag
		}
	}
	return 10 * mag
}

// newScale fits values onto [p0,p1]: padded by a twentieth of the span so
// no point sits on the frame, widened to round ticks, never below zero
// when every value is non-negative. integer forces whole-number ticks.
func newScale(values []float64, p0, p1 float64, integer bool, floor0 bool) axisScale {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range values {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	if len(values) == 0 {
		lo, hi = 0, 1
	}
	nonNeg := lo >= 0
	if floor0 && nonNeg {
		lo = 0
	}
	if hi == lo {
		d := math.Abs(hi) * 0.25
		if d == 0 {
			d = 1
		}
		lo, hi = lo-d, hi+d
	}
	pad := (hi - lo) / 20
	lo, hi = lo-pad, hi+pad
	if nonNeg && lo < 0 {
		lo = 0
	}
	step := niceStep(hi-lo, 5)
	if integer {
		step = math.Max(1, math.Round(step))
	}
	lo = math.Floor(lo/step) * step
	hi = math.Ceil(hi/step) * step
	dec := 0
	if step < 1 {
		dec = int(math.Ceil(-math.Log10(step) - 1e-9))
		if math.Abs(step*math.Pow(10, float64(dec))-math.Round(step*math.Pow(10, float64(dec)))) > 1e-9 {
			dec++
		}
	}
	return axisScale{lo: lo, hi: hi, p0: p0, p1: p1, step: step, decimals: dec}
}

func (s axisScale) ticks(prefix string) []tick {
	var out []tick
	n := int(math.Round((s.hi - s.lo) / s.step))
	for i := 0; i <= n && i <= 50; i++ {
		v := s.lo + float64(i)*s.step
		out = append(out, tick{Pos: px(s.at(v)), Label: prefix + strconv.FormatFloat(v, 'f', s.decimals, 64)})
	}
	return out
}

// px formats a coordinate with one decimal: fixed width, so the same
// evidence gives the same bytes on every machine.
func px(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

type box struct{ x0, y0, x1, y1 float64 }

func (a box) overlaps(b box) bool {
	return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1
}

// plotSpec says what to draw.
type plotSpec struct {
	ID, Title, Desc string
	XLabel, YLabel  string
	XPrefix         string // "$" for cost
	XInteger        bool
	YInteger        bool
	// YMax, when positive, fixes the vertical range to [0, YMax] (the
	// case count when y is cases passed).
	YMax float64
	Data []datum
	// Compare draws base (hollow, dashed frontier) and head (filled,
	// solid frontier) with an arrow per system that moved.
	Compare bool
}

// layout turns a spec into the drawn plot: scales, frontier paths, points,
// arrows and labels placed so they do not overlap each other or a point.
func layout(sp plotSpec) *plotView {
	sx, sy := plotScales(sp)
	v := &plotView{ID: sp.ID, Title: sp.Title, Desc: sp.Desc, XLabel: sp.XLabel, YLabel: sp.YLabel,
		W: plotW, H: plotH, Left: innerLeft, Right: innerRight, Top: innerTop, Bottom: innerBottom,
		XTicks: sx.ticks(sp.XPrefix), YTicks: sy.ticks("")}
	sides := []string{""}
	if sp.Compare {
		sides = []string{"base", "head"}
	}
	for _, side := range sides {
		if p, ok := frontierPath(sp.Data, side, sx, sy); ok {
			v.Paths = append(v.Paths, p)
		}
	}
	if sp.Compare {
		v.Arrows = moveArrows(sp.Data, sx, sy)
	}
	// Error bars under the points, base first.
	for _, side := range sides {
		v.Bars = append(v.Bars, errorBars(sp.Data, side, sx, sy)...)
	}
	// Points: base first so head markers draw on top.
	var occupied []box
	var pts []placed
	for _, side := range sides {
		for _, d := range sp.Data {
			if d.Side != side {
				continue
			}
			p := placed{d, sx.at(d.X), sy.at(d.Y)}
			v.Points = append(v.Points, p.view())
			occupied = append(occupied, box{p.cx - pointR, p.cy - pointR, p.cx + pointR, p.cy + pointR})
			pts = append(pts, p)
		}
	}
	// Labels: one per system (the head's in a comparison), frontier first
	// so the systems that matter get the best places.
	slices.SortStableFunc(pts, func(a, b placed) int { return frontierFirst(a.d, b.d) })
	for _, p := range pts {
		if sp.Compare && p.d.Side != "head" {
			continue
		}
		var l labelView
		l, occupied = placeLabel(p, occupied)
		v.Labels = append(v.Labels, l)
	}
	v.Legend = legend(sp.Compare, len(v.Arrows) > 0, len(v.Bars) > 0)
	return v
}

// plotScales fits the axes to the data; a spec with YMax fixes the
// vertical range to [0, YMax] with whole-number ticks.
func plotScales(sp plotSpec) (sx, sy axisScale) {
	var xs, ys []float64
	for _, d := range sp.Data {
		xs, ys = append(xs, d.X), append(ys, d.Y)
	}
	sx = newScale(xs, innerLeft, innerRight, sp.XInteger, false)
	sy = newScale(ys, innerBottom, innerTop, sp.YInteger, true)
	if sp.YMax > 0 {
		sy = axisScale{lo: 0, hi: sp.YMax, p0: innerBottom, p1: innerTop, step: math.Max(1, math.Ceil(sp.YMax/8))}
		if sy.step > 1 {
			sy.step = niceStep(sp.YMax, 6)
			sy.step = math.Max(1, math.Round(sy.step))
			sy.hi = math.Ceil(sp.YMax/sy.step) * sy.step
		}
	}
	return sx, sy
}

// frontierPath joins one side's frontier points from left to right; ok is
// false when the side has none.
func frontierPath(data []datum, side string, sx, sy axisScale) (pathView, bool) {
	var fr []datum
	for _, d := range data {
		if d.Side == side && d.Frontier {
			fr = append(fr, d)
		}
	}
	slices.SortStableFunc(fr, func(a, b datum) int { return cmp.Or(cmp.Compare(a.X, b.X), cmp.Compare(a.Y, b.Y)) })
	if len(fr) == 0 {
		return pathView{}, false
	}
	var d strings.Builder
	for i, p := range fr {
		op := "L"
		if i == 0 {
			op = "M"
		}
		d.WriteString(op + px(sx.at(p.X)) + " " + px(sy.at(p.Y)))
		if i < len(fr)-1 {
			d.WriteString(" ")
		}
	}
	class, label := "frontier", "Pareto frontier"
	if side == "base" {
		class, label = "frontier base", "Pareto frontier at base"
	} else if side == "head" {
		label = "Pareto frontier at head"
	}
	return pathView{Class: class, D: d.String(), Label: label}, true
}

// moveArrows draws an arrow from base to head for every system that moved
// far enough for the arrow to show between its two markers.
func moveArrows(data []datum, sx, sy axisScale) []arrowView {
	base := map[string]datum{}
	for _, d := range data {
		if d.Side == "base" {
			base[d.ID] = d
		}
	}
	var out []arrowView
	for _, d := range data {
		b, ok := base[d.ID]
		if d.Side != "head" || !ok || (b.X == d.X && b.Y == d.Y) {
			continue
		}
		x1, y1, x2, y2 := sx.at(b.X), sy.at(b.Y), sx.at(d.X), sy.at(d.Y)
		// Stop short of both circles so the head marker stays visible.
		dx, dy := x2-x1, y2-y1
		l := math.Hypot(dx, dy)
		if l <= 2*pointR+4 {
			continue
		}
		ux, uy := dx/l, dy/l
		out = append(out, arrowView{ID: d.ID,
			X1: px(x1 + ux*(pointR+2)), Y1: px(y1 + uy*(pointR+2)),
			X2: px(x2 - ux*(pointR+5)), Y2: px(y2 - uy*(pointR+5))})
	}
	return out
}

// errorBars draws one side's 95% intervals, each a vertical bar with caps.
func errorBars(data []datum, side string, sx, sy axisScale) []barView {
	var out []barView
	for _, d := range data {
		if d.Side != side || !d.Bar {
			continue
		}
		x, y1, y2 := px(sx.at(d.X)), sy.at(d.BarLo), sy.at(d.BarHi)
		l, r := px(sx.at(d.X)-4), px(sx.at(d.X)+4)
		class := "errorbar"
		if d.Side != "" {
			class += " " + d.Side
		}
		out = append(out, barView{ID: d.ID, Side: class, Tip: d.ID + ": 95% interval of the pass rate",
			D: "M" + x + " " + px(y1) + " V" + px(y2) + " M" + l + " " + px(y1) + " H" + r + " M" + l + " " + px(y2) + " H" + r})
	}
	return out
}

// placed is a system's marker at its pixel centre.
type placed struct {
	d      datum
	cx, cy float64
}

func (p placed) view() pointView {
	class := "point"
	if p.d.Frontier {
		class += " frontier"
	} else {
		class += " dominated"
	}
	if p.d.Side != "" {
		class += " " + p.d.Side
	}
	return pointView{ID: p.d.ID, Side: p.d.Side, Class: class, CX: px(p.cx), CY: px(p.cy), R: strconv.Itoa(pointR), Tip: p.d.Tip}
}

// frontierFirst orders frontier systems before dominated ones, keeping
// the order within each.
func frontierFirst(a, b datum) int {
	if a.Frontier == b.Frontier {
		return 0
	}
	if a.Frontier {
		return -1
	}
	return 1
}

// labelSpot is a place a label may take: its anchor point and side.
type labelSpot struct {
	x, y   float64
	anchor string
}

// labelSpots are the places tried for a label, nearest first: right then
// left of the marker, stepping up and down a line at a time.
func labelSpots(p placed) []labelSpot {
	var out []labelSpot
	for _, dy := range []float64{0, -18, 18, -36, 36, -54, 54, -72, 72} {
		out = append(out, labelSpot{p.cx + labelGap, p.cy + dy, "start"}, labelSpot{p.cx - labelGap, p.cy + dy, "end"})
	}
	return out
}

// placeLabel names a system beside its marker in the first spot that
// stays on the plot and clashes with nothing drawn; it returns the label
// and occupied with the label's box added.
func placeLabel(p placed, occupied []box) (labelView, []box) {
	text := p.d.ID
	class := "label"
	if !p.d.Frontier {
		class += " dominated"
		if p.d.Dominators != "" {
			text += " (dominated by " + p.d.Dominators + ")"
		}
	}
	w := charWidth*float64(len([]rune(text))) + 2
	h := float64(labelSize) + 2
	spots := labelSpots(p)
	// When everything is taken, put it to the right and accept overlap
	// rather than drop a label (the table below has every value).
	c := spots[0]
	chosen := box{c.x, c.y - h/2, c.x + w, c.y + h/2}
	for _, s := range spots {
		if b, ok := freeBox(s, w, h, occupied); ok {
			c, chosen = s, b
			break
		}
	}
	// Baseline a third of the size below the centre line.
	return labelView{X: px(c.x), Y: px(c.y + labelSize/3.0), Anchor: c.anchor, Class: class, Text: text}, append(occupied, chosen)
}

// freeBox is the box a w×h label takes at s, and whether it stays on the
// plot without overlapping anything occupied.
func freeBox(s labelSpot, w, h float64, occupied []box) (box, bool) {
	b := box{s.x, s.y - h/2, s.x + w, s.y + h/2}
	if s.anchor == "end" {
		b = box{s.x - w, s.y - h/2, s.x, s.y + h/2}
	}
	if b.x0 < 2 || b.x1 > plotW-2 || b.y0 < 2 || b.y1 > innerBottom {
		return b, false
	}
	for _, o := range occupied {
		if b.overlaps(o) {
			return b, false
		}
	}
	return b, true
}

// legend explains the marks a plot draws.
func legend(compare, arrows, bars bool) []legendView {
	var out []legendView
	if compare {
		out = []legendView{{"key head", "head"}, {"key base", "base (hollow, dashed frontier)"}, {"key dominated", "dominated (grey)"}}
		if arrows {
			out = append(out, legendView{"key arrow", "arrow: moved from base to head"})
		}
	} else {
		out = []legendView{{"key frontier", "on the Pareto set (joined by the frontier line)"}, {"key dominated", "dominated (grey)"}}
	}
	if bars {
		out = append(out, legendView{"key errorbar", "bar: 95% interval of the pass rate"})
	}
	return out
}
