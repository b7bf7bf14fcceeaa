package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sync"

	"github.com/algal-assay/assay/engine/bench"
	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/effect"
	"github.com/algal-assay/assay/engine/evidence"
	"github.com/algal-assay/assay/engine/foundry"
	"github.com/algal-assay/assay/harness/archive"
	"github.com/algal-assay/assay/harness/gate"
	"github.com/algal-assay/assay/harness/parts"
	"github.com/algal-assay/assay/harness/repeats"
	"github.com/algal-assay/assay/harness/rundir"
	"github.com/algal-assay/assay/harness/workload"
	"github.com/algal-assay/assay/runrecord"
)

// The phase roster every workload run follows (phase 2 is skipped for a
// bench: its systems are always named in the workload).
const (
	PhaseCompile   = 1
	PhaseSource    = 2
	PhaseEvaluate  = 3
	PhaseVerify    = 4
	PhaseSummarize = 5

	SourceFiles     = "files"
	SourceGenerator = "generator"
)

// Options are what a run needs from its host. Runner and Store are
// injected so the harness never depends on how organisms execute.
type Options struct {
	Runner evidence.Runner
	Store  evidence.Store
	// Out is the runs root; the run directory is Out/<workload>/<slug>.
	// Empty means "runs".
	Out string
	// AssayDirs are the directories besides Out that Assay itself writes
	// or takes evidence from during the run (the store, a merge's shard
	// directories). Untracked files under them are not changes to the
	// checkout the workload was read from, so, like Out, they leave
	// foundry_modified unset: a store inside the checkout would otherwise
	// mark every run after the first as made from a modified tree.
	AssayDirs    []string
	Concurrency  int
	StrictSplits bool
	// Clock stamps the run record (nil: time.Now). Reports never see it.
	Clock runrecord.Clock
	// HandleSignals turns SIGINT/SIGTERM into a cancelled record
	// (runrecord.CancelOnSignal) for the duration of the run.
	HandleSignals bool
	// OnProgress, when set, is called after each case run, from any
	// goroutine.
	OnProgress func(Progress)
	// Record says who answers live backends: none (the default:
	// only the archive), missing or all; see package archive.
	Record archive.Mode
	// Archive is the archive directory (default archive.DefaultDir).
	Archive string
	// Env reads the variables and keys of live backends (nil:
	// os.LookupEnv).
	Env effect.Env
	// Reports, when set, supply the reports of a run in parts' parts
	// instead of running them (`assay ci merge`; shard.go).
	Reports parts.Reports
	// Repeats, when set, overrides the workload's repeats (`--repeats`).
	Repeats int
	// Fresh runs every part of a bench run in parts, ignoring the finished
	// parts an unfinished run of the same inputs left (package parts);
	// their staging directories are removed as any leftover.
	Fresh bool
}

// Progress reports runs done: one run is one contender (system or
// candidate) on one case. Total is 0 when it is not known yet (a foundry
// whose population comes from a generator). Passed and Failed tally the
// judged case runs (a generator run counts in Done only).
type Progress struct {
	Workload       string
	Done, Total    int
	Passed, Failed int
	// Reused counts the runs of Done taken from the finished parts of an
	// unfinished earlier run rather than run (package parts).
	Reused int
}

// Outcome is everything a run produced.
type Outcome struct {
	Workload *workload.Workload
	Compiled *workload.Compiled
	// RunDir is the final run directory (set once the run ends).
	RunDir string
	// Status is the run record's final status.
	Status  string
	Bench   *bench.Report
	Foundry *foundry.Result
	// Verification merges the engine's verification of the report (or
	// exhausted account) with the harness's scripted-alignment check.
	Verification *Verification
	Gates        []gate.Result
	// Warnings are admission findings that do not fail the run (split
	// leakage without --strict-splits).
	Warnings []string
	// Notes say what the run found that is neither a failure nor a risk
	// (an identical complete run already in place).
	Notes []string
	// Err is why the run failed or was cancelled (also returned by Run).
	Err error
	// Replay is set when the run is could-not-replay: live requests the
	// archive holds no answer for under --record none.
	Replay *ReplayError
	// Repeats aggregates a repeated run's repeats (nil without repeats);
	// Bench and Foundry are then repeat 1's.
	Repeats *repeats.Aggregate
	// UnknownUsage counts, per foundry candidate key, the calls of its
	// train and validation cases whose server reported no token usage:
	// their tokens are unknown, never 0. A bench carries the same in its
	// tallies (bench.Tally.UnknownTokens, UnknownCost). Both are derived
	// from the receipts by the verify phase (and by Rederive).
	UnknownUsage map[string]int
	// Cache holds, per bench system whose live requests reported prompt
	// cache tokens, those tokens and the cost with them priced at the
	// price card's cache rates. The counts come from the servers through
	// the archive (receipts have no field for them), so they are shown
	// where the run is reported (SummaryTable) but not in summary.md,
	// which is re-derived from the evidence alone.
	Cache map[string]CacheTally

	// Resume says which parts of a bench run in parts were taken from an
	// unfinished earlier run (nil when none was found).
	Resume *parts.Resume

	// partDigests are the part reports' digests of a bench run in parts.
	partDigests []string
	// brief is set on a compact outcome (a batch's, Result.compact): the
	// reports are gone and this is what is kept of them.
	brief *outcomeBrief
}

// Verification is the verify phase's result, written to verification.json:
// the engine's verification of the report (its Outcome is never set here).
type Verification = evidence.Verification

// Passed reports whether the workload passed: the run completed, the
// evidence verified, a foundry promoted a candidate (an exhausted habitat
// budget promotes nothing, whatever the gate says) and every gate rule
// held.
func (o *Outcome) Passed() bool {
	if o.exhaustion() != "" {
		return false
	}
	return o.Err == nil && o.Status == runrecord.RunComplete && o.Verification != nil && o.Verification.OK && gate.Passed(o.Gates)
}

// ErrCancelled is returned (wrapped) when a run was cancelled.
var ErrCancelled = errors.New("run cancelled")

// Assembly is the phase roster for w, as written to _assembly.json.
func Assembly(w *workload.Workload) runrecord.Assembly {
	a := runrecord.Assembly{
		Pipeline:       w.Name,
		HarnessName:    "assay-" + string(w.Kind),
		SourceRevision: w.Revision,
		Phases: []runrecord.AssemblyPhase{
			{N: PhaseCompile, Kind: runrecord.KindStep, Skill: "compile-workload", Outputs: []runrecord.Output{{ID: "config", File: workload.ConfigFile}}},
			{N: PhaseSource, Kind: runrecord.KindBranch, Pattern: "candidate-source", Chain: []string{SourceFiles, SourceGenerator}},
			{N: PhaseEvaluate, Kind: runrecord.KindLoop, Skill: "evaluate-contenders", Outputs: []runrecord.Output{{ID: "report", File: rundir.ReportFile}}},
			{N: PhaseVerify, Kind: runrecord.KindStep, Skill: "verify-evidence", Outputs: []runrecord.Output{{ID: "verification", File: rundir.VerificationFile}}},
			{N: PhaseSummarize, Kind: runrecord.KindStep, Skill: "summarize", Outputs: []runrecord.Output{{ID: "gate", File: rundir.GateFile}, {ID: "summary", File: rundir.SummaryFile}, {ID: "report-html", File: ReportHTMLFile}}},
		},
	}
	if w.InParts() {
		return partsAssembly(a)
	}
	return a
}

// Run compiles w, then runs it through the roster in a staging directory
// beside its run directory and finally swaps the staging directory into
// place, so a re-run of the same inputs replaces the previous run
// directory whole. The returned Outcome is non-nil whenever a run record
// was created; the error says why the run failed or was cancelled.
func Run(ctx context.Context, w *workload.Workload, opts Options) (*Outcome, error) {
	return run1(ctx, w, opts, nil)
}

// run1 is Run; release, when set, is called when a run in parts lets go
// of its loaded workload (releaseCases), for a caller that holds it to
// drop its reference too.
func run1(ctx context.Context, w *workload.Workload, opts Options, release func()) (*Outcome, error) {
	if opts.Runner == nil || opts.Store == nil {
		return nil, errors.New("harness: Options.Runner and Options.Store are required")
	}
	out := opts.Out
	if out == "" {
		out = "runs"
	}
	w, err := w.WithRepeats(opts.Repeats)
	if err != nil {
		return nil, err
	}
	c, err := workload.Compile(w, out, foundry.AdmitOptions{StrictSplits: opts.StrictSplits})
	if err != nil {
		return nil, err
	}
	st, from, err := beginStage(ctx, c, opts)
	if err != nil {
		return nil, err
	}
	defer st.Release()
	stage := st.Dir
	// Whether a complete run of these inputs was installed before this one
	// began: an identical result found at install is then an earlier run's,
	// not a concurrent one's that finished first.
	earlier := completeRun(c.RunDir)
	rec, err := runrecord.Create(stage, Assembly(w), runrecord.Meta{RunSlug: c.Slug, FoundryHead: runrecord.FoundryHead(ctx, w.Path), FoundryModified: runrecord.FoundryModified(ctx, w.Path, append([]string{out}, opts.AssayDirs...)...)}, opts.Clock)
	if err != nil {
		return nil, err
	}
	if opts.HandleSignals {
		var stop func()
		ctx, stop = runrecord.CancelOnSignal(ctx, rec, nil)
		defer stop()
	}
	r := &run{w: w, c: c, opts: opts, dir: stage, rec: rec, o: &Outcome{Workload: w, Compiled: c}, release: release, stage: st, resume: from}
	// From here on the run is r: a run in parts swaps in a copy of the
	// workload without its case data once the parts are compiled
	// (releaseCases), and nothing may keep the loaded one alive.
	w, c = nil, nil
	runErr := r.phases(ctx)
	if runErr != nil && runCancelled(ctx, rec) {
		_ = rec.Cancel()
		// What the interrupted phase tripped over (a record already
		// closed, a staging path) is a consequence, not news: the run
		// was cancelled, and its record says so where it is installed.
		runErr = fmt.Errorf("%w: %s", ErrCancelled, r.w.Name)
	}
	if runErr != nil {
		r.o.Err = runErr
	}
	return r.install(ctx, runErr, earlier)
}

// beginStage opens the staging directory of c's run. A bench in parts
// (unless opts say fresh, or the reports come from shards) claims the
// staging directories an unfinished run of the same inputs left, and a
// cancelled or failed run installed where no complete one is, to resume
// from their finished parts.
func beginStage(ctx context.Context, c *workload.Compiled, opts Options) (*rundir.Stage, *parts.Leftovers, error) {
	resume := c.Parts != nil && !opts.Fresh && opts.Reports == nil
	if !resume {
		st, err := rundir.Begin(ctx, c.RunDir)
		return st, nil, err
	}
	st, err := rundir.Claim(ctx, c.RunDir)
	if err != nil {
		return nil, nil, err
	}
	dirs := st.Claimed
	if _, err := os.Stat(c.RunDir); err == nil && !completeRun(c.RunDir) {
		// A cancelled or failed run installed where no complete one was.
		dirs = append(dirs, c.RunDir)
	}
	return st, parts.NewLeftovers(dirs), nil
}

// install ends the run: once its record on disk says how it ended, the
// staging directory replaces the run directory, unless a complete run of
// the same inputs is there that an unfinished run must not replace, or
// the same files are (earlier: installed before this run began).
func (r *run) install(ctx context.Context, runErr error, earlier bool) (*Outcome, error) {
	stage := r.stage.Dir
	r.o.Status = r.rec.Snapshot().Status
	r.o.RunDir = stage
	if err := recordEnded(stage, r.o.Status); err != nil {
		// The disk filled up (or the record was otherwise unwritable) before
		// the record could say how the run ended: a run directory whose
		// record says running would pass for one still in progress, so the
		// run stays in its staging directory.
		r.o.Err = errors.Join(runErr, fmt.Errorf("%v; the run was not installed and stays in %s", err, stage))
		return r.o, r.o.Err
	}
	// Decided under the run directory's lock, so concurrent runs of the
	// same inputs install one after the other.
	d, err := r.stage.Install(context.WithoutCancel(ctx), r.installDecision)
	if err != nil {
		r.o.Err = errors.Join(runErr, err)
		return r.o, r.o.Err
	}
	switch d {
	case rundir.Keep:
		r.o.Warnings = append(r.o.Warnings, fmt.Sprintf("this run is %s, so it was left in %s; the complete run of the same inputs in %s was kept", r.o.Status, stage, r.c.RunDir))
	case rundir.Same:
		r.o.RunDir = r.c.RunDir
		r.o.Notes = append(r.o.Notes, sameRunNote(r.c.RunDir, earlier))
	default:
		r.o.RunDir = r.c.RunDir
	}
	return r.o, runErr
}

// installDecision decides what becomes of the run directory final when
// this run's stage is installed.
func (r *run) installDecision(final string) rundir.Decision {
	if !completeRun(final) {
		return rundir.Replace
	}
	if r.o.Status != runrecord.RunComplete {
		// Same inputs, same slug: the previous run's results still
		// stand, so an unfinished re-run must not replace them.
		return rundir.Keep
	}
	if sameRun(final, r.stage.Dir) {
		return rundir.Same
	}
	return rundir.Replace
}

// sameRunNote says where the identical complete run that was kept came
// from: an earlier run of the same inputs, or one that ran at the same time
// and finished first.
func sameRunNote(dir string, earlier bool) string {
	if earlier {
		return fmt.Sprintf("an identical complete run of the same inputs was already in %s from an earlier run; it was kept", dir)
	}
	return fmt.Sprintf("an identical complete run was already in %s (another run of the same inputs finished first); it was kept", dir)
}

// runCancelled reports whether a run that stopped with an error was
// cancelled rather than failed. The signal handler writes the cancelled
// record before it cancels the context, so a phase can trip over the
// closed record while ctx.Err() is still nil; either sign counts.
func runCancelled(ctx context.Context, rec *runrecord.Recorder) bool {
	return ctx.Err() != nil || rec.Snapshot().Status == runrecord.RunCancelled
}

// completeRun reports whether dir holds a run whose record says complete.
func completeRun(dir string) bool {
	v, err := runrecord.Read(dir, runrecord.Options{})
	return err == nil && v.Record != nil && v.Record.Status == runrecord.RunComplete
}

// recordEnded checks that the record on disk in dir says the run ended,
// with the status the recorder holds.
func recordEnded(dir, status string) error {
	if status == runrecord.RunRunning {
		return fmt.Errorf("the run record could not be written when the run ended")
	}
	v, err := runrecord.Read(dir, runrecord.Options{})
	switch {
	case err != nil:
		return err
	case v.Record == nil:
		return fmt.Errorf("the run record is unreadable: %v", v.Problem)
	case v.Record.Status != status:
		return fmt.Errorf("the run record on disk says %s, not %s", v.Record.Status, status)
	}
	return nil
}

// sameRun reports whether two run directories hold the same files with the
// same bytes, the run record (which carries wall-clock times) aside.
func sameRun(a, b string) bool {
	files := func(dir string) map[string]bool {
		des, err := os.ReadDir(dir)
		if err != nil {
			return nil
		}
		out := map[string]bool{}
		for _, de := range des {
			if de.Name() != runrecord.RecordFile {
				out[de.Name()] = de.Type().IsRegular()
			}
		}
		return out
	}
	fa, fb := files(a), files(b)
	if fa == nil || len(fa) != len(fb) {
		return false
	}
	for name, regular := range fa {
		if !regular || !fb[name] {
			return false
		}
		ba, err1 := os.ReadFile(filepath.Join(a, name))
		bb, err2 := os.ReadFile(filepath.Join(b, name))
		if err1 != nil || err2 != nil || !bytes.Equal(ba, bb) {
			return false
		}
	}
	return true
}

type run struct {
	w    *workload.Workload
	c    *workload.Compiled
	opts Options
	dir  string
	rec  *runrecord.Recorder
	o    *Outcome

	benchCfg   *bench.Config
	foundryCfg *foundry.Config
	live       *Recording
	release    func()
	stage      *rundir.Stage
	resume     *parts.Leftovers
	// recorded are the parts, by number, taken from a shard with a
	// verification record of the bytes taken (takenPart).
	recorded map[int]*parts.Verified
}

// phase runs body as phase n; a failure fails the phase and the run,
// unless the context was cancelled (the caller then cancels the record).
func (r *run) phase(ctx context.Context, n int, body func() error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := r.rec.StartPhase(n); err != nil {
		return err
	}
	if err := body(); err != nil {
		if ctx.Err() == nil {
			_ = r.rec.FailPhase(n, err)
		}
		return err
	}
	return r.rec.DonePhase(n)
}

func (r *run) write(name string, data []byte) error {
	return os.WriteFile(filepath.Join(r.dir, name), data, 0o644)
}

func (r *run) writeJSON(name string, v any) error {
	b, err := JSONFile(v)
	if err != nil {
		return err
	}
	return r.write(name, b)
}

func (r *run) phases(ctx context.Context) error {
	if err := r.phase(ctx, PhaseCompile, r.compile); err != nil {
		return err
	}
	r.releaseCases()
	if r.w.Kind == workload.KindBench {
		if err := r.rec.SkipPhase(PhaseSource); err != nil {
			return err
		}
	} else if err := r.phase(ctx, PhaseSource, func() error {
		member := SourceFiles
		if r.w.Generator != nil {
			member = SourceGenerator
		}
		return r.rec.SelectBranch(PhaseSource, member)
	}); err != nil {
		return err
	}
	if err := r.phase(ctx, PhaseEvaluate, func() error {
		if err := r.startLive(); err != nil {
			return err
		}
		if err := r.evaluate(ctx); err != nil {
			return err
		}
		return r.checkReplay()
	}); err != nil {
		return err
	}
	if err := r.phase(ctx, PhaseVerify, func() error { return r.verify(ctx) }); err != nil {
		return err
	}
	if err := r.phase(ctx, PhaseSummarize, r.summarize); err != nil {
		return err
	}
	if err := r.priceCache(); err != nil {
		return err
	}
	if err := r.recordArchive(); err != nil {
		return err
	}
	if err := r.checkFailed(); err != nil {
		return err
	}
	return r.rec.Complete()
}

// compile writes config.json and the compiled scripted tables, then admits
// the written config exactly as `assay bench run` / `assay foundry run`
// would, from the run directory.
func (r *run) compile() error {
	if r.c.Parts != nil {
		return r.compileParts()
	}
	for _, name := range slices.Sorted(maps.Keys(r.c.Files)) {
		if err := r.write(name, r.c.Files[name]); err != nil {
			return err
		}
		if err := r.rec.AddArtifact(PhaseCompile, "scripted-table", name); err != nil {
			return err
		}
	}
	if err := r.writeJSON(workload.ConfigFile, r.c.Config); err != nil {
		return err
	}
	if err := r.rec.AddArtifact(PhaseCompile, "config", workload.ConfigFile); err != nil {
		return err
	}
	path := filepath.Join(r.dir, workload.ConfigFile)
	var err error
	if r.w.Kind == workload.KindBench {
		r.benchCfg, err = bench.LoadConfig(path)
	} else {
		r.foundryCfg, err = foundry.LoadConfig(path, foundry.AdmitOptions{StrictSplits: r.opts.StrictSplits})
		if err == nil {
			r.o.Warnings = r.foundryCfg.Warnings
		}
	}
	return err
}

// progress counts finished case runs.
type progress struct {
	mu             sync.Mutex
	done, total    int
	passed, failed int
	reused         int
	name           string
	f              func(Progress)
}

// judged counts one judged case run as done, passed or failed: the tally
// and the count move together, so no event shows a case passed before it
// is counted as done.
func (p *progress) judged(passed bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if passed {
		p.passed++
	} else {
		p.failed++
	}
	p.emitLocked()
}

// tick counts one run that is not judged (a generator's) as done.
func (p *progress) tick() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.emitLocked()
}

// emitLocked counts a run done and reports it; the callback runs under the
// lock so events arrive in the order they were counted.
func (p *progress) emitLocked() {
	p.done++
	if p.f == nil {
		return
	}
	ev := Progress{Workload: p.name, Done: p.done, Total: p.total, Passed: p.passed, Failed: p.failed, Reused: p.reused}
	if ev.Total != 0 && ev.Done > ev.Total {
		ev.Total = 0
	}
	p.f(ev)
}

var unsafeName = regexp.MustCompile(`[^a-z0-9-]+`)

func (r *run) evaluate(ctx context.Context) error {
	if r.c.Parts != nil {
		return r.evaluateParts(ctx)
	}
	p := &progress{name: r.w.Name, f: r.opts.OnProgress}
	reps, a, err := repeats.Run(r.w.Name, r.repeats(), r.measure(ctx, p), r.runnerAt)
	if err != nil {
		return err
	}
	r.o.Repeats = a
	first := reps[0]
	r.o.Bench, r.o.Foundry = first.Bench, first.Foundry
	if err := r.writeFirstReport(first); err != nil {
		return err
	}
	return r.writeRepeatReports()
}

// writeFirstReport writes repeat 1's report as report.json with its
// per-contender copies, or its exhausted account as budget.json.
func (r *run) writeFirstReport(ev repeats.Evidence) error {
	name, v := reportFile(ev)
	id := "report"
	if name == rundir.BudgetFile {
		id = "budget"
	} else if err := r.writeContenders(ev.Bench, ev.Foundry); err != nil {
		return err
	}
	if err := r.writeJSON(name, v); err != nil {
		return err
	}
	return r.rec.AddArtifact(PhaseEvaluate, id, name)
}

// verify re-reads the written report (or exhausted account) and verifies
// it against the store, then checks that every case consumed exactly the
// scripted responses it declared.
func (r *run) verify(ctx context.Context) error {
	if r.c.Parts != nil {
		return r.verifyParts(ctx)
	}
	name := rundir.ReportFile
	if r.o.Foundry != nil && r.o.Foundry.Report == nil {
		name = rundir.BudgetFile
	}
	v, err := canon.ReadFile(filepath.Join(r.dir, name), 0)
	if err != nil {
		return err
	}
	others, err := r.repeatReportFiles()
	if err != nil {
		return err
	}
	out, alignErr, err := r.verifyRepeats(ctx, v, others, r.repeatEvidence())
	if err != nil {
		return err
	}
	if alignErr != nil {
		return alignErr
	}
	r.o.Verification = out
	if err := r.writeJSON(rundir.VerificationFile, out.Value()); err != nil {
		return err
	}
	return r.rec.AddArtifact(PhaseVerify, "verification", rundir.VerificationFile)
}

func (r *run) summarize() error {
	r.o.Gates = gate.Judge(r.w, r.o.Bench, r.o.Foundry, r.o.Repeats)
	files, err := SummaryFiles(r.o)
	if err != nil {
		return err
	}
	return r.writeFiles(files)
}

// writeContenders writes the evaluate phase's per-contender copies of the
// report (ContenderFiles), one loop iteration each.
func (r *run) writeContenders(b *bench.Report, f *foundry.Result) error {
	files, err := ContenderFiles(b, f)
	if err != nil {
		return err
	}
	for i := range files {
		it, err := r.rec.NextIteration(PhaseEvaluate)
		if err != nil {
			return err
		}
		files[i].Iteration = it
	}
	return r.writeFiles(files)
}

// writeFiles writes rendered files and lists each in the record.
func (r *run) writeFiles(files []RenderedFile) error {
	for _, f := range files {
		if err := r.write(f.Name, f.Data); err != nil {
			return err
		}
		var err error
		if f.Iteration > 0 {
			err = r.rec.AddLoopArtifact(f.Phase, f.Iteration, f.ID, f.Name)
		} else {
			err = r.rec.AddArtifact(f.Phase, f.ID, f.Name)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
