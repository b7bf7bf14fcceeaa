package report

import "github.com/algal-assay/assay/engine/significance"

// The results model: what every format renders from. A job's Results
// hold a Workload per workload file and, for each that ran, its Run (the
// run directory's facts, gate and verification); the pull-request check
// adds a Diff of two sets of runs, and `assay ci verify` an Evidence
// check. The harness fills Results and Run from its outcome; each format
// is one file in this package that reads them (summary_md.go, junit.go,
// json.go, bench.go and foundry.go for report.html, ...).

// Results is one `assay run` job: every workload file it was given, in
// order, and how far it got.
type Results struct {
	// Total is how many workload files the job was given; Workloads
	// holds those that were tried (fewer when the job stopped early).
	Total     int
	Workloads []Workload
	// Stopped is why the job stopped before trying every file ("" when it
	// did not).
	Stopped string
}

// Tally counts the passed and failed workloads.
func (r *Results) Tally() (passed, failed int) {
	for i := range r.Workloads {
		if r.Workloads[i].Passed {
			passed++
		} else {
			failed++
		}
	}
	return passed, failed
}

// Workload is what became of one workload file: it did not load (Name
// ""), its run could not start (Run nil), or it ran.
type Workload struct {
	File string
	// Name, Kind and Revision are the workload's header; Runs how many
	// runs (contender x case) it makes.
	Name, Kind string
	Revision   int
	Runs       int
	Passed     bool
	// Code is the contract code of the failure ("" when it passed);
	// Reasons every reason it failed, once each.
	Code    string
	Reasons []string
	// Err is why the file did not load or why its run failed ("" when
	// neither happened).
	Err string
	// Table is the contender table as the job prints it (with the prompt
	// cache columns where the run's live requests reported them).
	Table Table
	Run   *Run
}

// Label is the workload's name, or its file when it did not load.
func (w *Workload) Label() string {
	if w.Name != "" {
		return w.Name
	}
	return w.File
}

// Run is one run directory: what ran, its results and what the later
// phases (verify, gate) said.
type Run struct {
	// Workload is the workload's name; Kind "bench" or "foundry".
	Workload    string
	Kind        string
	Revision    int
	Description string
	// Slug is the run directory's name (it identifies the inputs);
	// Identity the digest of the inputs; Dir the run directory.
	Slug, Identity string
	Dir            string
	// Status is how the run ended ("complete" when it ran to the end).
	Status string
	// Repeats is the number of repeats (0 for a single sample).
	Repeats  int
	Warnings []string
	Bench    *BenchFacts
	Foundry  *FoundryFacts
	// BudgetExhausted: a foundry whose habitat budget ran out before it
	// promoted a candidate (it wrote budget.json, not a report).
	BudgetExhausted bool
	// Table is the contender table as the evidence alone gives it (no
	// prompt-cache counts: summary.md is re-derived from the run files).
	Table Table
	// Parts is a bench run in parts (nil when it ran whole).
	Parts *Parts
	// PassRates are the contenders' pass rates with their 95% intervals
	// (nil when the run left no report).
	PassRates *PassRates
	// RepeatsAccount is how the repeats went (nil for a single sample).
	RepeatsAccount *RepeatsAccount
	Gates          []Gate
	Verification   *Verification
	// Resumed says which parts of a bench in parts an interrupted run's
	// reports supplied (nil when the run was not resumed).
	Resumed *Resumed
}

// BenchFacts are a bench run's report digest and Pareto set.
type BenchFacts struct {
	Digest string
	Pareto []string
}

// FoundryFacts are a foundry run's report digest, the promoted candidate
// and its holdout, and the generator of a generated population.
type FoundryFacts struct {
	Digest, Promoted            string
	HoldoutPassed, HoldoutTotal int64
	// Lineage is nil unless the population was generated.
	Lineage *Lineage
}

// Lineage names the generator of a generated population: its digest and
// its run's receipt digest.
type Lineage struct {
	Generator, Run string
}

// Parts says how a bench run in parts was cut: Count parts, each of at
// most MaxCases cases and MaxSystems systems, their reports First to Last,
// and the run directory's file (Aggregate) that holds the totals.
type Parts struct {
	Count                int
	First, Last          string
	MaxCases, MaxSystems int
	Aggregate            string
}

// PassRates are a run's pass rates with their 95% intervals: Wilson's
// for single samples, clustered by case over Repeats repeats (0 for single
// samples).
type PassRates struct {
	Repeats int
	Rows    []PassRateRow
}

// PassRateRow is one contender's pass rates: a bench system's over its
// cases (Passed), a foundry candidate's on validation and train, or, with
// Holdout, the promoted candidate's on the holdout (Passed). Subject is
// the system or candidate; "" on a holdout row that names no candidate.
type PassRateRow struct {
	Subject string
	Holdout bool
	// Passed is set for a bench system and a holdout, Validation and
	// Train for a foundry candidate.
	Passed, Validation, Train *PassRate
}

// PassRate is Passed of Total with its 95% interval.
type PassRate struct {
	Passed, Total int
	CI95          significance.Interval
}

// RepeatsAccount is summary.md's account of a run with repeats: which
// report each repeat left, the candidate promoted over all of them (a
// foundry), and every flaky case.
type RepeatsAccount struct {
	// K is the number of repeats; Aggregate the file that aggregates
	// them (re-derived on every read).
	K         int
	Aggregate string
	Reports   []RepeatReport
	// Promoted is the candidate a foundry promoted on validation pooled
	// over all repeats (nil for a bench, or when none was).
	Promoted *RepeatPromotion
	// Flaky are the cases that passed in some repeats and failed in
	// others, by contender in table order.
	Flaky []FlakyRepeatCase
}

// RepeatReport is one repeat's report: its file (the budget file when
// the habitat budget ran out) and digest.
type RepeatReport struct {
	File      string
	Exhausted bool
	Digest    string
}

// RepeatPromotion is the candidate promoted over all repeats and in how
// many of them it was promoted on its own.
type RepeatPromotion struct {
	ID         string
	PromotedIn int
}

// FlakyRepeatCase is a flaky case of a contender: the repeats it passed
// in, of Runs.
type FlakyRepeatCase struct {
	Subject, Case string
	PassedIn      []int
	Runs          int
}

// Verification is a run's verify phase as a report shows it.
type Verification struct {
	OK              bool
	CheckedReceipts int
	Mismatches      []string
}

// Gate is one gate rule's verdict; At is where the rule was written
// (file:line:col), File its file.
type Gate struct {
	Name    string
	Passed  bool
	Message string
	At      string
	File    string
}

// Resumed says which parts of a bench in parts an interrupted run's
// reports supplied and which ran again.
type Resumed struct {
	Reused, Ran []int
	Rejected    []string
}

// Table is a contender table: a header and rows of cells.
type Table struct {
	Header []string
	Rows   [][]string
}
