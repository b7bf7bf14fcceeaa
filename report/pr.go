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
	var ids []string
	for _, r := range []*bench.Report{h, b} {
		if r == nil {
			continue
		}
		for _, s := range r.Systems {
			if !slices.Contains(ids, s.ID) {
				ids = append(ids, s.ID)
			}
		}
	}
	inSet := func(r *bench.Report, id string) bool { return r != nil && slices.Contains(r.Pareto, id) }
	for _, id := range ids {
		bs, hs := findBench(b, id), findBench(h, id)
		row := prSystemRow{ID: id}
		val := func(s *bench.SystemResult) (string, string, string, string) {
			if s == nil {
				return "—", "—", "—", "—"
			}
			return fmt.Sprintf("%d/%d", s.Passed, s.Total), Cost(s.Usage), strconv.FormatInt(s.EffectCalls, 10), Tokens(s.Usage)
		}
		bp, bc, bk, bt := val(bs)
		hp, hc, hk, ht := val(hs)
		row.Passed, row.Cost, row.Calls, row.Tokens = change(bp, hp), change(bc, hc), change(bk, hk), change(bt, ht)
		row.Change = "—"
		if c, ok := w.Changes[id]; ok {
			row.Change = c
		}
		row.Moved = bs != nil && hs != nil && (ax.x(bs) != ax.x(hs) || ax.y(bs) != ax.y(hs))
		switch {
		case hs == nil:
			row.Pareto = "removed at head"
		case inSet(h, id) && (b == nil || inSet(b, id)):
			row.Pareto = "yes"
		case inSet(h, id):
			row.Pareto = "joined"
			v.Joined = append(v.Joined, id)
		default:
			_, detail := dominatorsText(h, id)
			if inSet(b, id) {
				row.Pareto = "left: dominated by " + detail
				v.Left = append(v.Left, id+": dominated by "+detail)
			} else {
				row.Pareto = "no: dominated by " + detail
			}
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
	slices.SortStableFunc(ws, func(a, b PRWorkload) int {
		ab, bb := a.BaseBench != nil || a.HeadBench != nil, b.BaseBench != nil || b.HeadBench != nil
		switch {
		case ab && !bb:
			return -1
		case bb && !ab:
			return 1
		}
		return 0
	})
	for _, w := range ws {
		wv := prWorkloadView{Name: w.Name, Kind: w.Kind, Status: w.Status, File: w.File, Flips: w.Flips, Statistics: w.Statistics}
		if w.BaseBench != nil || w.HeadBench != nil {
			wv.Bench = prBenchView(w.Name, w.BaseBench, w.HeadBench, w)
		}
		if w.BaseFoundry != nil || w.HeadFoundry != nil {
			f := &prFoundry{}
			bk, hk := promotedKey(w.BaseFoundry), promotedKey(w.HeadFoundry)
			f.Changed = bk != hk
			f.Promotion = change(bk, hk)
			if w.HeadFoundry != nil {
				f.Head = &rankingView{rankColumns, rankRows(w.HeadFoundry)}
			}
			if w.BaseFoundry != nil {
				f.Base = &rankingView{rankColumns, rankRows(w.BaseFoundry)}
			}
			wv.Foundry = f
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
