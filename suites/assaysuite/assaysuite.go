// Package assaysuite turns Assay workloads (*.bench.yaml, *.foundry.yaml)
// into Ginkgo specs, so any repository's suite is a few lines:
//
//	package suites
//
//	import (
//		"testing"
//
//		"github.com/algal-assay/assay/suites/assaysuite"
//		. "github.com/onsi/ginkgo/v2"
//		. "github.com/onsi/gomega"
//	)
//
//	func TestWorkloads(t *testing.T) {
//		RegisterFailHandler(Fail)
//		RunSpecs(t, "workloads")
//	}
//
//	var _ = assaysuite.Workloads(".")
//
// Each workload is one ordered container labelled with its name and kind:
// it runs when the first of its specs does (so -ginkgo.label-filter=NAME
// runs only that workload, and `ginkgo -p` spreads workloads over
// processes), and holds a spec for the run, one per contender, one for the
// verification and one per gate rule, each located at the line of the
// workload file it checks; a failure and its report entries are located
// there too (Ginkgo's "In [DeferCleanup (Each)] at: suites/x.bench.yaml:14"
// and CI annotations), never in this package, and a failed case at its own
// line: of the workload file, or of the case file (`- file:`) it came
// from. Only the run, the verification and the gate decide pass or fail;
// a case failure no gate rule mentions is reported, not failed. Report
// entries (the measurements) appear for failures or with -ginkgo.v;
// `go test -v ./suites/... -ginkgo.v` shows them for a passing package
// too, whose output go test otherwise hides.
//
// The run directories of a workload that fails are kept and every failure
// names them (JUnit and JSON reports carry the message); a passing
// workload's are removed unless Options.Out (or ASSAY_SUITES_OUT) names
// where they go. ASSAY_SUITES adds workload roots (a path list).
package assaysuite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/algal-assay/assay/engine/bench"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/vm"
	"github.com/algal-assay/assay/harness"
	"github.com/algal-assay/assay/harness/workload"
	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
)

// Options configure Workloads.
type Options struct {
	// Out is the root of the run directories; "" keeps them in a temporary
	// directory, removed after a passing workload and kept after a failing
	// one.
	Out string
	// Concurrency bounds the cases in flight per workload (0: one per CPU,
	// at least two).
	Concurrency int
}

// Workloads declares the specs of every workload under roots (files or
// directories; ASSAY_SUITES adds more) and returns true, so it can be
// called as `var _ = assaysuite.Workloads("suites")`. Call it at the top
// level of a suite file, while Ginkgo builds the spec tree.
func Workloads(roots ...string) bool { return WorkloadsWith(Options{}, roots...) }

// WorkloadsWith is Workloads with options.
func WorkloadsWith(opts Options, roots ...string) bool {
	roots = append(append([]string{}, roots...), workload.SplitList(os.Getenv("ASSAY_SUITES"))...)
	if opts.Out == "" {
		opts.Out = os.Getenv("ASSAY_SUITES_OUT")
	}
	ginkgo.Describe("Assay workloads", func() {
		paths, err := workload.Discover(roots...)
		if err != nil {
			ginkgo.It("discovers workloads", func() { ginkgo.Fail(err.Error()) })
			return
		}
		if len(paths) == 0 {
			// An empty suite would report success having checked nothing.
			ginkgo.It("finds at least one workload", func() {
				ginkgo.Fail(fmt.Sprintf("no *.bench.yaml or *.foundry.yaml under %v (run `assay init` for a starter set)", roots))
			})
			return
		}
		ws, errs := workload.LoadAll(paths)
		if msg := unmatchedFilter(ginkgo.GinkgoLabelFilter(), specLabels(paths, ws)); msg != "" {
			describeUnmatchedFilter(msg)
		}
		for i, p := range paths {
			if errs[i] != nil {
				describeInvalid(p, errs[i])
				continue
			}
			describeWorkload(p, ws[i], opts)
		}
	})
	return true
}

// failAt fails the current spec at loc, a line of a workload file, and
// returns (the caller's spec then ends). Ginkgo records a failure where
// ginkgo.Fail is called, which would name this file in "In [It] at:" and in
// CI annotations; the one public way to fail at another location is a
// DeferCleanup given that CodeLocation whose callback returns an error,
// which Ginkgo fails at the cleanup's location as soon as the spec's body
// returns (In [DeferCleanup (Each)] at: the workload's line).
func failAt(loc types.CodeLocation, msg string) {
	ginkgo.DeferCleanup(func() error { return errors.New(msg) }, loc)
}

// at locates a spec at a line of a workload file.
func at(file string, line int) types.CodeLocation {
	if abs, err := filepath.Abs(file); err == nil {
		file = abs
	}
	return types.CodeLocation{FileName: file, LineNumber: line}
}

// fileLabels labels a workload that did not load by what its file name
// says (name and kind), so -label-filter=<name> still selects, and fails
// on, a workload that is broken rather than silently matching nothing.
func fileLabels(path string) ginkgo.Labels {
	labels := ginkgo.Labels{"invalid"}
	kind, ok := workload.KindOf(path)
	if !ok {
		return labels
	}
	if name := workload.FileStem(path); labelSafe.MatchString(name) {
		labels = append(labels, name)
	}
	return append(labels, string(kind))
}

var labelSafe = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

func describeInvalid(path string, err error) {
	line := 1
	if f, ok := fault.As(err); ok && f.Line > 0 {
		line = f.Line
	}
	ginkgo.Describe(path, fileLabels(path), at(path, 1), func() {
		ginkgo.It("loads", at(path, line), func() { failAt(at(path, line), fault.Advised(err)) })
	})
}

// workloadRun is one workload's run, shared by its specs.
type workloadRun struct {
	path   string
	w      *workload.Workload
	opts   Options
	tmp    string
	result *harness.Result
	failed bool
}

func (r *workloadRun) outcome() *harness.Outcome { return r.result.Outcome }

// runDir names where the run's files are, for failure messages.
func (r *workloadRun) runDir() string {
	if o := r.outcome(); o != nil && o.RunDir != "" {
		return o.RunDir
	}
	return filepath.Join(r.tmp, "runs")
}

// fail fails the current spec at line of the workload file, naming the
// kept run directory; the spec's body must return after it.
// The failure message is the one place it is said (no report entry
// repeats it).
func (r *workloadRun) fail(line int, msg string) { r.failIn(r.path, line, msg) }

// failIn is fail at a line of another file (a case file the workload
// includes).
func (r *workloadRun) failIn(file string, line int, msg string) {
	r.failed = true
	failAt(at(file, line), fmt.Sprintf("%s\nrun directory (kept): %s", msg, r.runDir()))
}

// caseAt is where case id is declared: its line of the workload file, or
// of the case file (`- file: cases.jsonl`) it was read from; fallback, a
// line of the workload file, when no case has that id.
func (r *workloadRun) caseAt(id string, fallback int) (file string, line int) {
	for _, c := range r.w.Cases {
		if c.ID != id || c.Pos.Line == 0 {
			continue
		}
		// Pos.File names the file in its display form (relative to the
		// git work tree), which Ginkgo cannot open; the case files are
		// held as paths.
		for _, f := range r.w.CaseFiles {
			if workload.DisplayPath(f) == c.Pos.File {
				return f, c.Pos.Line
			}
		}
		return r.path, c.Pos.Line
	}
	return r.path, fallback
}

// failedCases names a bench system's failed cases, each at its own line of
// the workload file.
func (r *workloadRun) failedCases(system string) []string {
	rep := r.outcome().Bench
	if rep == nil {
		return nil
	}
	var out []string
	for i := range rep.Systems {
		if s := &rep.Systems[i]; s.ID == system {
			for j := range s.Cases {
				if c := &s.Cases[j]; !c.Passed {
					file, line := r.caseAt(c.ID, 0)
					out = append(out, fmt.Sprintf("case %s at %s:%d: outcome %s; expected %v; got %v", c.ID, file, line, c.Outcome, c.Expect, c.Outputs))
				}
			}
		}
	}
	return out
}

// completed skips a spec whose subject the run never reached.
func (r *workloadRun) completed() {
	if o := r.outcome(); o == nil || o.Status != "complete" {
		ginkgo.Skip("the run did not complete (see the run spec)")
	}
}

func (r *workloadRun) start() {
	tmp, err := os.MkdirTemp("", "assay-suite-"+r.w.Name+"-")
	if err != nil {
		ginkgo.Fail(err.Error())
	}
	r.tmp = tmp
	out := r.opts.Out
	if out == "" {
		out = filepath.Join(tmp, "runs")
	}
	wb, err := vm.NewWorkbench(filepath.Join(tmp, "store"))
	if err != nil {
		ginkgo.Fail(err.Error())
	}
	r.result = harness.RunWorkload(context.Background(), r.path, r.w, harness.BatchOptions{
		Options: harness.Options{Runner: wb, Store: wb, Out: out, Concurrency: r.opts.Concurrency},
	})
}

func (r *workloadRun) finish() {
	if !r.failed && r.tmp != "" {
		os.RemoveAll(r.tmp)
	}
}

func describeWorkload(path string, w *workload.Workload, opts Options) {
	r := &workloadRun{path: path, w: w, opts: opts}
	ginkgo.Describe(fmt.Sprintf("%s %s", w.Kind, w.Name), ginkgo.Label(w.Name, string(w.Kind)), ginkgo.Ordered, ginkgo.ContinueOnFailure, at(path, w.NamePos().Line), func() {
		ginkgo.BeforeAll(r.start)
		ginkgo.AfterAll(r.finish)

		ginkgo.It("runs to completion", ginkgo.Label("run"), at(path, w.NamePos().Line), r.ranToCompletion)
		if w.Kind == workload.KindBench {
			for _, s := range w.Systems {
				ginkgo.It("system "+s.ID, ginkgo.Label("system"), at(path, s.Pos.Line), func() {
					r.completed()
					describeSystem(r, s.ID, s.Pos.Line)
				})
			}
		} else {
			ginkgo.It("promotes a candidate within the habitat budget", ginkgo.Label("candidates"), at(path, w.NamePos().Line), func() {
				r.completed()
				describeCandidates(r, w.NamePos().Line)
			})
		}
		ginkgo.It("verifies the report and every receipt", ginkgo.Label("verify"), at(path, w.NamePos().Line), func() {
			r.completed()
			v := r.outcome().Verification
			ginkgo.AddReportEntry("checked receipts", v.CheckedReceipts, ginkgo.ReportEntryVisibilityFailureOrVerbose, at(path, w.NamePos().Line))
			if !v.OK {
				r.fail(w.NamePos().Line, fmt.Sprintf("%s: the evidence does not verify:\n%s", path, strings.Join(v.Mismatches, "\n")))
			}
		})
		for i, rule := range w.Gate.Rules {
			ginkgo.It("gate: "+rule.Name(), ginkgo.Label("gate"), at(path, rule.Pos.Line), func() {
				r.completed()
				r.judged(i, rule)
			})
		}
	})
}

// ranToCompletion reports the run's warnings and fails unless it
// completed.
func (r *workloadRun) ranToCompletion() {
	line := r.w.NamePos().Line
	o := r.outcome()
	if o != nil {
		for _, warn := range o.Warnings {
			ginkgo.AddReportEntry("warning", warn, at(r.path, line))
		}
	}
	if r.result.Err != nil || o == nil || o.Status != "complete" {
		r.fail(line, fmt.Sprintf("%s: the run did not complete: %s", r.path, r.result.JoinReasons()))
	}
}

// judged reports gate rule i's verdict, failing where the workload says
// what failed: a case's expected outcome at the case's line, a bench
// system's rule with the cases it failed.
func (r *workloadRun) judged(i int, rule workload.Rule) {
	gates := r.outcome().Gates
	if i >= len(gates) || gates[i].Rule.Name() != rule.Name() {
		r.fail(rule.Pos.Line, fmt.Sprintf("gate rule %q was not judged", rule.Name()))
		return
	}
	if gates[i].Passed {
		ginkgo.AddReportEntry("verdict", gates[i].Message, ginkgo.ReportEntryVisibilityFailureOrVerbose, at(r.path, rule.Pos.Line))
		return
	}
	switch {
	case rule.Case != "":
		file, line := r.caseAt(rule.Case, rule.Pos.Line)
		r.failIn(file, line, gates[i].Message)
	case rule.System != "" && r.w.Kind == workload.KindBench:
		msg := gates[i].Message
		if cases := r.failedCases(rule.System); len(cases) > 0 {
			msg += "\nfailed " + strings.Join(cases, "\nfailed ")
		}
		r.fail(rule.Pos.Line, msg)
	default:
		r.fail(rule.Pos.Line, gates[i].Message)
	}
}

// describeSystem reports one bench system's measurements and the cases it
// failed; it fails only when the report lacks the system.
func describeSystem(r *workloadRun, id string, line int) {
	rep := r.outcome().Bench
	for i := range rep.Systems {
		s := &rep.Systems[i]
		if s.ID != id {
			continue
		}
		ginkgo.AddReportEntry("passed", fmt.Sprintf("%d/%d", s.Passed, s.Total), ginkgo.ReportEntryVisibilityFailureOrVerbose, at(r.path, line))
		ginkgo.AddReportEntry("usage", fmt.Sprintf("%d tokens in, %d out, %s, %d effect calls", s.Usage.TokensIn, s.Usage.TokensOut, bench.FormatCost(s.Usage.Cost), s.EffectCalls), ginkgo.ReportEntryVisibilityFailureOrVerbose, at(r.path, line))
		for j := range s.Cases {
			if c := &s.Cases[j]; !c.Passed {
				caseFile, caseLine := r.caseAt(c.ID, line)
				ginkgo.AddReportEntry("failed case "+c.ID, fmt.Sprintf("outcome %s; expected %v; got %v; receipt %s", c.Outcome, c.Expect, c.Outputs, c.ReceiptDigest), ginkgo.ReportEntryVisibilityFailureOrVerbose, at(caseFile, caseLine))
			}
		}
		if int(s.Total) != len(rep.Cases) {
			r.fail(line, fmt.Sprintf("system %q ran %d of %d cases", id, s.Total, len(rep.Cases)))
		}
		return
	}
	r.fail(line, fmt.Sprintf("the report has no system %q", id))
}

// describeCandidates reports each candidate's rates and the promotion; it
// fails when the habitat budget ran out before a promotion.
func describeCandidates(r *workloadRun, line int) {
	res := r.outcome().Foundry
	if res.Report == nil {
		r.fail(line, "the habitat budget was exhausted before a candidate was promoted; see budget.json")
		return
	}
	rep := res.Report
	for i := range rep.Candidates {
		c := &rep.Candidates[i]
		mark := ""
		if c.ManifestDigest == rep.Promoted {
			mark = " (promoted)"
		}
		ginkgo.AddReportEntry("candidate "+c.ManifestKey+mark, fmt.Sprintf("validation %d/%d, train %d/%d, %d agent calls",
			c.Validation.Passed, c.Validation.Total, c.Train.Passed, c.Train.Total, c.Work.AgentCalls), ginkgo.ReportEntryVisibilityFailureOrVerbose, at(r.path, line))
	}
	ginkgo.AddReportEntry("holdout", fmt.Sprintf("%d/%d", rep.Holdout.Passed, rep.Holdout.Total), ginkgo.ReportEntryVisibilityFailureOrVerbose, at(r.path, line))
}
