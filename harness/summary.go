package harness

import (
	"fmt"
	"slices"

	"github.com/algal-assay/assay/engine/bench"
	"github.com/algal-assay/assay/engine/foundry"
	"github.com/algal-assay/assay/engine/significance"
	"github.com/algal-assay/assay/harness/repeats"
	"github.com/algal-assay/assay/harness/rundir"
	"github.com/algal-assay/assay/harness/workload"
	"github.com/algal-assay/assay/report"
)

// Table is a summary table: a header and rows of cells (report.Table, the
// results model's).
type Table = report.Table

// SummaryTable is the per-contender table of an outcome: for a bench,
// system, passed/total, tokens, calls and Pareto membership; for a
// foundry, each candidate in promotion order with validation and train
// rates, and the holdout of the promoted one.
//
// Where the run's live requests reported prompt-cache tokens (o.Cache), a
// bench table shows them in a "cache read/write" column, and its cost
// prices them at the price card's cache rates.
func SummaryTable(o *Outcome) Table { return summaryTable(o, true) }

func summaryTable(o *Outcome, withCache bool) Table {
	switch {
	case o.brief != nil:
		return o.brief.table
	case o.Repeats != nil:
		return RepeatsTable(o)
	case o.Bench != nil && withCache:
		return benchTable(o.Bench, o.Cache)
	case o.Bench != nil:
		return benchTable(o.Bench, nil)
	case o.Foundry != nil && o.Foundry.Report != nil:
		return foundryTable(o.Foundry.Report, o.UnknownUsage)
	}
	return Table{}
}

// benchTable is a bench's table, with the prompt-cache column when cache
// is not nil.
func benchTable(r *bench.Report, cache map[string]CacheTally) Table {
	t := Table{Header: []string{"system", "passed", "tokens", "calls", "pareto"}}
	if cache != nil {
		t.Header = append(t.Header, "cache read/write")
	}
	hasCost := r.Prices != nil
	if hasCost {
		t.Header = append(t.Header, "cost")
	}
	for _, s := range r.Systems {
		pareto := "no"
		if slices.Contains(r.Pareto, s.ID) {
			pareto = "yes"
		}
		row := []string{s.ID, fmt.Sprintf("%d/%d", s.Passed, s.Total), tokens(int(s.Usage.UnknownTokens), fmt.Sprint(s.Usage.TokensIn+s.Usage.TokensOut)), fmt.Sprint(s.EffectCalls), pareto}
		c, cached := cache[s.ID]
		if cache != nil {
			row = append(row, fmt.Sprintf("%d/%d", c.Read, c.Write))
		}
		if hasCost {
			u := s.Usage
			if cached {
				u.Cost = c.Cost
			}
			row = append(row, CostCell(u))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// foundryTable is a foundry's table, candidates in promotion order.
func foundryTable(r *foundry.Report, unknownUsage map[string]int) Table {
	t := Table{Header: []string{"candidate", "promoted", "validation", "train", "holdout", "agent calls", "tokens"}}
	for _, i := range foundry.Rank(r.Candidates) {
		c := &r.Candidates[i]
		promoted, holdout := "", "-"
		if c.ManifestDigest == r.Promoted {
			promoted = "yes"
			holdout = fmt.Sprintf("%d/%d", r.Holdout.Passed, r.Holdout.Total)
		}
		t.Rows = append(t.Rows, []string{c.ManifestKey, promoted, fmt.Sprintf("%d/%d", c.Validation.Passed, c.Validation.Total),
			fmt.Sprintf("%d/%d", c.Train.Passed, c.Train.Total), holdout, fmt.Sprint(c.Work.AgentCalls), tokens(unknownUsage[c.ManifestKey], fmt.Sprint(c.Usage.TokensIn+c.Usage.TokensOut))})
	}
	return t
}

// tokens is a contender's token cell (known, its total or mean), or
// "unknown" when some of its live calls reported no usage: a sum over the
// calls that did would understate it.
func tokens(unknown int, known string) string {
	if unknown > 0 {
		return fmt.Sprintf("unknown (%d calls without usage)", unknown)
	}
	return known
}

// CostCell is a tally's cost as tables show it: dollars, or "unknown"
// with the number of calls that make it so (a server omitted usage, or
// the price card has no price for the model), never a sum that pretends
// those calls were free.
func CostCell(t bench.Tally) string {
	if t.CostUnknown() {
		return fmt.Sprintf("unknown (%d calls unpriced or without usage)", t.UnknownCost)
	}
	return bench.FormatCost(t.Cost)
}

// Summary renders summary.md (see report.SummaryMD).
func Summary(o *Outcome) string { return report.SummaryMD(RunResults(o)) }

// RunResults is an outcome as the results model holds it: the run
// directory's facts, its table (from the evidence alone), gate and
// verification.
func RunResults(o *Outcome) *report.Run {
	r := &report.Run{Dir: o.RunDir, Status: o.Status, Warnings: o.Warnings, BudgetExhausted: o.BudgetExhausted(),
		// summary.md is re-derived from the evidence alone
		// (Derived.Outcome), which holds no cache token counts.
		Table: summaryTable(o, false), PassRates: passRates(o), RepeatsAccount: repeatsAccount(o)}
	if w := o.Workload; w != nil {
		r.Workload, r.Kind, r.Revision, r.Description = w.Name, string(w.Kind), w.Revision, w.Description
	}
	if c := o.Compiled; c != nil {
		r.Slug, r.Identity = c.Slug, c.Identity
	}
	if o.Repeats != nil {
		r.Repeats = o.Repeats.K
	}
	if b := o.Bench; b != nil {
		r.Bench = &report.BenchFacts{Digest: b.Digest, Pareto: b.Pareto}
		r.Parts = partsFacts(o)
	}
	if o.Foundry != nil {
		r.Foundry = foundryFacts(o.Foundry.Report)
	}
	for _, g := range o.Gates {
		r.Gates = append(r.Gates, report.Gate{Name: g.Rule.Name(), Passed: g.Passed, Message: g.Message, At: g.Rule.Pos.String(), File: g.Rule.Pos.File})
	}
	if v := o.Verification; v != nil {
		r.Verification = &report.Verification{OK: v.OK, CheckedReceipts: v.CheckedReceipts, Mismatches: v.Mismatches}
	}
	if rs := o.Resume; rs != nil {
		r.Resumed = &report.Resumed{Reused: rs.Reused, Ran: rs.Ran, Rejected: rs.Rejected}
	}
	return r
}

// partsFacts say how a bench run in parts was cut (nil when it ran
// whole).
func partsFacts(o *Outcome) *report.Parts {
	if o.Compiled == nil || o.Compiled.Parts == nil {
		return nil
	}
	ps := o.Compiled.Parts
	return &report.Parts{Count: len(ps), First: ps[0].ReportFile(), Last: ps[len(ps)-1].ReportFile(),
		MaxCases: workload.PartCases, MaxSystems: workload.PartSystems, Aggregate: workload.AggregateFile}
}

// passRates are the outcome's pass rates with their 95% intervals:
// clustered by case over the repeats of a repeated run, Wilson's for a
// single run's cases (nil when the run left no report).
func passRates(o *Outcome) *report.PassRates {
	switch {
	case o.Repeats != nil:
		return repeatedPassRates(o.Repeats)
	case o.Bench != nil:
		p := &report.PassRates{}
		for _, s := range o.Bench.Systems {
			p.Rows = append(p.Rows, report.PassRateRow{Subject: s.ID, Passed: wilson(s.Passed, s.Total)})
		}
		return p
	case o.Foundry != nil && o.Foundry.Report != nil:
		r := o.Foundry.Report
		p := &report.PassRates{}
		for _, i := range foundry.Rank(r.Candidates) {
			c := &r.Candidates[i]
			p.Rows = append(p.Rows, report.PassRateRow{Subject: c.ManifestKey,
				Validation: wilson(c.Validation.Passed, c.Validation.Total), Train: wilson(c.Train.Passed, c.Train.Total)})
		}
		p.Rows = append(p.Rows, report.PassRateRow{Holdout: true, Passed: wilson(r.Holdout.Passed, r.Holdout.Total)})
		return p
	}
	return nil
}

// wilson is passed of total with Wilson's interval: the cases are single
// samples.
func wilson(passed, total int64) *report.PassRate {
	return &report.PassRate{Passed: int(passed), Total: int(total), CI95: significance.Wilson(int(passed), int(total))}
}

// repeatedPassRates are a repeated run's pooled pass rates, clustered by
// case: each contender's (a foundry candidate's on validation and train)
// and the promoted candidate's holdout.
func repeatedPassRates(a *repeats.Aggregate) *report.PassRates {
	p := &report.PassRates{Repeats: a.K}
	for i := range a.Contenders {
		c := &a.Contenders[i]
		if a.Kind == workload.KindBench {
			p.Rows = append(p.Rows, report.PassRateRow{Subject: c.ID, Passed: &report.PassRate{Passed: c.Passes, Total: c.Samples, CI95: c.PassRateCI95("")}})
			continue
		}
		p.Rows = append(p.Rows, report.PassRateRow{Subject: c.ID,
			Validation: &report.PassRate{Passed: c.Validation.Passes, Total: c.Validation.Samples, CI95: c.PassRateCI95(foundry.SplitValidation)},
			Train:      &report.PassRate{Passed: c.Train.Passes, Total: c.Train.Samples, CI95: c.PassRateCI95(foundry.SplitTrain)}})
	}
	if h := a.Holdout; h != nil {
		p.Rows = append(p.Rows, report.PassRateRow{Subject: h.ManifestKey, Holdout: true,
			Passed: &report.PassRate{Passed: h.Passes, Total: h.Samples, CI95: repeats.ClusteredCI(h.Cases, "")}})
	}
	return p
}

// repeatsAccount is how a repeated run's repeats went: each repeat's
// report, the foundry's promotion over all of them, and every flaky case
// (with the promoted candidate's holdout cases); nil for a single run.
func repeatsAccount(o *Outcome) *report.RepeatsAccount {
	a := o.Repeats
	if a == nil {
		return nil
	}
	out := &report.RepeatsAccount{K: a.K, Aggregate: repeats.File}
	for i, d := range a.Reports {
		r := report.RepeatReport{File: workload.RepeatFile(rundir.ReportFile, i+1), Digest: d}
		if slices.Contains(a.Exhausted, i+1) {
			r.File, r.Exhausted = workload.RepeatFile(rundir.BudgetFile, i+1), true
		}
		out.Reports = append(out.Reports, r)
	}
	if a.Kind == workload.KindFoundry && a.Promoted != "" {
		w := a.PromotedContender()
		out.Promoted = &report.RepeatPromotion{ID: w.ID, PromotedIn: len(w.PromotedIn)}
	}
	for i := range a.Contenders {
		c := &a.Contenders[i]
		cases := c.Cases
		if a.Kind == workload.KindFoundry && c.ManifestDigest == a.Promoted && a.Holdout != nil {
			cases = append(slices.Clone(cases), a.Holdout.Cases...)
		}
		for _, rc := range cases {
			if rc.Verdict() == repeats.VerdictFlaky {
				out.Flaky = append(out.Flaky, report.FlakyRepeatCase{Subject: c.ID, Case: rc.ID, PassedIn: rc.PassedIn, Runs: rc.Runs})
			}
		}
	}
	return out
}

// foundryFacts are a foundry report's digest, promotion and lineage (nil
// when the foundry promoted nothing).
func foundryFacts(r *foundry.Report) *report.FoundryFacts {
	if r == nil {
		return nil
	}
	f := &report.FoundryFacts{Digest: r.Digest, Promoted: r.Promoted, HoldoutPassed: r.Holdout.Passed, HoldoutTotal: r.Holdout.Total}
	if l := r.Lineage; l != nil {
		f.Lineage = &report.Lineage{Generator: l.GeneratorDigest, Run: l.ReceiptDigest}
	}
	return f
}

// JobResults is a job's results as the results model holds them, for its
// --json and JUnit reports: total is how many workload files the job was
// given, stopErr why it stopped before trying them all (nil when it did
// not).
func JobResults(results []*Result, total int, stopErr error) *report.Results {
	out := &report.Results{Total: total, Workloads: make([]report.Workload, 0, len(results))}
	if stopErr != nil {
		out.Stopped = stopErr.Error()
	}
	for _, r := range results {
		out.Workloads = append(out.Workloads, workloadResults(r))
	}
	return out
}

func workloadResults(r *Result) report.Workload {
	w := report.Workload{File: r.Path, Passed: r.Passed(), Code: r.Code(), Reasons: r.Reasons()}
	if r.Err != nil {
		w.Err = r.Err.Error()
	}
	if wl := r.Workload; wl != nil {
		w.Name, w.Kind, w.Revision = wl.Name, string(wl.Kind), wl.Revision
		w.Runs, _ = r.RunCount()
	}
	if o := r.Outcome; o != nil {
		w.Run = RunResults(o)
		w.Table = SummaryTable(o)
	}
	return w
}
