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
	in := report.PRInput{Base: d.Base, Head: d.Head, Passed: d.Verdict.Passed, Notes: d.Notes, Command: o.Command}
	v := d.Verdict
	if v.Passed {
		in.Verdict = fmt.Sprintf("%d workloads at %s compared with %s: every run verified and every gate holds.", v.Workloads, d.Head, d.Base)
	} else {
		in.Verdict = fmt.Sprintf("%d of %d workloads fail at %s (compared with %s).", len(v.Failed), v.Workloads, d.Head, d.Base)
	}
	if len(v.Changed) > 0 {
		in.Verdict += " Changed: " + strings.Join(v.Changed, ", ") + "."
	} else {
		in.Verdict += " No workload's results changed."
	}
	in.Problems = append(in.Problems, d.Problems...)
	for _, w := range d.Workloads {
		if w.Statistics != nil {
			for _, f := range w.Statistics.Failures {
				in.Problems = append(in.Problems, w.Name+": compare fail-on "+w.Statistics.FailOn+": "+f)
			}
		}
		if w.Head != nil && !w.Head.Passed {
			if w.Head.Status != "complete" {
				in.Problems = append(in.Problems, w.Name+": the run ended "+w.Head.Status)
			}
			for _, m := range w.Mismatches {
				in.Problems = append(in.Problems, w.Name+": not verified: "+m)
			}
			for _, g := range w.FailedGates {
				in.Problems = append(in.Problems, w.Name+": gate "+g.Name+" fails: "+g.Message)
			}
		}
		if w.Status == StatusUnchanged {
			in.Unchange = append(in.Unchange, w.Name)
			continue
		}
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
		in.Workloads = append(in.Workloads, pw)
	}
	for _, r := range d.Regressions {
		row := report.PRRegression{Workload: r.Workload, Subject: r.Subject, Measure: r.Metric, Cases: "—"}
		if len(r.Cases) > 0 {
			row.Cases = strings.Join(r.Cases, ", ")
		}
		if a := r.Amount; a != nil {
			row.Base, row.Head, row.Change = amount(r.Metric, a.Base), amount(r.Metric, a.Head), relative(a)
		} else {
			row.Base, row.Head, row.Change = pct(r.Base), pct(r.Head), ppDelta(r.Base, r.Head)
		}
		in.Regressions = append(in.Regressions, row)
	}
	if r := d.Replays; r != nil {
		pr := &report.PRReplays{Archive: r.Archive, Receipts: r.Receipts, Touched: r.Touched}
		for _, x := range r.Results {
			pr.Rows = append(pr.Rows, report.PRReplay{Workload: x.Workload, Subject: x.Subject, Case: x.Case, Organism: x.Key,
				Verdict: x.Verdict, Divergence: x.Divergence, Detail: x.Detail, File: shortFile(x.File), WorkOnly: workOnly(x)})
		}
		in.Replays = pr
	}
	return report.PR(in)
}
