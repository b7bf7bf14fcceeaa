package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

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
	repeats      int
	strictSplits bool
	report       workloadReport
	live         liveFlags
	// shard is --shard i/n ("" runs everything).
	shard string
	// fresh is --fresh: no reuse of an unfinished run's finished parts.
	fresh bool
	// dirSet and outSet record an explicit --dir and --out; the defaults
	// are at the project's root (workRoot).
	dirSet, outSet bool
}

// workloadReport says where the job's results go besides the human
// summary: --json replaces the summary on stdout, --junit FILE writes a
// JUnit report as well.
type workloadReport struct {
	json  bool
	junit string
}

// addWorkloadFlags registers the main job's flags on fs.
func addWorkloadFlags(fs *pflag.FlagSet, f *workloadFlags) {
	fs.StringVar(&f.dir, "dir", ".algal", "content-addressed store for manifests and receipts")
	fs.StringVar(&f.out, "out", "runs", "root of the run directories (runs/<workload>/<run-slug>/)")
	fs.IntVar(&f.concurrency, "concurrency", 0, "cases in flight per workload (0: one per CPU, at least two)")
	fs.IntVar(&f.repeats, "repeats", 0, "run every case this many times (1..32) as independent samples, overriding each workload's repeats: (0: the workload's)")
	fs.BoolVar(&f.strictSplits, "strict-splits", false, "reject foundry workloads whose splits share identical args")
	addWorkloadReportFlags(fs, &f.report)
	addLiveFlags(fs, &f.live)
	addShardFlag(fs, &f.shard)
	addFreshFlag(fs, &f.fresh)
}

// addFreshFlag registers --fresh.
func addFreshFlag(fs *pflag.FlagSet, fresh *bool) {
	fs.BoolVar(fresh, "fresh", false, "workloads: run every part of a bench in parts, ignoring the finished parts an interrupted run of the same inputs left (by default each is verified and reused)")
}

// addShardFlag registers --shard.
func addShardFlag(fs *pflag.FlagSet, shard *string) {
	fs.StringVar(shard, "shard", "", "workloads: run only shard `i/n` of the batch's parts (merge the shards with `assay ci merge`)")
}

// addWorkloadReportFlags registers --json and --junit.
func addWorkloadReportFlags(fs *pflag.FlagSet, r *workloadReport) {
	fs.BoolVar(&r.json, "json", false, "workloads: print the results as JSON on stdout instead of the summary")
	fs.StringVar(&r.junit, "junit", "", "workloads: also write a JUnit XML report to this file")
}

// defaultSuites is where `assay run` looks when given no path.
const defaultSuites = "suites"

// newWorkloadsCmd is `assay workloads run`, the main job under its own name.
func newWorkloadsCmd(c *cli) *cobra.Command {
	group := &cobra.Command{
		Use:   "workloads",
		Short: "Run YAML workloads (*.bench.yaml, *.foundry.yaml) and gate on them",
	}
	var f workloadFlags
	runCmd := &cobra.Command{
		Use:   "run [PATH...]",
		Short: "Run every workload under the paths (default suites/) and apply their gates",
		Long: "Run every *.bench.yaml and *.foundry.yaml (or .yml) found under the given files and\n" +
			"directories (default suites/). Each run writes runs/<workload>/<run-slug>/ (config.json,\n" +
			"report.json, verification.json, gate.json, summary.md, report.html, _assembly.json, foundry-run.yml);\n" +
			"receipts go to the --dir store. Prints a summary (or --json) and exits 1 when a workload\n" +
			"does not load, a gate or a verification fails; stderr carries one JSON error per failure.",
		RunE: func(cmd *cobra.Command, args []string) error {
			f.dirSet, f.outSet = cmd.Flags().Changed("dir"), cmd.Flags().Changed("out")
			return runWorkloads(c, args, f)
		},
	}
	addWorkloadFlags(runCmd.Flags(), &f)
	group.AddCommand(runCmd)
	return group
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
	// The verb's own --json shadows the root's: errors follow it too.
	c.json = c.json || f.report.json
	if f.concurrency < 0 {
		return usagef("--concurrency must not be negative")
	}
	if f.repeats < 0 || f.repeats > harness.MaxRepeats {
		return usagef("--repeats must be from 1 to %d (0: each workload's own)", harness.MaxRepeats)
	}
	record, archiveDir, err := f.live.resolve()
	if err != nil {
		return err
	}
	if root, ok := workRoot(); ok {
		// Run from inside a repository as go and git are: what the run
		// writes lands at the root, where .gitignore covers it.
		if !f.dirSet {
			f.dir = filepath.Join(root, f.dir)
		}
		if !f.outSet {
			f.out = filepath.Join(root, f.out)
		}
		if len(paths) == 0 {
			paths = []string{filepath.Join(root, defaultSuites)}
		}
		fmt.Fprintf(c.stderr, "assay: the repository root is %s: runs/ and .algal/ are written there\n", root)
	}
	if len(paths) == 0 {
		if st, err := os.Stat(defaultSuites); err != nil || !st.IsDir() {
			return &fault.Error{Code: harness.CodeWorkload, File: defaultSuites,
				Message: "no suites/ directory here, and no workload paths were given: run `assay init` to scaffold an organism, a bench and a foundry workload under suites/, or name workload files or directories (assay run PATH...)"}
		}
		paths = []string{defaultSuites}
	}
	files, err := harness.Discover(paths...)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return &fault.Error{Code: harness.CodeWorkload, File: strings.Join(paths, ", "),
			Message: "no *.bench.yaml or *.foundry.yaml workloads found (run `assay init` for a starter set)"}
	}
	var shard *harness.Shard
	if f.shard != "" {
		s, err := harness.ParseShard(f.shard)
		if err != nil {
			return usagef("%v", err)
		}
		shard = &s
	}
	wb, err := vm.NewWorkbench(f.dir)
	if err != nil {
		return err
	}
	// One run is one trust scope: a receipt met again is replayed once.
	wb.Verified = &vm.VerifiedReceipts{}
	disp := newProgressDisplay(c.stderr)
	// On a terminal a failure reads as a sentence, and not at all when
	// the summary on the same terminal says it (each message once).
	disp.sentences = c.readableErr()
	disp.summarized = c.readableErr() && c.readable() && !f.report.json
	results, stopErr := harness.RunAll(ctx, files, harness.BatchOptions{
		Options: harness.Options{
			Runner: wb, Store: wb, Out: f.out, AssayDirs: []string{f.dir}, Concurrency: f.concurrency,
			StrictSplits: f.strictSplits, HandleSignals: true, OnProgress: disp.update,
			Record: record, Archive: archiveDir, Repeats: f.repeats, Fresh: f.fresh,
		},
		OnStart: disp.start,
		Shard:   shard,
		OnDone: func(r *harness.Result) {
			disp.finish(r)
			if !r.Passed() {
				disp.jsonError(r.Code(), r.JoinReasons())
			}
		},
	})
	if stopErr != nil {
		disp.jsonError(harness.CodeCancelled, stopErr.Error())
	}
	if f.report.junit != "" {
		if err := writeJUnit(f.report.junit, results, stopErr); err != nil {
			return err
		}
	}
	_, failed := harness.Tally(results)
	if stopErr != nil {
		failed += len(files) - len(results)
	}
	if f.report.json {
		if err := printResultsJSON(c.stdout, results, len(files), stopErr); err != nil {
			return err
		}
	} else {
		printSummary(c.stdout, results)
		if stopErr != nil {
			fmt.Fprintf(c.stdout, "\nSTOP %v\n", stopErr)
		}
		if failed > 0 {
			fmt.Fprintf(c.stdout, "\n%d of %d workloads failed\n", failed, len(files))
		} else {
			fmt.Fprintf(c.stdout, "\nall %d workloads passed\n", len(files))
		}
	}
	if failed > 0 {
		return reported(fmt.Errorf("%d workloads failed", failed))
	}
	return nil
}

// printSummary prints one block per workload file: the verdict, the
// contender table, warnings, and every reason it failed, once each.
func printSummary(w io.Writer, results []*harness.Result) {
	for i, r := range results {
		if i > 0 {
			fmt.Fprintln(w)
		}
		verdict := "PASS"
		if !r.Passed() {
			verdict = "FAIL"
		}
		o := r.Outcome
		switch {
		case r.Workload == nil:
			fmt.Fprintf(w, "%s %s (did not load)\n", verdict, r.Path)
		case r.ShardParts != nil:
			fmt.Fprintf(w, "%s %s %s (revision %d) part(s) %s of this shard -> %s (merge the shards for its verdict)\n", verdict, r.Workload.Kind, r.Workload.Name, r.Workload.Revision, joinInts(r.ShardParts), r.ShardDir)
		case o == nil:
			fmt.Fprintf(w, "%s %s %s (revision %d) did not run\n", verdict, r.Workload.Kind, r.Workload.Name, r.Workload.Revision)
		default:
			runs := ""
			if n, shape := r.RunCount(); n > 0 {
				runs = fmt.Sprintf(" %d runs (%s)", n, shape)
			}
			fmt.Fprintf(w, "%s %s %s (revision %d)%s -> %s\n", verdict, r.Workload.Kind, r.Workload.Name, r.Workload.Revision, runs, o.RunDir)
		}
		if o != nil {
			t := harness.SummaryTable(o)
			if len(t.Header) > 0 {
				tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "  "+strings.Join(t.Header, "\t"))
				for _, row := range t.Rows {
					fmt.Fprintln(tw, "  "+strings.Join(row, "\t"))
				}
				_ = tw.Flush()
			}
			for _, warn := range o.Warnings {
				fmt.Fprintf(w, "  warning: %s\n", warn)
			}
			for _, note := range o.Notes {
				fmt.Fprintf(w, "  note: %s\n", note)
			}
		}
		for _, reason := range r.Reasons() {
			fmt.Fprintf(w, "  FAIL %s\n", reason)
		}
		if o != nil && len(o.Gates) > 0 {
			held := 0
			for _, g := range o.Gates {
				if g.Passed {
					held++
				}
			}
			fmt.Fprintf(w, "  gate: %d of %d rules hold\n", held, len(o.Gates))
		}
	}
}

// progressDisplay shows runs done of total per workload with a pass/fail
// tally: a live bar (schollz/progressbar, which handles redraw, rate and
// width) when stderr is a terminal; otherwise plain start and finish lines
// and, for a workload still running, a line every interval, so CI logs
// stay readable and show that a long workload is alive.
type progressDisplay struct {
	mu       sync.Mutex
	w        io.Writer
	live     bool
	bar      *progressbar.ProgressBar
	interval time.Duration
	last     harness.Progress
	name     string
	stop     chan struct{}
	done     chan struct{}
	// sentences prints failures for a person instead of as JSON lines;
	// summarized leaves them to the summary, which a person reads too.
	sentences, summarized bool
}

// ciInterval is how often a plain display reports a running workload.
const ciInterval = 5 * time.Second

func newProgressDisplay(w io.Writer) *progressDisplay {
	live := false
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) && os.Getenv("TERM") != "dumb" {
		live = true
	}
	return &progressDisplay{w: w, live: live, interval: ciInterval}
}

func (p *progressDisplay) lineLocked(s string) {
	if p.bar != nil {
		_ = p.bar.Clear() // a display write; the job's result does not depend on it
	}
	fmt.Fprintln(p.w, s)
}

// jsonError prints a failure: the stable one-line JSON error, or on a
// terminal a sentence (nothing when the summary will say it).
func (p *progressDisplay) jsonError(code, message string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.summarized {
		return
	}
	if p.bar != nil {
		_ = p.bar.Clear()
	}
	if p.sentences {
		writeSentence(p.w, code, message, "")
		return
	}
	writeError(p.w, code, message)
}

func tally(ev harness.Progress) string {
	runs := fmt.Sprintf("%d runs", ev.Done)
	if ev.Total > 0 {
		runs = fmt.Sprintf("%d/%d runs", ev.Done, ev.Total)
	}
	if ev.Reused > 0 {
		runs += fmt.Sprintf(" (%d reused from an interrupted run)", ev.Reused)
	}
	s := fmt.Sprintf("%s, %d passed, %d failed", runs, ev.Passed, ev.Failed)
	// Every run the harness does not judge is a generator's (it proposes
	// a population; there is no case to pass or fail), so the three
	// counts add up to the runs done.
	if gen := ev.Done - ev.Passed - ev.Failed; gen > 0 {
		s += ", " + plural(gen, "generator run")
	}
	return s
}

func (p *progressDisplay) start(w *harness.Workload) {
	n, shape := w.RunCount()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.name, p.last = w.Name, harness.Progress{Workload: w.Name, Total: n}
	if !p.live {
		what := fmt.Sprintf("%d runs (%s)", n, shape)
		if shape == "" {
			// Only a generator's population leaves the count open.
			what = "runs decided by its generator"
		}
		p.lineLocked(fmt.Sprintf("%s: running %s", w.Name, what))
		p.stop, p.done = make(chan struct{}), make(chan struct{})
		go p.heartbeat(p.stop, p.done)
		return
	}
	// The total is unknown until the harness reports it (a generator's
	// population size, say): -1 shows a spinner until then.
	max := -1
	if n > 0 {
		max = n
	}
	p.bar = progressbar.NewOptions(max,
		progressbar.OptionSetWriter(p.w),
		progressbar.OptionSetDescription(w.Name),
		progressbar.OptionSetItsString("runs"),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionSetWidth(24),
	)
}

// heartbeat prints the running workload's tally every interval.
func (p *progressDisplay) heartbeat(stop, done chan struct{}) {
	defer close(done)
	t := time.NewTicker(p.interval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			p.mu.Lock()
			p.lineLocked(fmt.Sprintf("%s: %s", p.name, tally(p.last)))
			p.mu.Unlock()
		}
	}
}

func (p *progressDisplay) update(ev harness.Progress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if ev.Done < p.last.Done {
		return // a late event from another goroutine
	}
	if ev.Total == 0 {
		ev.Total = p.last.Total
	}
	p.last = ev
	if p.bar == nil {
		return
	}
	if ev.Total > 0 && p.bar.GetMax() != ev.Total {
		p.bar.ChangeMax(ev.Total)
	}
	// The count first, then the tally: each renders, and the last render
	// shows both for the same event.
	_ = p.bar.Set(ev.Done)
	p.bar.Describe(fmt.Sprintf("%s (%d passed, %d failed)", ev.Workload, ev.Passed, ev.Failed))
}

func (p *progressDisplay) finish(r *harness.Result) {
	p.mu.Lock()
	stop, done := p.stop, p.done
	p.stop, p.done = nil, nil
	p.mu.Unlock()
	if stop != nil {
		close(stop)
		<-done
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		_ = p.bar.Finish()
		p.bar = nil
	}
	switch o := r.Outcome; {
	case r.Workload == nil:
		p.lineLocked(fmt.Sprintf("%s: FAIL (did not load)", r.Path))
	case r.ShardParts != nil && r.Err == nil:
		p.lineLocked(fmt.Sprintf("%s: part(s) %s of this shard done (%s)", r.Workload.Name, joinInts(r.ShardParts), tally(p.last)))
	case o == nil:
		p.lineLocked(fmt.Sprintf("%s: FAIL (did not run)", r.Workload.Name))
	case r.Passed():
		p.lineLocked(fmt.Sprintf("%s: pass (%s; %s)", r.Workload.Name, o.Status, tally(p.last)))
	default:
		p.lineLocked(fmt.Sprintf("%s: FAIL (%s; %s)", r.Workload.Name, o.Status, tally(p.last)))
	}
	p.last = harness.Progress{}
}

func joinInts(xs []int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprint(x)
	}
	return strings.Join(parts, ",")
}

// workRoot finds the root of the project the working directory is inside,
// as go finds a module (the nearest go.mod) or else git a work tree (the
// nearest .git; live.go's repoRoot, where the archive goes, looks for .git
// alone): ok only when that root is an ancestor, not the working directory
// itself, where the defaults already are.
func workRoot() (string, bool) {
	wd, err := os.Getwd()
	if err != nil {
		return "", false
	}
	for _, marker := range []string{"go.mod", ".git"} {
		for dir := wd; ; {
			if _, err := os.Stat(filepath.Join(dir, marker)); err == nil {
				return dir, dir != wd
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	return "", false
}

// plural is "1 word" or "n words".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
