package harness

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"sync"

	"github.com/algal-assay/assay/engine/bench"
	"github.com/algal-assay/assay/engine/evidence"
	"github.com/algal-assay/assay/harness/gate"
	"github.com/algal-assay/assay/harness/rundir"
	"github.com/algal-assay/assay/harness/workload"
	"github.com/algal-assay/assay/report"
	"github.com/algal-assay/assay/runrecord"
)

// A bench run in parts follows the same roster as any run, part by part:
// compile writes every part's config and tables; evaluate records one
// part per iteration and writes the reports in part order, with at most
// partsAhead parts in flight, so a part's results are released once
// written; verify reads the parts back,
// verifies them and writes aggregate.json with verification.json;
// summarize reads the aggregate.

// partsAssembly is the roster of a run in parts: evaluate's outputs are
// its iterations' part reports, and verify writes the aggregate.
func partsAssembly(a runrecord.Assembly) runrecord.Assembly {
	for i := range a.Phases {
		switch a.Phases[i].N {
		case PhaseEvaluate:
			a.Phases[i].Outputs = nil
		case PhaseVerify:
			a.Phases[i].Outputs = []runrecord.Output{{ID: "aggregate", File: workload.AggregateFile}, {ID: "verification", File: rundir.VerificationFile}}
		}
	}
	return a
}

// compileParts writes each part's config and tables, one record write
// per part.
func (r *run) compileParts() error {
	for _, p := range r.c.Parts {
		files, err := r.c.PartFiles(p)
		if err != nil {
			return err
		}
		var rows []runrecord.Artifact
		for _, name := range slices.Sorted(maps.Keys(files)) {
			if err := r.write(name, files[name]); err != nil {
				return err
			}
			id := "scripted-table"
			if name == p.ConfigFile() {
				id = "config"
			}
			rows = append(rows, runrecord.Artifact{ID: id, File: name})
		}
		if err := r.rec.AddArtifacts(PhaseCompile, 0, rows); err != nil {
			return err
		}
	}
	return nil
}

// partsAhead is how many parts of a run in parts may be in flight at
// once (running, or done and waiting for the parts before them to be
// written): enough for the next part to fill the slots the current one's
// tail leaves idle, and a constant, so memory stays flat.
const partsAhead = 3

// evaluateParts runs the parts, each admitted from the config the compile
// phase wrote, exactly as `assay bench run` would admit it. Consecutive
// parts overlap: up to partsAhead run at once on one pool of
// r.concurrency() slots, an earlier part served first (bench.Slots), so
// the tail of a part whose last system runs alone leaves no slot idle.
// Everything else happens in part order, once the part is done: its
// iteration, its report, its record row. So the run directory, the store
// and the record are those of one part after another, and a part that
// fails ends the run with its error once the parts before it are written,
// as it would one part at a time; the parts after it are cancelled and
// dropped.
func (r *run) evaluateParts(ctx context.Context) error {
	p := &progress{name: r.w.Name, f: r.opts.OnProgress, total: len(r.w.Systems) * len(r.w.Cases)}
	runner, err := r.runnerAt(1)
	if err != nil {
		return err
	}
	f := r.newPartFlight(p, runner)
	f.begin = func() (int, error) { return r.rec.NextIteration(PhaseEvaluate) }
	f.put = func(job *partJob, it int) error {
		var err error
		if job.raw != nil {
			// The bytes the resume check (or the shard's verification
			// record) verified, which the verify phase takes as verified
			// only while they are these.
			if job.id == ReusedPartReport {
				p.reusedPart(job.report)
			}
			err = r.write(job.part.ReportFile(), job.raw)
		} else {
			// The verify phase checks a taken report like a run one.
			err = r.writeJSON(job.part.ReportFile(), job.report)
		}
		if err != nil {
			return err
		}
		return r.rec.AddLoopArtifact(PhaseEvaluate, it, job.id, job.part.ReportFile())
	}
	if err := f.run(ctx, r.c.Parts); err != nil {
		return err
	}
	if s := r.resume; s != nil && len(s.res.Reused)+len(s.res.Rejected) > 0 {
		r.o.Resume = &s.res
		r.o.Notes = append(r.o.Notes, s.res.Note(len(r.c.Parts)))
	}
	if r.stage != nil {
		// Every part's report is in this stage now; a removal that fails
		// leaves a leftover the next run claims or removes.
		_ = r.stage.DropClaimed()
	}
	return nil
}

// newPartFlight is a flight of r's parts on runner, its begin and put
// left to the caller.
func (r *run) newPartFlight(p *progress, runner evidence.Runner) *partFlight {
	n := r.concurrency()
	if n <= 0 {
		n = evidence.DefaultConcurrency()
	}
	f := &partFlight{r: r, p: p, runner: runner, slots: bench.NewSlots(n), ahead: partsAhead}
	if n == 1 {
		f.ahead = 1 // one case at a time is one part at a time
	}
	return f
}

// run starts parts in order, at most f.ahead unwritten at once, and
// finishes each in order; it returns once none is running.
func (f *partFlight) run(ctx context.Context, parts []workload.Part) error {
	ctx, cancel := context.WithCancel(ctx)
	defer f.wg.Wait()
	defer cancel()
	var queue []*partJob
	for i := 0; ; i++ {
		more := i < len(parts) && !f.stopped()
		for len(queue) > 0 && (len(queue) >= f.ahead || !more) {
			if err := f.finish(queue[0]); err != nil {
				return err
			}
			queue = queue[1:]
		}
		if !more {
			return nil
		}
		queue = append(queue, f.start(ctx, parts[i]))
	}
}

// partFlight is the parts of a run in flight.
type partFlight struct {
	r      *run
	p      *progress
	runner evidence.Runner
	slots  *bench.Slots
	ahead  int
	wg     sync.WaitGroup
	// begin is called in part order before a part's outcome is taken (a
	// record's next iteration); put writes a done part's report.
	begin func() (int, error)
	put   func(job *partJob, it int) error

	mu     sync.Mutex
	jobs   []*partJob // started, in part order
	failed bool
}

// partJob is one part in flight: taken (from a shard or an unfinished
// run) when started, or running until done is closed.
type partJob struct {
	part   workload.Part
	id     string // the record's artifact id of its report
	report map[string]any
	raw    []byte // a reused report's bytes as checked
	err    error
	done   chan struct{}
	cancel context.CancelFunc
}

// stopped says a part has failed: no later part starts.
func (f *partFlight) stopped() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.failed
}

// fail records job's failure and cancels the parts after it, whose
// results a run stopping at job would never see.
func (f *partFlight) fail(job *partJob, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	job.err, f.failed = err, true
	for _, j := range f.jobs {
		if j.part.N > job.part.N {
			j.cancel()
		}
	}
}

// start takes part's report or starts running it.
func (f *partFlight) start(ctx context.Context, part workload.Part) *partJob {
	r := f.r
	jctx, cancel := context.WithCancel(ctx)
	job := &partJob{part: part, id: "part-report", done: make(chan struct{}), cancel: cancel}
	f.mu.Lock()
	f.jobs = append(f.jobs, job)
	f.mu.Unlock()
	var err error
	job.report, job.raw, err = r.takenPart(part)
	if err == nil && job.report == nil && r.resume != nil {
		var cfg *bench.Config
		if cfg, err = bench.LoadConfig(filepath.Join(r.dir, part.ConfigFile())); err == nil {
			var l *leftover
			if l, err = r.resume.take(ctx, r.c, part, cfg, r.opts.Store); l != nil {
				job.report, job.raw, job.id = l.value, l.raw, ReusedPartReport
			}
		}
	}
	if err == nil && job.report == nil && r.opts.Reports != nil {
		err = fmt.Errorf("%s of %s: no shard holds its report", part.Name(), r.w.Name)
	}
	if err != nil || job.report != nil {
		if err != nil {
			f.fail(job, err)
		}
		close(job.done)
		return job
	}
	cfg, err := bench.LoadConfig(filepath.Join(r.dir, part.ConfigFile()))
	if err != nil {
		f.fail(job, err)
		close(job.done)
		return job
	}
	f.wg.Go(func() {
		defer close(job.done)
		rep, err := bench.Run(jctx, cfg, f.runner, bench.Options{
			Concurrency: r.concurrency(), Slots: f.slots, Rank: part.N,
			OnResult: func(_, _ string, passed bool) { f.p.judged(passed) },
		})
		if err != nil {
			f.fail(job, err)
			return
		}
		job.report = rep.Value()
	})
	return job
}

// finish waits for job and puts its report, or returns its error.
func (f *partFlight) finish(job *partJob) error {
	it, err := f.begin()
	if err != nil {
		return err
	}
	<-job.done
	job.cancel()
	if job.err != nil {
		return job.err
	}
	if err := f.put(job, it); err != nil {
		return err
	}
	job.report, job.raw = nil, nil
	return nil
}

// reusedPart counts a reused part's case runs as done.
func (p *progress) reusedPart(report map[string]any) {
	systems, _ := report["systems"].([]any)
	for _, s := range systems {
		cases, _ := s.(map[string]any)["cases"].([]any)
		for _, c := range cases {
			passed, _ := c.(map[string]any)["passed"].(bool)
			p.mu.Lock()
			p.reused++
			p.mu.Unlock()
			p.judged(passed)
		}
	}
}

// verifyParts verifies the written parts and writes the aggregate they
// fold into, then the verification.
func (r *run) verifyParts(ctx context.Context) error {
	opt := deriveOptions{written: true, verified: r.recorded}
	if r.resume != nil {
		opt.verified = r.resume.verified
	}
	d, err := deriveParts(ctx, r.c, r.dir, r.opts.Store, opt)
	if err != nil {
		return err
	}
	r.o.Bench, r.o.partDigests = d.Report, d.Digests
	if err := r.writeJSON(workload.AggregateFile, d.Value); err != nil {
		return err
	}
	if err := r.rec.AddArtifact(PhaseVerify, "aggregate", workload.AggregateFile); err != nil {
		return err
	}
	r.o.Verification = d.Verification
	if err := r.writeJSON(rundir.VerificationFile, d.Verification.Value()); err != nil {
		return err
	}
	return r.rec.AddArtifact(PhaseVerify, "verification", rundir.VerificationFile)
}

// Verdicts says which case verdicts the report of a re-derived run in
// parts keeps (Derived.Bench): its sums, Pareto set and gate verdicts are
// the same either way.
type Verdicts int

const (
	// EveryVerdict keeps every case's verdict (ID, passed, outcome), for a
	// host that compares runs case by case (ci diff).
	EveryVerdict Verdicts = iota
	// GateVerdicts keeps, as the run itself does, only the verdicts its
	// gate messages name, so a verification's memory stays flat in the
	// number of cases.
	GateVerdicts
)

// RederiveParts is Rederive for a bench run in parts: the verification,
// the aggregate and the gate verdicts, re-derived from the part reports in
// dir (c is the workload compiled as the run was), keeping the case
// verdicts keep says. Derived.Aggregate is what aggregate.json must hold.
func RederiveParts(ctx context.Context, c *workload.Compiled, dir string, st evidence.Store, keep Verdicts) (*Derived, error) {
	d, err := deriveParts(ctx, c, dir, st, deriveOptions{allCases: keep == EveryVerdict})
	if err != nil {
		return nil, err
	}
	return &Derived{Bench: d.Report, Verification: d.Verification, Aggregate: d.Value, Gates: gate.EvaluateBench(c.Workload, d.Report), PartDigests: d.Digests}, nil
}

// htmlParts lists an outcome's parts for report.html (nil for a run in
// one part).
func htmlParts(o *Outcome) []report.Part {
	if o.Compiled == nil || o.Compiled.Parts == nil {
		return nil
	}
	w := o.Workload
	out := make([]report.Part, 0, len(o.Compiled.Parts))
	for i, p := range o.Compiled.Parts {
		hp := report.Part{Name: p.Name(), Report: p.ReportFile(),
			Cases:   fmt.Sprintf("%s to %s (%d)", w.Cases[p.CaseFrom].ID, w.Cases[p.CaseTo-1].ID, p.CaseTo-p.CaseFrom),
			Systems: fmt.Sprintf("%s to %s (%d)", w.Systems[p.SystemFrom].ID, w.Systems[p.SystemTo-1].ID, p.SystemTo-p.SystemFrom)}
		if i < len(o.partDigests) {
			hp.Digest = o.partDigests[i]
		}
		out = append(out, hp)
	}
	return out
}

// partsSummary is summary.md's line about the parts of a run in parts.
func partsSummary(o *Outcome) string {
	if o.Compiled == nil || o.Compiled.Parts == nil {
		return ""
	}
	ps := o.Compiled.Parts
	return fmt.Sprintf("- parts: %d (%s to %s), each at most %d cases and %d systems; totals in `%s`\n", len(ps), ps[0].ReportFile(), ps[len(ps)-1].ReportFile(), workload.PartCases, workload.PartSystems, workload.AggregateFile)
}

// releaseCases replaces, once a run in parts has written every part's
// config and tables, its workload with a copy that keeps of each case only
// its id, split, position and responses (the alignment check counts
// them, a part at a time): the parts run from the files, so the args and
// expectations of 20,000 cases need not stay in memory for the rest of the
// run. The loaded workload is left as it was (a host may run it again).
func (r *run) releaseCases() {
	if r.c.Parts == nil {
		return
	}
	w := *r.w
	c := *r.c
	c.Workload = &w
	w.Cases = make([]workload.Case, len(r.w.Cases))
	for i, cs := range r.w.Cases {
		w.Cases[i] = cs.WithoutArgs()
	}
	r.w, r.c = &w, &c
	r.o.Workload, r.o.Compiled = &w, &c
	if r.release != nil {
		r.release()
	}
}
