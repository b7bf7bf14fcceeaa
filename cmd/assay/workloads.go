package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"

	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/vm"
	"github.com/algal-assay/assay/harness"
	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"
)

// workloadFlags are the main job's flags, shared by `assay workloads run`
// and `assay run` when its arguments are workloads rather than a manifest.
type workloadFlags struct {
	dir          string
	out          string
	concurrency  int
	strictSplits bool
}

// addWorkloadFlags registers the main job's flags on fs.
func addWorkloadFlags(fs *pflag.FlagSet, f *workloadFlags) {
	fs.StringVar(&f.dir, "dir", ".algal", "content-addressed store for manifests and receipts")
	fs.StringVar(&f.out, "out", "runs", "root of the run directories (runs/<workload>/<run-slug>/)")
	fs.IntVar(&f.concurrency, "concurrency", 0, "cases in flight per workload (0: one per CPU, at least two)")
	fs.BoolVar(&f.strictSplits, "strict-splits", false, "reject foundry workloads whose splits share identical args")
}

// defaultSuites is where `assay run` looks when given no path.
const defaultSuites = "suites"

func init() {
	register(func(c *cli) *cobra.Command {
		group := &cobra.Command{
			Use:   "workloads",
			Short: "Run YAML workloads (*.bench.yaml, *.foundry.yaml) and gate on them",
		}
		var f workloadFlags
		runCmd := &cobra.Command{
			Use:   "run [PATH...]",
			Short: "Run every workload under the paths (default suites/) and apply their gates",
			Long: "Run every *.bench.yaml and *.foundry.yaml found under the given files and directories\n" +
				"(default suites/). Each run writes runs/<workload>/<run-slug>/ (config.json, report.json,\n" +
				"verification.json, gate.json, summary.md, _assembly.json, foundry-run.yml); receipts go\n" +
				"to the --dir store. Prints a summary table and exits 1 when a gate or a verification fails.",
			RunE: func(_ *cobra.Command, args []string) error { return runWorkloads(c, args, f) },
		}
		addWorkloadFlags(runCmd.Flags(), &f)
		group.AddCommand(runCmd)
		return group
	})
}

// runWorkloads is the main job: discover, run each workload with a
// progress display, print the summary, and fail when any workload fails.
// SIGINT/SIGTERM stop the job: the running workload's record becomes
// cancelled (harness.Options.HandleSignals) and no further workload
// starts, even when the stop arrives between two workloads or just as
// one completes.
func runWorkloads(c *cli, paths []string, f workloadFlags) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return runWorkloadsCtx(ctx, c, paths, f)
}

func runWorkloadsCtx(ctx context.Context, c *cli, paths []string, f workloadFlags) error {
	if len(paths) == 0 {
		paths = []string{defaultSuites}
	}
	if f.concurrency < 0 {
		return usagef("--concurrency must not be negative")
	}
	files, err := harness.Discover(paths...)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return &fault.Error{Code: harness.CodeWorkload, File: strings.Join(paths, ", "), Message: "no *.bench.yaml or *.foundry.yaml workloads found"}
	}
	wb, err := vm.NewWorkbench(f.dir)
	if err != nil {
		return err
	}
	loaded, loadErrs := harness.LoadAll(files)
	disp := newProgressDisplay(c.stderr)
	var outcomes []*harness.Outcome
	var rejected []string // workloads that did not load, with the reason
	failed := 0
	for i, path := range files {
		if ctx.Err() != nil {
			failed += len(files) - i
			rejected = append(rejected, fmt.Sprintf("STOP cancelled before %s; %d workload(s) not run", path, len(files)-i))
			disp.line(rejected[len(rejected)-1])
			break
		}
		w, err := loaded[i], loadErrs[i]
		if err != nil {
			failed++
			rejected = append(rejected, fmt.Sprintf("FAIL %s: %v", path, err))
			disp.line(rejected[len(rejected)-1])
			continue
		}
		disp.start(w.Name)
		o, err := harness.Run(ctx, w, harness.Options{
			Runner: wb, Store: wb, Out: f.out, Concurrency: f.concurrency,
			StrictSplits: f.strictSplits, HandleSignals: true, OnProgress: disp.update,
		})
		disp.finish(w.Name, o, err)
		if o != nil {
			outcomes = append(outcomes, o)
		}
		if err != nil || o == nil || !o.Passed() {
			failed++
		}
		if errors.Is(err, harness.ErrCancelled) {
			break
		}
	}
	printSummary(c.stdout, outcomes)
	for i, r := range rejected {
		if i > 0 || len(outcomes) > 0 {
			fmt.Fprintln(c.stdout)
		}
		fmt.Fprintln(c.stdout, r)
	}
	if failed > 0 {
		fmt.Fprintf(c.stdout, "\n%d of %d workloads failed\n", failed, len(files))
		return reported(fmt.Errorf("%d workloads failed", failed))
	}
	fmt.Fprintf(c.stdout, "\nall %d workloads passed\n", len(files))
	return nil
}

// printSummary prints one block per workload: the contender table, the
// failing gate rules and verification mismatches, and the run directory.
func printSummary(w io.Writer, outcomes []*harness.Outcome) {
	for i, o := range outcomes {
		if i > 0 {
			fmt.Fprintln(w)
		}
		verdict := "PASS"
		if !o.Passed() {
			verdict = "FAIL"
		}
		fmt.Fprintf(w, "%s %s %s (revision %d) -> %s\n", verdict, o.Workload.Kind, o.Workload.Name, o.Workload.Revision, o.RunDir)
		t := harness.SummaryTable(o)
		if len(t.Header) > 0 {
			tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "  "+strings.Join(t.Header, "\t"))
			for _, r := range t.Rows {
				fmt.Fprintln(tw, "  "+strings.Join(r, "\t"))
			}
			tw.Flush()
		}
		if o.Foundry != nil && o.Foundry.Report == nil {
			fmt.Fprintln(w, "  habitat budget exhausted before promotion (budget.json)")
		}
		for _, warn := range o.Warnings {
			fmt.Fprintf(w, "  warning: %s\n", warn)
		}
		if o.Err != nil {
			fmt.Fprintf(w, "  run %s: %v\n", o.Status, o.Err)
		}
		if v := o.Verification; v != nil && !v.OK {
			fmt.Fprintln(w, "  verification failed:")
			for _, m := range v.Mismatches {
				fmt.Fprintf(w, "    - %s\n", m)
			}
		}
		passed := 0
		for _, g := range o.Gates {
			if g.Passed {
				passed++
				continue
			}
			fmt.Fprintf(w, "  gate FAIL %s: %s\n", g.Rule.Name(), g.Message)
		}
		if len(o.Gates) > 0 {
			fmt.Fprintf(w, "  gate: %d of %d rules hold\n", passed, len(o.Gates))
		}
	}
}

// progressDisplay shows cases done of total per workload: a live bar
// (schollz/progressbar, which handles redraw, rate and width) when stderr is
// a terminal, plain start and finish lines otherwise, so CI logs stay clean.
type progressDisplay struct {
	mu   sync.Mutex
	w    io.Writer
	live bool
	bar  *progressbar.ProgressBar
}

func newProgressDisplay(w io.Writer) *progressDisplay {
	live := false
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) && os.Getenv("TERM") != "dumb" {
		live = true
	}
	return &progressDisplay{w: w, live: live}
}

func (p *progressDisplay) line(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		p.bar.Clear()
	}
	fmt.Fprintln(p.w, s)
}

func (p *progressDisplay) start(name string) {
	if !p.live {
		p.line(name + ": running")
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	// The total is unknown until the harness reports it (a generator's
	// population size, say): -1 shows a spinner until then.
	p.bar = progressbar.NewOptions(-1,
		progressbar.OptionSetWriter(p.w),
		progressbar.OptionSetDescription(name),
		progressbar.OptionSetItsString("cases"),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionSetWidth(24),
	)
}

func (p *progressDisplay) update(ev harness.Progress) {
	if !p.live {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar == nil {
		return
	}
	if ev.Total > 0 && p.bar.GetMax() != ev.Total {
		p.bar.ChangeMax(ev.Total)
	}
	p.bar.Set(ev.Done)
}

func (p *progressDisplay) finish(name string, o *harness.Outcome, err error) {
	p.mu.Lock()
	if p.bar != nil {
		p.bar.Finish()
		p.bar = nil
	}
	p.mu.Unlock()
	switch {
	case o == nil && err != nil:
		p.line(fmt.Sprintf("%s: FAIL %v", name, err))
	case o != nil && o.Passed():
		p.line(fmt.Sprintf("%s: pass (%s)", name, o.Status))
	case o != nil:
		p.line(fmt.Sprintf("%s: FAIL (%s)", name, o.Status))
	}
}
