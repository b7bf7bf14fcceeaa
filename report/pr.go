package report

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/algal-assay/assay/engine/bench"
	"github.com/algal-assay/assay/engine/foundry"
	"github.com/algal-assay/assay/engine/significance"
)

// PRInput is what pr.html shows: the pull request's base against its
// head. ci/diff builds it from a diff and the runs it compared.
type PRInput struct {
	// Base and Head label the sides (a ref and a commit).
	Base, Head string
	Passed     bool
	// Verdict is the one-sentence outcome; Problems the head failures
	// behind it (failing gates, unverified runs, workloads that did not
	// load), one line each.
	Verdict     string
	Problems    []string
	Workloads   []PRWorkload
	Regressions []PRRegression
	// Replays is nil when no receipt archive was compared.
	Replays  *PRReplays
	Notes    []string
	Command  string
	Unchange []string // workloads whose results did not change, one line each
}

// PRWorkload is one changed workload on both sides; a side's report is nil
// when the workload does not run there (or left no report).
type PRWorkload struct {
	Name, Kind, Status string
	// File is the workload file, repository-relative ("" when unknown).
	File                     string
	BaseBench, HeadBench     *bench.Report
	BaseFoundry, HeadFoundry *foundry.Report
	Flips                    []PRFlip
	// BaseIntervals and HeadIntervals are the systems' pass-rate 95%
	// intervals (Wilson's of passed/total where one is missing);
	// Changes the verdict of each system's paired test, in words.
	BaseIntervals, HeadIntervals map[string]significance.Interval
	Changes                      map[string]string
	// Statistics says how many one-way flips the workload's test needs
	// (and, for a foundry, how clearly each promotion was decided).
	Statistics []string
}

// PRFlip is a case whose outcome differs between the sides.
type PRFlip struct{ Subject, Case, Split, Base, Head string }

// PRRegression is one measure that got worse, already worded.
type PRRegression struct{ Workload, Subject, Measure, Base, Head, Change, Cases string }

// PRReplays is the archive comparison.
type PRReplays struct {
	Archive           string
	Receipts, Touched int
	Rows              []PRReplay
}

// PRReplay is one archived receipt replayed against a head revision.
type PRReplay struct {
	Workload, Subject, Case, Organism string
	Verdict, Divergence, Detail       string
	File                              string
	// WorkOnly: the behaviour is identical, only the work ledger differs.
	WorkOnly bool
}

type prSystemRow struct {
	ID, Passed, Change, Cost, Calls, Tokens string
	Pareto                                  string
	Moved                                   bool
}

type prBench struct {
	Plot    *plotView
	Systems []prSystemRow
	HasCost bool
	// AxisNote says why x is not the cost signal ("" when it is).
	AxisNote string
	// UnknownNote explains the unknown cells, "" when there are none.
	UnknownNote string
	Joined      []string
	Left        []string // "frontier-single: dominated by cheap-single (better on passed, cost)"
}

type prFoundry struct {
	Promotion  string
	Changed    bool
	Head, Base *rankingView
}

type rankingView struct {
	Columns []string
	Ranking []rankRow
}

type prWorkloadView struct {
	Name, Kind, Status, File string
	Bench                    *prBench
	Foundry                  *prFoundry
	Flips                    []PRFlip
	Statistics               []string
}

type prView struct {
	page
	Passed      bool
	Verdict     string
	Problems    []string
	Workloads   []prWorkloadView
	Regressions []PRRegression
	Replays     *PRReplays
	Behaviour   []PRReplay
	WorkOnly    []PRReplay
	Command     string
	Unchanged   []string
}

func change(b, h string) string {
	if b == h {
		return h
	}
	return b + " → " + h
}

func findBench(r *bench.Report, id string) *bench.SystemResult {
	if r == nil {
		return nil
	}
	for i := range r.Systems {
		if r.Systems[i].ID == id {
			return &r.Systems[i]
		}
	}
	return nil
}

func prBenchView(name string, b, h *bench.Report, w PRWorkload) *prBench {
	ref := h
	if ref == nil {
		ref = b
	}
	ax := chooseAxes(ref)
	v := &prBench{HasCost: ref.Prices != nil, AxisNote: ax.note, UnknownNote: unknownNote(b, h)}
	var data []datum
	if b != nil {
		data = append(data, benchData(b, ax, "base", w.BaseIntervals)...)
	}
	if h != nil {
		data = append(data, benchData(h, ax, "head", w.HeadIntervals)...)
	}
	for _, id := range systemIDs(h, b) {
		row := prSystem(b, h, id, ax)
		row.Change = "—"
		if c, ok := w.Changes[id]; ok {
			row.Change = c
		}
		var left string
		row.Pareto, left = prPareto(b, h, id)
		if row.Pareto == "joined" {
			v.Joined = append(v.Joined, id)
		}
		if left != "" {
			v.Left = append(v.Left, left)
		}
		v.Systems = append(v.Systems, row)
	}
	desc := fmt.Sprintf("Base and head of %s: %s on the horizontal axis, %s on the vertical; hollow points and the dashed line are the base, filled points and the solid line the head, and an arrow joins the two positions of every system that moved.", name, ax.xName, ax.yName)
	if h != nil {
		desc += " " + plotDesc(h, ax)
	}
	v.Plot = layout(plotSpec{ID: "pr-" + safeID(name), Title: "Pareto plot of " + name + ", base and head", Desc: desc,
		XLabel: ax.xLabel, YLabel: ax.yLabel, XPrefix: ax.xPrefix, XInteger: ax.xInt, YInteger: ax.yInt, YMax: ax.yMax,
		Data: data, Compare: b != nil && h != nil})
	return v
}

// systemIDs are the systems of the reports, once each, in the order the
// first report that has them lists them.
func systemIDs(reports ...*bench.Report) []string {
	var ids []string
	for _, r := range reports {
		if r == nil {
			continue
		}
		for _, s := range r.Systems {
			if !slices.Contains(ids, s.ID) {
				ids = append(ids, s.ID)
			}
		}
	}
	return ids
}

// prSystem is a system's row on both sides: passed, cost, calls and
// tokens from base to head, and whether its point moved.
func prSystem(b, h *bench.Report, id string, ax axes) prSystemRow {
	bs, hs := findBench(b, id), findBench(h, id)
	bp, bc, bk, bt := systemValues(bs)
	hp, hc, hk, ht := systemValues(hs)
	return prSystemRow{ID: id, Passed: change(bp, hp), Cost: change(bc, hc), Calls: change(bk, hk), Tokens: change(bt, ht),
		Moved: bs != nil && hs != nil && (ax.x(bs) != ax.x(hs) || ax.y(bs) != ax.y(hs))}
}

// systemValues are a system's passed, cost, calls and tokens cells ("—"
// each when it does not run on that side).
func systemValues(s *bench.SystemResult) (passed, cost, calls, tokens string) {
	if s == nil {
		return "—", "—", "—", "—"
	}
	return fmt.Sprintf("%d/%d", s.Passed, s.Total), Cost(s.Usage), strconv.FormatInt(s.EffectCalls, 10), Tokens(s.Usage)
}

// prPareto is a system's Pareto cell on both sides and, when it left the
// set, the line that says who dominates it ("" otherwise).
func prPareto(b, h *bench.Report, id string) (cell, left string) {
	inSet := func(r *bench.Report) bool { return r != nil && slices.Contains(r.Pareto, id) }
	switch {
	case findBench(h, id) == nil:
		return "removed at head", ""
	case inSet(h) && (b == nil || inSet(b)):
		return "yes", ""
	case inSet(h):
		return "joined", ""
	}
	_, detail := dominatorsText(h, id)
	if inSet(b) {
		return "left: dominated by " + detail, id + ": dominated by " + detail
	}
	return "no: dominated by " + detail, ""
}

// safeID turns a workload name into an id fragment (names are free text).
func safeID(s string) string {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' {
			out = append(out, c)
		} else {
			out = append(out, '_')
		}
	}
	return string(out)
}

func promotedKey(r *foundry.Report) string {
	if r == nil {
		return "nothing"
	}
	for _, c := range r.Candidates {
		if c.ManifestDigest == r.Promoted {
			return c.ManifestKey + " (" + short(r.Promoted) + ")"
		}
	}
	return short(r.Promoted)
}

// PR renders pr.html.
func PR(in PRInput) ([]byte, error) {
	v := &prView{page: page{Title: "Pull request: " + in.Head, Kind: "PR check"}, Passed: in.Passed, Verdict: in.Verdict,
		Problems: in.Problems, Regressions: in.Regressions, Replays: in.Replays, Command: in.Command, Unchanged: in.Unchange}
	v.Subtitle = "Compared with " + in.Base + "."
	v.Notes = in.Notes
	// Benches first: the plot is what a reviewer looks at before anything.
	ws := slices.Clone(in.Workloads)
	slices.SortStableFunc(ws, func(a, b PRWorkload) int { return benchesFirst(a.isBench(), b.isBench()) })
	for _, w := range ws {
		wv := prWorkloadView{Name: w.Name, Kind: w.Kind, Status: w.Status, File: w.File, Flips: w.Flips, Statistics: w.Statistics}
		if w.isBench() {
			wv.Bench = prBenchView(w.Name, w.BaseBench, w.HeadBench, w)
		}
		if w.BaseFoundry != nil || w.HeadFoundry != nil {
			wv.Foundry = prFoundryView(w.BaseFoundry, w.HeadFoundry)
		}
		v.Workloads = append(v.Workloads, wv)
	}
	if in.Replays != nil {
		for _, r := range in.Replays.Rows {
			if r.WorkOnly {
				v.WorkOnly = append(v.WorkOnly, r)
			} else {
				v.Behaviour = append(v.Behaviour, r)
			}
		}
	}
	return render("pr", v)
}

// isBench: the workload is a bench on either side.
func (w PRWorkload) isBench() bool { return w.BaseBench != nil || w.HeadBench != nil }

// benchesFirst orders benches before foundries, keeping the order within
// each.
func benchesFirst(a, b bool) int {
	switch {
	case a && !b:
		return -1
	case b && !a:
		return 1
	}
	return 0
}

// prFoundryView is a foundry's promotion on both sides and each side's
// ranking.
func prFoundryView(b, h *foundry.Report) *prFoundry {
	bk, hk := promotedKey(b), promotedKey(h)
	f := &prFoundry{Changed: bk != hk, Promotion: change(bk, hk)}
	if h != nil {
		f.Head = &rankingView{rankColumns, rankRows(h)}
	}
	if b != nil {
		f.Base = &rankingView{rankColumns, rankRows(b)}
	}
	return f
}
