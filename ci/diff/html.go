package diff

import (
	"fmt"
	"strings"

	"github.com/algal-assay/assay/report"
)

// ArtifactHTML is the name of the drawn report in the PR check's artifact.
const ArtifactHTML = "pr.html"

// HTML renders pr.html: the diff drawn (base and head on one Pareto plot
// per changed bench workload, an arrow per system that moved; each changed
// foundry's ranking with its deciding columns; flipped cases; archived
// receipt verdicts, work-only replays apart). It reads the reports of the
// runs Compute compared, so it needs the Diff that Compute returned, not
// one decoded from JSON. o supplies the reproduce command.
func HTML(d *Diff, o RenderOptions) ([]byte, error) {
	in := report.PRInput{Base: d.Base, Head: d.Head, Passed: d.Verdict.Passed, Notes: d.Notes, Command: o.Command,
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
	return report.PR(in)
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
func workloadProblems(w *Workload) []string {
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
func prWorkload(w *Workload) report.PRWorkload {
	pw := report.PRWorkload{Name: w.Name, Kind: w.Kind, Status: w.Status, File: w.File}
	if w.base != nil {
		pw.BaseBench, pw.BaseFoundry = w.base.Bench, w.base.Foundry
	}
	if w.head != nil {
		pw.HeadBench, pw.HeadFoundry = w.head.Bench, w.head.Foundry
	}
	prStatistics(&pw, w)
	for _, f := range w.flips() {
		pw.Flips = append(pw.Flips, report.PRFlip{Subject: f.Subject, Case: f.Case, Split: f.Split, Base: f.Base, Head: f.Head})
	}
	return pw
}

// prRegression words a regression's measure on both sides and its change.
func prRegression(r *Regression) report.PRRegression {
	row := report.PRRegression{Workload: r.Workload, Subject: r.Subject, Measure: r.Metric, Cases: "—"}
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
func prReplays(r *Replays) *report.PRReplays {
	pr := &report.PRReplays{Archive: r.Archive, Receipts: r.Receipts, Touched: r.Touched}
	for _, x := range r.Results {
		pr.Rows = append(pr.Rows, report.PRReplay{Workload: x.Workload, Subject: x.Subject, Case: x.Case, Organism: x.Key,
			Verdict: x.Verdict, Divergence: x.Divergence, Detail: x.Detail, File: shortFile(x.File), WorkOnly: workOnly(x)})
	}
	return pr
}
