package harness

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/harness/gate"
	"github.com/algal-assay/assay/harness/parts"
	"github.com/algal-assay/assay/harness/workload"
)

// Codes of the one JSON error a failed workload reports besides its load
// or run error's own code.
const (
	CodeGateFailed   = "GATE_FAILED"   // a gate rule does not hold
	CodeVerifyFailed = "VERIFY_FAILED" // the evidence does not verify
	CodeRunFailed    = "RUN_FAILED"    // the run stopped before it completed
	CodeCancelled    = "CANCELLED"     // the run was cancelled
)

// Result is what became of one workload file: it did not load (Workload
// nil), its run could not start (Outcome nil), or it ran.
//
// RunAll's results are compact once OnDone has seen them: Workload keeps
// only its header (path, kind, name, revision, description, repeats; its
// run count is RunCount's) and Outcome only what a batch prints (run
// directory, status, verification, gates, warnings, notes, errors, the
// resume and replay findings, the compiled slug and identity, and the
// summary table SummaryTable returns), so a batch's memory does not grow
// with its workloads' cases and reports.
type Result struct {
	Path     string
	Workload *workload.Workload
	Outcome  *Outcome
	// Err is why the file did not load or why its run failed.
	Err error
	// ShardParts, under a shard that holds only some of the workload's
	// parts, are the parts it ran (1-based) into ShardDir; there is no
	// verdict until `assay ci merge` assembles the run.
	ShardParts []int
	ShardDir   string

	// runs and shape are the workload's RunCount, kept when the workload
	// is let go of (compact).
	runs    int
	shape   string
	counted bool
}

// RunCount is the workload's RunCount (0 and "" when it did not load).
func (r *Result) RunCount() (int, string) {
	if r.counted {
		return r.runs, r.shape
	}
	if r.Workload == nil {
		return 0, ""
	}
	return r.Workload.RunCount()
}

// Compact lets go of everything r holds beyond what a batch prints of it
// (see Result): the workload's cases, systems and gate, the compiled
// config and tables, the reports with every case result. RunAll compacts
// its results; a host with a batch loop of its own (`assay ci merge`)
// compacts each result once it has used it whole.
func (r *Result) Compact() {
	if r.Workload == nil || r.counted {
		return
	}
	r.runs, r.shape = r.Workload.RunCount()
	r.counted = true
	w := r.Workload
	r.Workload = w.Header()
	if r.Outcome != nil {
		r.Outcome = r.Outcome.compact(r.Workload)
	}
}

// outcomeBrief is what a compact Outcome keeps of its reports: the
// summary table and whether (and why) no candidate was promoted.
type outcomeBrief struct {
	table           Table
	exhaustion      string
	budgetExhausted bool
}

// compact is o without its reports and compiled config, holding w.
func (o *Outcome) compact(w *workload.Workload) *Outcome {
	if o.brief != nil {
		return o
	}
	c := &Outcome{
		Workload: w, RunDir: o.RunDir, Status: o.Status, Verification: o.Verification, Gates: o.Gates,
		Warnings: o.Warnings, Notes: o.Notes, Err: o.Err, Replay: o.Replay, Resume: o.Resume,
		brief: &outcomeBrief{table: SummaryTable(o), exhaustion: o.exhaustion(), budgetExhausted: o.BudgetExhausted()},
	}
	if o.Compiled != nil {
		c.Compiled = &workload.Compiled{Identity: o.Compiled.Identity, Slug: o.Compiled.Slug, RunDir: o.Compiled.RunDir}
	}
	return c
}

// exhaustion says why a foundry promoted nothing: its habitat budget (of
// some repeat) ran out; "" when it promoted a candidate or is a bench.
func (o *Outcome) exhaustion() string {
	switch {
	case o.brief != nil:
		return o.brief.exhaustion
	case o.Foundry != nil && o.Foundry.Report == nil:
		return "the habitat budget was exhausted before a candidate was promoted (budget.json)"
	case o.Repeats != nil && len(o.Repeats.Exhausted) > 0:
		return fmt.Sprintf("the habitat budget was exhausted in %s before a candidate was promoted", gate.RepeatWord(o.Repeats.Exhausted))
	}
	return ""
}

// BudgetExhausted reports whether the run was a foundry whose (first
// repeat's) habitat budget ran out: it wrote budget.json, not a report.
func (o *Outcome) BudgetExhausted() bool {
	if o.brief != nil {
		return o.brief.budgetExhausted
	}
	return o.Foundry != nil && o.Foundry.Report == nil
}

// Name is the workload's name, or its file when it did not load.
func (r *Result) Name() string {
	if r.Workload != nil {
		return r.Workload.Name
	}
	return r.Path
}

// Passed reports whether the workload loaded, ran and passed.
func (r *Result) Passed() bool {
	if r.ShardParts != nil {
		return r.Err == nil
	}
	return r.Err == nil && r.Outcome != nil && r.Outcome.Passed()
}

// Reasons lists, once each, every reason the workload failed: the load or
// run error, an exhausted habitat budget, each verification mismatch and
// each failing gate rule. It is empty for a passing workload.
func (r *Result) Reasons() []string {
	var out []string
	if r.Err != nil {
		out = append(out, r.Err.Error())
	}
	o := r.Outcome
	if o == nil {
		if len(out) == 0 && !r.Passed() {
			out = append(out, "the workload did not run")
		}
		return out
	}
	if o.Err != nil && !errors.Is(r.Err, o.Err) && o.Err != r.Err {
		out = append(out, fmt.Sprintf("run %s: %v", o.Status, o.Err))
	}
	if e := o.exhaustion(); e != "" {
		out = append(out, e)
	}
	if v := o.Verification; v != nil && !v.OK {
		for _, m := range v.Mismatches {
			out = append(out, "verification: "+m)
		}
	}
	for _, g := range o.Gates {
		if !g.Passed {
			out = append(out, fmt.Sprintf("gate %s: %s", g.Rule.Name(), g.Message))
		}
	}
	if len(out) == 0 && !r.Passed() {
		out = append(out, fmt.Sprintf("the run ended %s", o.Status))
	}
	return out
}

// Code is the contract code of the workload's failure: its load or run
// error's own code when it carries one, else what failed first among the
// run, the verification and the gate; "" when it passed.
func (r *Result) Code() string {
	if r.Passed() {
		return ""
	}
	switch {
	case errors.Is(r.Err, ErrCancelled):
		return CodeCancelled
	case r.Err != nil && fault.CodeOf(r.Err) != "":
		return fault.CodeOf(r.Err)
	case r.Err != nil || r.Outcome == nil || r.Outcome.Status != "complete":
		return CodeRunFailed
	case r.Outcome.Verification == nil || !r.Outcome.Verification.OK:
		return CodeVerifyFailed
	}
	return CodeGateFailed
}

// BatchOptions configure RunAll: the options every run shares, and hooks
// for a display.
type BatchOptions struct {
	Options
	// OnStart is called before a loaded workload runs.
	OnStart func(w *workload.Workload)
	// OnDone is called with each file's result as it is known.
	OnDone func(r *Result)
	// Shard, when set, runs only the shard's parts (shard.go).
	Shard *parts.Shard
}

// RunAll is the workload loop `assay run` and the PR check share: load
// each file, run it, report each result to OnDone whole, and keep it
// compact (see Result). Files that
// do not load are results like any other. A cancelled context stops the
// loop (the running workload's record becomes cancelled); the files not
// run are left out, and the returned error wraps ErrCancelled.
func RunAll(ctx context.Context, files []string, opts BatchOptions) ([]*Result, error) {
	ws, errs := workload.LoadAll(files)
	if opts.Shard != nil {
		return runShard(ctx, files, ws, errs, opts)
	}
	var out []*Result
	for i, path := range files {
		if ctx.Err() != nil {
			return out, fmt.Errorf("%w before %s; %d workload(s) not run", ErrCancelled, path, len(files)-i)
		}
		r := &Result{Path: path, Workload: ws[i], Err: errs[i]}
		ws[i] = nil // the result holds it, and only what the run keeps of it
		r = runLoaded(ctx, r, opts)
		r.Compact()
		out = append(out, r)
		if errors.Is(r.Err, ErrCancelled) || ctx.Err() != nil {
			return out, fmt.Errorf("%w: %d workload(s) after %s not run", ErrCancelled, len(files)-i-1, r.Name())
		}
	}
	return out, nil
}

// RunFile loads and runs one workload file.
func RunFile(ctx context.Context, path string, opts BatchOptions) *Result {
	w, err := workload.Load(path)
	return runLoaded(ctx, &Result{Path: path, Workload: w, Err: err}, opts)
}

// RunWorkload runs a workload already loaded from path (LoadAll), for
// hosts that load first and run later, as the Ginkgo suites do.
func RunWorkload(ctx context.Context, path string, w *workload.Workload, opts BatchOptions) *Result {
	return runLoaded(ctx, &Result{Path: path, Workload: w}, opts)
}

// runLoaded runs r's workload unless it failed to load.
func runLoaded(ctx context.Context, r *Result, opts BatchOptions) *Result {
	if r.Err == nil && opts.Repeats > 0 {
		if w, err := r.Workload.WithRepeats(opts.Repeats); err != nil {
			r.Err = err
		} else {
			r.Workload = w
		}
	}
	if r.Err == nil {
		if opts.OnStart != nil {
			opts.OnStart(r.Workload)
		}
		// The result keeps the workload the run kept (a run in parts
		// releases its case data), so a batch holds what it prints.
		r.Outcome, r.Err = run1(ctx, r.Workload, opts.Options, func() { r.Workload = nil })
		if r.Outcome != nil {
			r.Workload = r.Outcome.Workload
		}
	}
	if opts.OnDone != nil {
		opts.OnDone(r)
	}
	return r
}

// Tally counts passed and failed results.
func Tally(results []*Result) (passed, failed int) {
	for _, r := range results {
		if r.Passed() {
			passed++
		} else {
			failed++
		}
	}
	return passed, failed
}

// JoinReasons is Reasons as one line, for a JSON error message.
func (r *Result) JoinReasons() string { return strings.Join(r.Reasons(), "; ") }
