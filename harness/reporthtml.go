package harness

import (
	"fmt"
	"strings"

	"github.com/algal-assay/assay/htmlreport"
)

// ReportHTMLFile is the run directory's human report, written beside
// summary.md by the summarize phase.
const ReportHTMLFile = "report.html"

// ReportHTML renders report.html for an outcome that reached the
// summarize phase (see package htmlreport).
func ReportHTML(o *Outcome) ([]byte, error) {
	w := o.Workload
	run := htmlreport.Run{Workload: w.Name, Description: w.Description}
	if o.Compiled != nil {
		run.Slug = o.Compiled.Slug
	}
	if v := o.Verification; v != nil {
		run.Verification = &htmlreport.Verification{OK: v.OK, CheckedReceipts: v.CheckedReceipts, Mismatches: v.Mismatches}
	}
	for _, g := range o.Gates {
		run.Gates = append(run.Gates, htmlreport.Gate{Name: g.Rule.Name(), Passed: g.Passed, Message: g.Message})
	}
	if a := o.Repeats; a != nil {
		// A repeated run draws its pooled view: case runs over all
		// repeats, per-repeat means, the pooled Pareto set or promotion.
		run.Description = strings.TrimSpace(run.Description + fmt.Sprintf(" Pooled over %d repeats (repeats.json); a case passes when it passed in every repeat.", a.K))
		if a.Kind == KindBench {
			return htmlreport.Bench(htmlreport.BenchInput{Run: run, Report: a.PooledBench(), Intervals: a.ContenderIntervals()})
		}
		if pf := a.PooledFoundry(); pf != nil {
			return htmlreport.Foundry(htmlreport.FoundryInput{Run: run, Report: pf})
		}
	}
	if o.Bench != nil {
		return htmlreport.Bench(htmlreport.BenchInput{Run: run, Report: o.Bench, Parts: htmlParts(o)})
	}
	in := htmlreport.FoundryInput{Run: run}
	if o.Foundry != nil {
		in.Report, in.Exhausted = o.Foundry.Report, o.Foundry.Exhausted
	}
	return htmlreport.Foundry(in)
}
