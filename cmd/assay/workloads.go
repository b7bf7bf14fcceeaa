package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/algal-assay/assay/harness"
	"github.com/algal-assay/assay/harness/console"
	"github.com/algal-assay/assay/harness/job"
	"github.com/algal-assay/assay/harness/parts"
	"github.com/algal-assay/assay/harness/workload"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
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
	if err := f.validate(); err != nil {
		return err
	}
	record, archiveDir, err := f.live.resolve()
	if err != nil {
		return err
	}
	places := f.atRoot(c, paths)
	files, err := job.Discover(places.Paths)
	if err != nil {
		return err
	}
	shard, err := f.shardOf()
	if err != nil {
		return err
	}
	results, stopErr, err := job.Run(ctx, files, places.Dir, harness.Options{
		Out: places.Out, Concurrency: f.concurrency, StrictSplits: f.strictSplits,
		Record: record, Archive: archiveDir, Repeats: f.repeats, Fresh: f.fresh,
	}, shard, c.progress(f.report.json))
	if err != nil {
		return err
	}
	failed, err := job.Report{JSON: f.report.json, JUnit: f.report.junit}.Write(c.stdout, results, len(files), stopErr)
	if err != nil {
		return err
	}
	if failed > 0 {
		return reported(fmt.Errorf("%d workloads failed", failed))
	}
	return nil
}

// validate checks the flags no parser checks.
func (f workloadFlags) validate() error {
	if f.concurrency < 0 {
		return usagef("--concurrency must not be negative")
	}
	if f.repeats < 0 || f.repeats > workload.MaxRepeats {
		return usagef("--repeats must be from 1 to %d (0: each workload's own)", workload.MaxRepeats)
	}
	return nil
}

// atRoot places the job at the repository root when run from inside
// one (job.Places.AtRoot), saying so on stderr; an explicit --dir or
// --out stays as given.
func (f *workloadFlags) atRoot(c *cli, paths []string) job.Places {
	places, root := job.Places{Dir: f.dir, Out: f.out, Paths: paths}.AtRoot(f.dirSet, f.outSet)
	if root != "" {
		fmt.Fprintf(c.stderr, "assay: the repository root is %s: runs/ and .algal/ are written there\n", root)
	}
	return places
}

// shardOf parses --shard (nil: run everything).
func (f workloadFlags) shardOf() (*parts.Shard, error) {
	if f.shard == "" {
		return nil, nil
	}
	s, err := parts.ParseShard(f.shard)
	if err != nil {
		return nil, usagef("%v", err)
	}
	return &s, nil
}

// progress is the job's display on stderr. On a terminal a failure reads
// as a sentence, and not at all when the summary on the same terminal
// says it (each message once).
func (c *cli) progress(jsonReport bool) *console.Progress {
	disp := console.NewProgress(c.stderr)
	switch {
	case c.readableErr() && c.readable() && !jsonReport:
	case c.readableErr():
		disp.Failure = func(w io.Writer, code, message string) { console.WriteSentence(w, code, message, "") }
	default:
		disp.Failure = console.WriteError
	}
	return disp
}
