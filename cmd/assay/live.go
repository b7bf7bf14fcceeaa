package main

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/algal-assay/assay/engine/bench"
	"github.com/algal-assay/assay/engine/effect"
	"github.com/algal-assay/assay/engine/evidence"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/foundry"
	"github.com/algal-assay/assay/engine/manifest"
	"github.com/algal-assay/assay/engine/store"
	"github.com/algal-assay/assay/engine/vm"
	"github.com/algal-assay/assay/harness"
	"github.com/algal-assay/assay/harness/archive"
	"github.com/spf13/cobra"
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
	rec     *harness.Recording
	display string // the config as messages and the archive name it
	command string // the command that records what is missing
	specs   []string
}

// openConfigRun checks the record flags and, when any of specs is live
// (openai:), opens the recording and returns wb's runner admitting it;
// otherwise the runner is wb itself and the run is nil.
func (f liveFlags) openConfigRun(cmd *cobra.Command, args []string, specs []string, wb *vm.Workbench) (*configRun, evidence.Runner, error) {
	mode, dir, err := f.resolve()
	if err != nil {
		return nil, nil, err
	}
	if !slices.ContainsFunc(specs, effect.LiveSpec) {
		return nil, wb, nil
	}
	display := harness.DisplayPath(args[0])
	rec, err := harness.NewRecording(display, nil, harness.RecordOptions{Mode: mode, Archive: dir, Env: wb.Getenv})
	if err != nil {
		return nil, nil, err
	}
	if rec.Signatures, err = vm.ToolSignatures(wb.Tools); err != nil {
		return nil, nil, err
	}
	runner, err := rec.Runner(wb, 1)
	if err != nil {
		return nil, nil, err
	}
	return &configRun{rec: rec, display: display, command: recordCommand(cmd, args), specs: specs}, runner, nil
}

// recordCommand is the command line that ran cmd, as a person types it
// again from the same directory, asking the server only what the archive
// lacks: the command, its arguments, every flag that was set, and
// --record missing.
func recordCommand(cmd *cobra.Command, args []string) string {
	parts := []string{cmd.CommandPath()}
	for _, a := range args {
		parts = append(parts, shellWord(a))
	}
	cmd.Flags().Visit(func(fl *pflag.Flag) {
		switch {
		case fl.Name == "record":
		case fl.Value.Type() == "bool":
			if fl.Value.String() == "true" {
				parts = append(parts, "--"+fl.Name)
			} else {
				parts = append(parts, "--"+fl.Name+"=false")
			}
		default:
			vals := []string{fl.Value.String()}
			if sv, ok := fl.Value.(pflag.SliceValue); ok {
				vals = sv.GetSlice()
			}
			for _, v := range vals {
				parts = append(parts, "--"+fl.Name, shellWord(v))
			}
		}
	})
	return strings.Join(append(parts, "--record", "missing"), " ")
}

// shellWord quotes s for a POSIX shell when it holds anything beyond
// the characters paths and specs usually have.
func shellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:=@%+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
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
// archive lacked answers; otherwise, under --record missing or all, the
// report (doc: an algal.bench.v1, algal.foundry.v1 or algal.search.v1
// value; nil when nothing may be recorded, as for an exhausted habitat
// budget, which promotes nothing) is verified offline and only then are
// the live answers of runs added to the archive.
func (cr *configRun) finish(c *cli, ctx context.Context, wb *vm.Workbench, doc map[string]any, runs []harness.RecordedRun) error {
	if cr == nil {
		return nil
	}
	if e := cr.rec.Placed(wb, runs, cr.display, cr.command); e != nil {
		// Every line names the system (or candidate) and case that asked.
		fmt.Fprintf(c.stderr, "assay: %s\n", e.Error())
		return reported(&fault.Error{Code: harness.CodeCouldNotReplay, Err: e})
	}
	if cr.rec.Mode() == archive.None || doc == nil {
		return nil
	}
	var v *evidence.Verification
	var err error
	if doc["contract"] == bench.ReportContract {
		v, err = bench.Verify(ctx, doc, wb)
	} else {
		v, err = foundry.VerifyDocument(ctx, doc, wb) // a foundry or search report
	}
	if err != nil {
		return err
	}
	if !v.OK {
		return notRecorded(cr.display, v.Mismatches)
	}
	if err := cr.rec.RecordRuns(wb, runs, time.Now()); err != nil {
		return err
	}
	recorded(c, cr.rec, cr.display)
	return nil
}

// stopped explains a config run the engine stopped with err before it
// made a report (a foundry generator that failed): when the cause is a
// live request the archive could not answer, or one that got no answer,
// that is the error, with the command that asks again; otherwise err.
func (cr *configRun) stopped(c *cli, wb *vm.Workbench, err error) error {
	if cr == nil {
		return err
	}
	if e := replayed(c, cr.rec, cr.display, cr.command); e != nil {
		return e
	}
	if e := failed(c, cr.rec, wb, nil, cr.display, cr.command); e != nil {
		return e
	}
	return err
}

// failures ends a config run whose report was printed: exit 1 naming
// every live request of runs that got no answer (their runs were not
// archived).
func (cr *configRun) failures(c *cli, wb *vm.Workbench, runs []harness.RecordedRun) error {
	if cr == nil {
		return nil
	}
	return failed(c, cr.rec, wb, runs, cr.display, cr.command)
}

// failed reports the live requests that got no answer (their runs were
// not archived) on stderr, naming each, and exits 1.
func failed(c *cli, rec *harness.Recording, st evidence.Store, runs []harness.RecordedRun, display, command string) error {
	if fe := rec.Failed(st, runs, display, command); fe != nil {
		fmt.Fprintf(c.stderr, "assay: %s\n", fe.Error())
		return reported(&fault.Error{Code: harness.CodeLiveFailed, Err: fe})
	}
	return nil
}

// replayed reports could-not-replay on stderr, with the command that
// records the missing answers, and exits 1.
func replayed(c *cli, rec *harness.Recording, display, command string) error {
	if rerr := rec.ReplayError(display, command); rerr != nil {
		fmt.Fprintf(c.stderr, "assay: %s\n", rerr.Error())
		return reported(rerr)
	}
	return nil
}

func notRecorded(display string, problems []string) error {
	return &fault.Error{Code: fault.VerifyFailed, Message: fmt.Sprintf("%s: nothing recorded: the evidence does not verify: %s", display, strings.Join(problems, "; "))}
}

func recorded(c *cli, rec *harness.Recording, display string) {
	fmt.Fprintf(c.stderr, "assay: %d live request(s) went to the server; the answers of %s recorded in %s\n", rec.Live(), display, rec.Dir())
}

// manifestRun is one run of a manifest (run, resume, call) whose named
// executors include live ones: the archive keys its receipts under the
// manifest's key.
type manifestRun struct {
	rec     *harness.Recording
	m       *manifest.Manifest
	command string
}

// openManifestRun checks the record flags and opens the recording when a
// named executor (--executor, --executors) is live; nil otherwise.
func (f *runFlags) openManifestRun(cmd *cobra.Command, args []string, m *manifest.Manifest) (*manifestRun, error) {
	mode, dir, err := f.live.resolve()
	if err != nil {
		return nil, err
	}
	named, err := f.namedSpecs()
	if err != nil {
		return nil, err
	}
	if !slices.ContainsFunc(slices.Collect(maps.Values(named)), effect.LiveSpec) {
		return nil, nil
	}
	rec, err := harness.NewRecording(m.Key, nil, harness.RecordOptions{Mode: mode, Archive: dir})
	if err != nil {
		return nil, err
	}
	if rec.Signatures, err = toolSignatures(f.tools); err != nil {
		return nil, err
	}
	return &manifestRun{rec: rec, m: m, command: recordCommand(cmd, args)}, nil
}

// recording is the run's recording (nil: no live executor).
func (mr *manifestRun) recording() *harness.Recording {
	if mr == nil {
		return nil
	}
	return mr.rec
}

// finish ends a manifest run: could-not-replay when the archive lacked
// answers; under --record missing or all, the receipt is replayed offline
// and, when it holds, archived as contender (run, resume, call) on
// caseID.
func (mr *manifestRun) finish(c *cli, st store.Store, receipt map[string]any, tools string, contender, caseID string) error {
	if mr == nil {
		return nil
	}
	if err := replayed(c, mr.rec, mr.m.Key, mr.command); err != nil {
		return err
	}
	if mr.rec.Mode() == archive.None {
		return nil
	}
	wb := &vm.Workbench{Store: st}
	if tools != "" {
		var err error
		if wb.Tools, err = effect.LoadTools(tools); err != nil {
			return err
		}
	}
	mismatches, err := wb.Replay(context.Background(), receipt, mr.m)
	if err != nil {
		return err
	}
	if len(mismatches) > 0 {
		return notRecorded(mr.m.Key, mismatches)
	}
	ref, err := st.Put(store.Runs, receipt)
	if err != nil {
		return err
	}
	runs := []harness.RecordedRun{{Contender: contender, Case: caseID, Receipt: ref, Repeat: 1}}
	if err := mr.rec.RecordRuns(wb, runs, time.Now()); err != nil {
		return err
	}
	recorded(c, mr.rec, mr.m.Key)
	return failed(c, mr.rec, wb, runs, mr.m.Key, mr.command)
}
