package harness

import (
	"fmt"
	"strings"

	"github.com/algal-assay/assay/harness/workload"
	"github.com/algal-assay/assay/report"
)

// ReportHTMLFile is the run directory's human report, written beside
// summary.md by the summarize phase.
const ReportHTMLFile = "report.html"

// ReportHTML renders report.html for an outcome that reached the
// summarize phase (see package report): the results model's run and the
// reports it draws.
func ReportHTML(o *Outcome) ([]byte, error) {
	run := *RunResults(o)
	if a := o.Repeats; a != nil {
		// A repeated run draws its pooled view: case runs over all
		// repeats, per-repeat means, the pooled Pareto set or promotion.
		run.Description = strings.TrimSpace(run.Description + fmt.Sprintf(" Pooled over %d repeats (repeats.json); a case passes when it passed in every repeat.", a.K))
		if a.Kind == workload.KindBench {
			return report.Bench(report.BenchInput{Run: run, Report: a.PooledBench(), Intervals: a.ContenderIntervals()})
		}
		if pf := a.PooledFoundry(); pf != nil {
			return report.Foundry(report.FoundryInput{Run: run, Report: pf})
		}
	}
	if o.Bench != nil {
		return report.Bench(report.BenchInput{Run: run, Report: o.Bench, Parts: htmlParts(o)})
	}
	in := report.FoundryInput{Run: run}
	if o.Foundry != nil {
		in.Report, in.Exhausted = o.Foundry.Report, o.Foundry.Exhausted
	}
	return report.Foundry(in)
}
