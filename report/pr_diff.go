package report

import (
	"fmt"
	"strings"

	"github.com/algal-assay/assay/engine/significance"
)

// PRFromDiff is pr.html's input drawn from a diff (base and head on one
// Pareto plot per changed bench workload, an arrow per system that
// moved; each changed foundry's ranking with its deciding columns;
// flipped cases; archived receipt verdicts, work-only replays apart). It
// reads the reports of the runs ci/diff.Compute compared, so it needs the
// Diff Compute returned, not one decoded from JSON. command reproduces
// the check.
func PRFromDiff(d *Diff, command string) PRInput {
	in := PRInput{Base: d.Base, Head: d.Head, Passed: d.Verdict.Passed, Notes: d.Notes, Command: command,
		Verdict: prVerdict(d), Problems: append([]string(nil), d.Problems...)}
	for _, w := range d.Workloads {
		in.Problems = append(in.Problems, workloadProblems(w)...)
		if w.Status == StatusUnchanged {
			in.Unchange = append(in.Unchange, w.Name)
			continue
		}
		in.Workloads = append(in.Workloads, prWorkload(w))
	}
	for _, r := range d.Regressions {
		in.Regressions = append(in.Regressions, prRegression(r))
	}
	if r := d.Replays; r != nil {
		in.Replays = prReplays(r)
	}
	return in
}

// prVerdict is pr.html's one-sentence outcome and what changed.
func prVerdict(d *Diff) string {
	v := d.Verdict
	s := fmt.Sprintf("%d of %d workloads fail at %s (compared with %s).", len(v.Failed), v.Workloads, d.Head, d.Base)
	if v.Passed {
		s = fmt.Sprintf("%d workloads at %s compared with %s: every run verified and every gate holds.", v.Workloads, d.Head, d.Base)
	}
	if len(v.Changed) > 0 {
		return s + " Changed: " + strings.Join(v.Changed, ", ") + "."
	}
	return s + " No workload's results changed."
}

// workloadProblems are a workload's failures, one line each: its compare
// fail-on findings, and at head a run that did not complete, mismatches
// and failing gates.
func workloadProblems(w *DiffWorkload) []string {
	var out []string
	if w.Statistics != nil {
		for _, f := range w.Statistics.Failures {
			out = append(out, w.Name+": compare fail-on "+w.Statistics.FailOn+": "+f)
		}
	}
	if w.Head == nil || w.Head.Passed {
		return out
	}
	if w.Head.Status != "complete" {
		out = append(out, w.Name+": the run ended "+w.Head.Status)
	}
	for _, m := range w.Mismatches {
		out = append(out, w.Name+": not verified: "+m)
	}
	for _, g := range w.FailedGates {
		out = append(out, w.Name+": gate "+g.Name+" fails: "+g.Message)
	}
	return out
}

// prWorkload is a changed workload as pr.html draws it: both sides'
// reports, its statistics and its flipped cases.
func prWorkload(w *DiffWorkload) PRWorkload {
	pw := PRWorkload{Name: w.Name, Kind: w.Kind, Status: w.Status, File: w.File,
		BaseBench: w.BaseBench, HeadBench: w.HeadBench, BaseFoundry: w.BaseFoundry, HeadFoundry: w.HeadFoundry}
	prStatistics(&pw, w)
	for _, f := range w.flips() {
		pw.Flips = append(pw.Flips, PRFlip(f))
	}
	return pw
}

// prRegression words a regression's measure on both sides and its change.
func prRegression(r *Regression) PRRegression {
	row := PRRegression{Workload: r.Workload, Subject: r.Subject, Measure: r.Metric, Cases: "—"}
	if len(r.Cases) > 0 {
		row.Cases = strings.Join(r.Cases, ", ")
	}
	if a := r.Amount; a != nil {
		row.Base, row.Head, row.Change = amount(r.Metric, a.Base), amount(r.Metric, a.Head), relative(a)
	} else {
		row.Base, row.Head, row.Change = pct(r.Base), pct(r.Head), ppDelta(r.Base, r.Head)
	}
	return row
}

// prReplays is the archive comparison, one row per replayed receipt.
func prReplays(r *Replays) *PRReplays {
	pr := &PRReplays{Archive: r.Archive, Receipts: r.Receipts, Touched: r.Touched}
	for _, x := range r.Results {
		pr.Rows = append(pr.Rows, PRReplay{Workload: x.Workload, Subject: x.Subject, Case: x.Case, Organism: x.Key,
			Verdict: x.Verdict, Divergence: x.Divergence, Detail: x.Detail, File: shortFile(x.File), WorkOnly: workOnly(x)})
	}
	return pr
}

// prStatistics gives pr.html a workload's intervals, verdicts and
// statements, as the comment words them.
func prStatistics(pw *PRWorkload, w *DiffWorkload) {
	st := w.Statistics
	if st == nil {
		return
	}
	if bn := w.Bench; bn != nil {
		prIntervals(pw, bn, st)
	}
	if f := w.Foundry; f != nil {
		pw.Statistics = append(pw.Statistics, promotionStatements(f, st)...)
	}
	pw.Statistics = append(pw.Statistics, flipsNeeded(st))
}

// prIntervals gives pr.html each system's pass-rate intervals on both
// sides and the verdict of its paired test.
func prIntervals(pw *PRWorkload, bn *DiffBench, st *Statistics) {
	pw.BaseIntervals, pw.HeadIntervals, pw.Changes = map[string]significance.Interval{}, map[string]significance.Interval{}, map[string]string{}
	for _, s := range bn.Systems {
		if s.Base != nil {
			pw.BaseIntervals[s.ID] = s.Base.PassRateCI95
		}
		if s.Head != nil {
			pw.HeadIntervals[s.ID] = s.Head.PassRateCI95
		}
		if s.Base != nil && s.Head != nil {
			pw.Changes[s.ID] = changeCell(s.Change, st, s.Base.Passed != s.Head.Passed || s.Base.Total != s.Head.Total)
		}
	}
}

// promotionStatements say how the promoted candidate's validation changed
// and how clearly the head's promotion was decided, without code marks.
func promotionStatements(f *DiffFoundry, st *Statistics) []string {
	var out []string
	if f.PromotedChange != nil {
		out = append(out, "Validation of the promoted candidate, base against head: "+ChangeVerdict(f.PromotedChange, st)+".")
	}
	if f.Head != nil {
		if m := marginText(f.Head.Margin, st); m != "" {
			out = append(out, strings.ReplaceAll(m, "`", ""))
		}
	}
	return out
}
