// Package liverun records and replays the live answers of a run outside
// the workloads: one `assay bench CONFIG` or `assay foundry CONFIG` (keyed
// in the archive by the config's path) or one run of a manifest (`assay
// run`, `resume`, `call`; keyed by the manifest's key). It puts the same
// harness.Recording the workloads use in front of the live backends,
// verifies the evidence offline before anything is archived, and says
// which live requests the archive could not answer or got no answer.
package liverun

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/algal-assay/assay/engine/bench"
	"github.com/algal-assay/assay/engine/effect"
	"github.com/algal-assay/assay/engine/evidence"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/foundry"
	"github.com/algal-assay/assay/engine/vm"
	"github.com/algal-assay/assay/harness"
	"github.com/algal-assay/assay/harness/archive"
	"github.com/algal-assay/assay/harness/workload"
)

// Reported is an error already printed on stderr: the command exits 1
// and prints nothing more.
type Reported struct{ Err error }

func (r *Reported) Error() string { return r.Err.Error() }
func (r *Reported) Unwrap() error { return r.Err }

// Archive is who answers live backends: the mode and the archive
// directory, and the command line that records what is missing.
type Archive struct {
	Mode    archive.Mode
	Dir     string
	Command string
	// Stderr receives what a person is told: the requests the archive
	// lacked or that got no answer, and what was recorded.
	Stderr io.Writer
}

// ConfigRun is one bench or foundry config run with live executors.
type ConfigRun struct {
	Archive
	rec     *harness.Recording
	display string // the config as messages and the archive name it
	specs   []string
}

// OpenConfig opens the recording of the config at path when any of specs
// is live, and returns wb's runner admitting it; otherwise the runner is
// wb itself and the run is nil.
func OpenConfig(a Archive, path string, specs []string, wb *vm.Workbench) (*ConfigRun, evidence.Runner, error) {
	if !slices.ContainsFunc(specs, effect.LiveSpec) {
		return nil, wb, nil
	}
	display := workload.DisplayPath(path)
	rec, err := harness.NewRecording(display, nil, harness.RecordOptions{Mode: a.Mode, Archive: a.Dir, Env: wb.Getenv})
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
	return &ConfigRun{Archive: a, rec: rec, display: display, specs: specs}, runner, nil
}

// Concurrency is the asked case concurrency, else enough to keep the live
// backends' request slots busy.
func (cr *ConfigRun) Concurrency(asked int) int {
	if asked > 0 || cr == nil {
		return asked
	}
	return max(evidence.DefaultConcurrency(), cr.rec.Concurrency(cr.specs))
}

// Finish ends a config run: could-not-replay when the archive lacked
// answers; otherwise, under --record missing or all, the report (doc: an
// algal.bench.v1, algal.foundry.v1 or algal.search.v1 value; nil when
// nothing may be recorded, as for an exhausted habitat budget, which
// promotes nothing) is verified offline and only then are the live
// answers of runs added to the archive.
func (cr *ConfigRun) Finish(ctx context.Context, wb *vm.Workbench, doc map[string]any, runs []harness.RecordedRun) error {
	if cr == nil {
		return nil
	}
	if e := cr.rec.Placed(wb, runs, cr.display, cr.Command); e != nil {
		// Every line names the system (or candidate) and case that asked.
		fmt.Fprintf(cr.Stderr, "assay: %s\n", e.Error())
		return &Reported{&fault.Error{Code: harness.CodeCouldNotReplay, Err: e}}
	}
	if cr.rec.Mode() == archive.None || doc == nil {
		return nil
	}
	v, err := verifyDocument(ctx, doc, wb)
	if err != nil {
		return err
	}
	if !v.OK {
		return notRecorded(cr.display, v.Mismatches)
	}
	if err := cr.rec.RecordRuns(wb, runs, time.Now()); err != nil {
		return err
	}
	cr.recorded(cr.rec, cr.display)
	return nil
}

// verifyDocument verifies a bench, foundry or search report offline.
func verifyDocument(ctx context.Context, doc map[string]any, wb *vm.Workbench) (*evidence.Verification, error) {
	if doc["contract"] == bench.ReportContract {
		return bench.Verify(ctx, doc, wb)
	}
	return foundry.VerifyDocument(ctx, doc, wb) // a foundry or search report
}

// Stopped explains a config run the engine stopped with err before it
// made a report (a foundry generator that failed): when the cause is a
// live request the archive could not answer, or one that got no answer,
// that is the error, with the command that asks again; otherwise err.
func (cr *ConfigRun) Stopped(wb *vm.Workbench, err error) error {
	if cr == nil {
		return err
	}
	if e := cr.replayed(cr.rec, cr.display); e != nil {
		return e
	}
	if e := cr.failed(cr.rec, wb, nil, cr.display); e != nil {
		return e
	}
	return err
}

// Failures ends a config run whose report was printed: exit 1 naming
// every live request of runs that got no answer (their runs were not
// archived).
func (cr *ConfigRun) Failures(wb *vm.Workbench, runs []harness.RecordedRun) error {
	if cr == nil {
		return nil
	}
	return cr.failed(cr.rec, wb, runs, cr.display)
}

// failed reports the live requests that got no answer (their runs were
// not archived) on stderr, naming each.
func (a Archive) failed(rec *harness.Recording, st evidence.Store, runs []harness.RecordedRun, display string) error {
	if fe := rec.Failed(st, runs, display, a.Command); fe != nil {
		fmt.Fprintf(a.Stderr, "assay: %s\n", fe.Error())
		return &Reported{&fault.Error{Code: harness.CodeLiveFailed, Err: fe}}
	}
	return nil
}

// replayed reports could-not-replay on stderr, with the command that
// records the missing answers.
func (a Archive) replayed(rec *harness.Recording, display string) error {
	if rerr := rec.ReplayError(display, a.Command); rerr != nil {
		fmt.Fprintf(a.Stderr, "assay: %s\n", rerr.Error())
		return &Reported{rerr}
	}
	return nil
}

func notRecorded(display string, problems []string) error {
	return &fault.Error{Code: fault.VerifyFailed, Message: fmt.Sprintf("%s: nothing recorded: the evidence does not verify: %s", display, strings.Join(problems, "; "))}
}

func (a Archive) recorded(rec *harness.Recording, display string) {
	fmt.Fprintf(a.Stderr, "assay: %d live request(s) went to the server; the answers of %s recorded in %s\n", rec.Live(), display, rec.Dir())
}
