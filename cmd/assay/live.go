package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/algal-assay/assay/engine/bench"
	"github.com/algal-assay/assay/engine/evidence"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/foundry"
	"github.com/algal-assay/assay/engine/vm"
	"github.com/algal-assay/assay/harness"
	"github.com/algal-assay/assay/harness/archive"
	"github.com/spf13/pflag"
)

// liveFlags choose who answers live model backends (openai:<model>).
type liveFlags struct {
	record  string
	archive string
}

func addLiveFlags(fs *pflag.FlagSet, f *liveFlags) {
	fs.StringVar(&f.record, "record", "none", "live backends: none (only the archive answers), missing (ask the server what the archive lacks) or all (ask the server everything)")
	fs.StringVar(&f.archive, "archive", "", "receipt archive `DIR` live answers are replayed from and recorded to (default receipts/ at the repository root)")
}

// resolve checks the mode and finds the archive. Recording is refused in
// CI: CI replays what a person recorded and committed, and never holds a
// key.
func (f liveFlags) resolve() (archive.Mode, string, error) {
	mode, err := archive.ParseMode(f.record)
	if err != nil {
		return "", "", usagef("%v", err)
	}
	if mode != archive.None && os.Getenv("CI") == "true" {
		return "", "", usagef("--record %s: CI is set; CI replays the committed archive (--record none) and never calls a live model", mode)
	}
	dir := f.archive
	if dir == "" {
		dir = filepath.Join(repoRoot(), archive.DefaultDir)
	}
	return mode, dir, nil
}

// repoRoot is the nearest directory at or above the working directory
// holding .git, else the working directory.
func repoRoot() string {
	wd, err := os.Getwd()
	if err != nil {
		return "."
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return wd
		}
	}
}

// configRun is one `assay bench CONFIG` or `assay foundry CONFIG` with
// live executors: the same harness.Recording workload runs put in front
// of their backends, keyed in the archive by the config's path.
type configRun struct {
	rec        *harness.Recording
	display    string // the config as messages and the archive name it
	invocation string // the command that ran it, without record flags
	specs      []string
}

// openConfigRun checks the record flags and, when any of specs is live
// (openai:), opens the recording and returns wb's runner admitting it;
// otherwise the runner is wb itself and the run is nil.
func (f liveFlags) openConfigRun(verb, config string, specs []string, wb *vm.Workbench) (*configRun, evidence.Runner, error) {
	mode, dir, err := f.resolve()
	if err != nil {
		return nil, nil, err
	}
	if !slices.ContainsFunc(specs, harness.LiveSpec) {
		return nil, wb, nil
	}
	display := harness.DisplayPath(config)
	rec, err := harness.NewRecording(display, nil, harness.RecordOptions{Mode: mode, Archive: dir, Env: wb.Getenv})
	if err != nil {
		return nil, nil, err
	}
	if rec.Signatures, err = vm.ToolSignatures(wb.Tools); err != nil {
		return nil, nil, err
	}
	runner, err := rec.Runner(wb)
	if err != nil {
		return nil, nil, err
	}
	return &configRun{rec: rec, display: display, invocation: "assay " + verb + " " + display, specs: specs}, runner, nil
}

// concurrency is the asked case concurrency, else enough to keep the
// live backends' request slots busy.
func (cr *configRun) concurrency(asked int) int {
	if asked > 0 || cr == nil {
		return asked
	}
	return max(evidence.DefaultConcurrency(), cr.rec.Concurrency(cr.specs))
}

// finish ends a config run with live executors: could-not-replay when the
// archive lacked answers (reported on stderr with the command that
// records them, exit 1); otherwise, under --record missing or all, the
// report's evidence is verified offline and only then are the live
// answers added to the archive.
func (cr *configRun) finish(c *cli, ctx context.Context, wb *vm.Workbench, b *bench.Report, fr *foundry.Result) error {
	if cr == nil {
		return nil
	}
	if rerr := cr.rec.ReplayError(cr.display, cr.invocation); rerr != nil {
		fmt.Fprintf(c.stderr, "assay: %s\n", rerr.Error())
		return reported(rerr)
	}
	if cr.rec.Mode() == archive.None || fr != nil && fr.Report == nil {
		// Nothing to record: a replay, or an exhausted habitat budget,
		// which promotes nothing.
		return nil
	}
	var ok bool
	var problems []string
	if b != nil {
		v, err := bench.Verify(ctx, b.Value(), wb)
		if err != nil {
			return err
		}
		ok, problems = v.OK, v.Mismatches
	} else {
		v, err := foundry.VerifyFile(ctx, fr.Report.Value(), wb)
		if err != nil {
			return err
		}
		ok, problems = v.OK, v.Mismatches
	}
	if !ok {
		return &fault.Error{Code: fault.VerifyFailed, Message: fmt.Sprintf("%s: nothing recorded: the report does not verify: %s", cr.display, strings.Join(problems, "; "))}
	}
	if err := cr.rec.Record(wb, b, fr, time.Now()); err != nil {
		return err
	}
	fmt.Fprintf(c.stderr, "assay: %d live request(s) answered by the server; %s recorded in %s\n", cr.rec.Live(), cr.display, cr.rec.Dir())
	return nil
}
