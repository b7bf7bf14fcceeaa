// Package job is the main job of `assay run` and `assay workloads run`:
// the workload files under some paths (default suites/, the repository
// root's when run from inside one) run as one batch in one trust scope
// with a progress display, and the results are written as the summary
// and verdict, as JSON, and as a JUnit report.
package job

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/vm"
	"github.com/algal-assay/assay/harness"
	"github.com/algal-assay/assay/harness/console"
	"github.com/algal-assay/assay/harness/parts"
	"github.com/algal-assay/assay/harness/workload"
	"github.com/algal-assay/assay/internal/atomicfile"
	"github.com/algal-assay/assay/internal/workroot"
	"github.com/algal-assay/assay/report"
)

// Places are where the job reads and writes: the store (Dir), the root
// of the run directories (Out) and the workload paths.
type Places struct {
	Dir, Out string
	Paths    []string
}

// AtRoot places the job as go and git do from inside a repository: what
// the run writes lands at the root, where .gitignore covers it, and the
// default suites are the root's. A Dir or Out given explicitly (keepDir,
// keepOut) stays as given. root is the repository root, "" outside one
// (p is then unchanged).
func (p Places) AtRoot(keepDir, keepOut bool) (placed Places, root string) {
	root, ok := workroot.Above()
	if !ok {
		return p, ""
	}
	if !keepDir {
		p.Dir = filepath.Join(root, p.Dir)
	}
	if !keepOut {
		p.Out = filepath.Join(root, p.Out)
	}
	if len(p.Paths) == 0 {
		p.Paths = []string{filepath.Join(root, workload.DefaultSuites)}
	}
	return p, root
}

// Discover finds the workload files under paths (default suites/),
// failing when there are none.
func Discover(paths []string) ([]string, error) {
	if len(paths) == 0 {
		if st, err := os.Stat(workload.DefaultSuites); err != nil || !st.IsDir() {
			return nil, &fault.Error{Code: workload.CodeWorkload, File: workload.DefaultSuites,
				Message: "no suites/ directory here, and no workload paths were given: run `assay init` to scaffold an organism, a bench and a foundry workload under suites/, or name workload files or directories (assay run PATH...)"}
		}
		paths = []string{workload.DefaultSuites}
	}
	files, err := workload.Discover(paths...)
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, &fault.Error{Code: workload.CodeWorkload, File: strings.Join(paths, ", "),
			Message: "no *.bench.yaml or *.foundry.yaml workloads found (run `assay init` for a starter set)"}
	}
	return files, nil
}

// Run runs the workload files as one batch over the store under dir,
// opts being what every run shares (its Runner, Store, AssayDirs,
// HandleSignals and OnProgress are the job's). One job is one trust
// scope: a receipt met again is replayed once. disp shows each workload
// as it starts and finishes and every failure. stopErr is why the job
// stopped before its end (a signal); err is a store that did not open.
func Run(ctx context.Context, files []string, dir string, opts harness.Options, shard *parts.Shard, disp *console.Progress) (results []*harness.Result, stopErr, err error) {
	wb, err := vm.NewWorkbench(dir)
	if err != nil {
		return nil, nil, err
	}
	wb.Verified = &vm.VerifiedReceipts{}
	opts.Runner, opts.Store, opts.AssayDirs = wb, wb, []string{dir}
	opts.HandleSignals, opts.OnProgress = true, disp.Update
	results, stopErr = harness.RunAll(ctx, files, harness.BatchOptions{
		Options: opts,
		OnStart: disp.Start,
		Shard:   shard,
		OnDone: func(r *harness.Result) {
			disp.Finish(r)
			if !r.Passed() {
				disp.Fail(r.Code(), r.JoinReasons())
			}
		},
	})
	if stopErr != nil {
		disp.Fail(harness.CodeCancelled, stopErr.Error())
	}
	return results, stopErr, nil
}

// Report is where the job's results go besides the summary: JSON
// replaces the summary, JUnit names a JUnit XML file written as well.
type Report struct {
	JSON  bool
	JUnit string
}

// Write writes the JUnit report, prints the summary and verdict (or the
// JSON) on w, and counts the workloads that failed or, stopped, did not
// run (total is how many there were).
func (r Report) Write(w io.Writer, results []*harness.Result, total int, stopErr error) (failed int, err error) {
	if r.JUnit != "" {
		if err := writeJUnit(r.JUnit, results, stopErr); err != nil {
			return 0, err
		}
	}
	_, failed = harness.Tally(results)
	if stopErr != nil {
		failed += total - len(results)
	}
	if r.JSON {
		return failed, printJSON(w, results, total, stopErr)
	}
	console.PrintSummary(w, results)
	console.PrintVerdict(w, total, failed, stopErr)
	return failed, nil
}

// printJSON prints the job's results as one canonical JSON line
// (report.JSON).
func printJSON(w io.Writer, results []*harness.Result, total int, stopErr error) error {
	b, err := report.JSON(harness.JobResults(results, total, stopErr))
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// writeJUnit writes the job's JUnit report (report.JUnit) atomically.
func writeJUnit(path string, results []*harness.Result, stopErr error) error {
	data, err := report.JUnit(harness.JobResults(results, len(results), stopErr))
	if err != nil {
		return err
	}
	if err := atomicfile.Write(path, data); err != nil {
		return &fault.Error{Code: fault.IOFailed, File: path, Message: "cannot write the JUnit report: " + err.Error()}
	}
	return nil
}
