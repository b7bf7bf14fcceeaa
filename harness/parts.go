package harness

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"

	"github.com/algal-assay/assay/engine/bench"
	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/evidence"
	"github.com/algal-assay/assay/harness/gate"
	"github.com/algal-assay/assay/harness/parts"
	"github.com/algal-assay/assay/harness/rundir"
	"github.com/algal-assay/assay/harness/workload"
	"github.com/algal-assay/assay/internal/atomicfile"
	"github.com/algal-assay/assay/report"
	"github.com/algal-assay/assay/runrecord"
)

// A bench run in parts follows the same roster as any run, part by part:
// compile writes every part's config and tables; evaluate records one
// part per iteration and writes the reports in part order, with at most
// parts.Ahead parts in flight, so a part's results are released once
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

// evaluateParts runs the parts, each admitted from the config the compile
// phase wrote, exactly as `assay bench run` would admit it. Consecutive
// parts overlap (parts.Flight): up to parts.Ahead run at once on one pool of
// r.concurrency() slots, an earlier part served first (bench.Slots), so
// the tail of a part whose last system runs alone leaves no slot idle.
// Everything else happens in part order, once the part is done: its
// iteration, its report, its record row. So the run directory, the store
// and the record are those of one part after another, and a part that
// fails ends the run with its error once the parts before it are written,
// as it would one part at a time; the parts after it are cancelled and
// dropped.
func (r *run) evaluateParts(ctx context.Context) error {
	p := &progress{name: r.w.Name, f: r.opts.OnProgress, total: len(r.w.Systems) * r.w.NumCases()}
	runner, err := r.runnerAt(1)
	if err != nil {
		return err
	}
	f := r.newPartFlight(p, runner)
	f.Begin = func() (int, error) { return r.rec.NextIteration(PhaseEvaluate) }
	f.Put = func(job *parts.Job, it int) error {
		var err error
		if job.Raw != nil {
			// The bytes the resume check (or the shard's verification
			// record) verified, which the verify phase takes as verified
			// only while they are these.
			if job.ID == parts.ReusedReport {
				p.reusedPart(job.Report)
			}
			err = r.write(job.Part.ReportFile(), job.Raw)
		} else {
			// The verify phase checks a taken report like a run one.
			err = r.writeJSON(job.Part.ReportFile(), job.Report)
		}
		if err != nil {
			return err
		}
		return r.rec.AddLoopArtifact(PhaseEvaluate, it, job.ID, job.Part.ReportFile())
	}
	if err := f.Run(ctx, r.c.Parts); err != nil {
		return err
	}
	if s := r.resume; s != nil && len(s.Resume.Reused)+len(s.Resume.Rejected) > 0 {
		r.o.Resume = &s.Resume
		r.o.Notes = append(r.o.Notes, s.Resume.Note(len(r.c.Parts)))
	}
	if r.stage != nil {
		// Every part's report is in this stage now; a removal that fails
		// leaves a leftover the next run claims or removes.
		_ = r.stage.DropClaimed()
	}
	return nil
}

// newPartFlight is a flight of r's parts on runner, each part measured
// by the run's bench Measure (partMeasure) and taken instead where a
// shard or an unfinished run holds its report (takePart); its Begin and
// Put are left to the caller.
func (r *run) newPartFlight(p *progress, runner evidence.Runner) *parts.Flight {
	f := parts.NewFlight(r.concurrency())
	f.Runner, f.Measure, f.Take = runner, r.partMeasure(p), r.takePart
	f.Config = func(part workload.Part) (*bench.Config, error) {
		return bench.LoadConfig(filepath.Join(r.dir, part.ConfigFile()))
	}
	return f
}

// takePart is part's report when it need not run: from the shards'
// reports (Options.Reports), which must hold every part, or from an
// unfinished run of the same inputs (r.resume).
func (r *run) takePart(ctx context.Context, part workload.Part) (*parts.Job, error) {
	report, raw, err := r.takenPart(part)
	if err != nil || report != nil || raw != nil {
		return &parts.Job{Report: report, Raw: raw}, err
	}
	if r.resume != nil {
		cfg, err := bench.LoadConfig(filepath.Join(r.dir, part.ConfigFile()))
		if err != nil {
			return nil, err
		}
		l, err := r.resume.Take(ctx, part, cfg, partChecker(r.c, r.opts.Store))
		if l != nil {
			return &parts.Job{Report: l.Value, Raw: l.Raw, ID: parts.ReusedReport}, err
		}
		if err != nil {
			return nil, err
		}
	}
	if r.opts.Reports != nil {
		return nil, fmt.Errorf("%s of %s: no shard holds its report", part.Name(), r.w.Name)
	}
	return nil, nil
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
	opt := parts.DeriveOptions{Written: true, Verified: r.recorded}
	if r.resume != nil {
		opt.Verified = r.resume.Verified
	}
	d, err := parts.Derive(ctx, r.c, r.dir, opt, partChecker(r.c, r.opts.Store))
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
	d, err := parts.Derive(ctx, c, dir, parts.DeriveOptions{AllCases: keep == EveryVerdict, Canonical: true}, partChecker(c, st))
	if err != nil {
		return nil, err
	}
	return &Derived{Bench: d.Report, Verification: d.Verification, Aggregate: d.Value, Gates: gate.EvaluateBench(c.Workload, d.Report), PartDigests: d.Digests, CanonicalParts: d.Canonical}, nil
}

// GateVerdictsOf is d, re-derived with EveryVerdict, as RederiveParts
// with GateVerdicts would give it: the same parts folded once, the
// verdicts the gate names kept and the gates evaluated on them.
func GateVerdictsOf(c *workload.Compiled, d *Derived) *Derived {
	g := *d
	g.Bench = parts.GateVerdicts(c, d.Bench)
	g.Gates = gate.EvaluateBench(c.Workload, g.Bench)
	return &g
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
			Cases:   fmt.Sprintf("%s to %s (%d)", w.CaseID(p.CaseFrom), w.CaseID(p.CaseTo-1), p.CaseTo-p.CaseFrom),
			Systems: fmt.Sprintf("%s to %s (%d)", w.Systems[p.SystemFrom].ID, w.Systems[p.SystemTo-1].ID, p.SystemTo-p.SystemFrom)}
		if i < len(o.partDigests) {
			hp.Digest = o.partDigests[i]
		}
		out = append(out, hp)
	}
	return out
}

// releaseCases replaces, once a run in parts has written every part's
// config and tables, its workload with one that keeps of its cases only
// their number, ids and declared response counts (workload.Release; the
// alignment check reads the counts, a part at a time): the parts run from
// the files, so the data of 20,000 cases need not stay in memory for the
// rest of the run. The loaded workload is left as it was (a host may run
// it again).
func (r *run) releaseCases() {
	if r.c.Parts == nil {
		return
	}
	w := r.w.Release()
	c := *r.c
	c.Workload = w
	r.w, r.c = w, &c
	r.o.Workload, r.o.Compiled = w, &c
	if r.release != nil {
		r.release()
	}
}

// partChecker is the check of a part's report the verify phase makes
// (checkPart), for parts.Derive and the resume pre-check.
func partChecker(c *workload.Compiled, st evidence.Store) parts.Check {
	return func(ctx context.Context, p workload.Part, rep *bench.Report, v any, cfg *bench.Config) (*parts.Checked, error) {
		return checkPart(ctx, c, p, rep, v, cfg, st)
	}
}

// checkPart checks one part's report (rep, parsed from v) as the verify
// phase does: it is the report of the part's config cfg, it verifies
// against the store st, and its cases consumed the responses they
// declared. An error means the report is not the part's at all.
func checkPart(ctx context.Context, c *workload.Compiled, p workload.Part, rep *bench.Report, v any, cfg *bench.Config, st evidence.Store) (*parts.Checked, error) {
	name := p.ReportFile()
	if bad := parts.ConfigDifferences(p, rep, v.(map[string]any), cfg); len(bad) > 0 {
		return nil, fmt.Errorf("%s is not the report of %s: %s", name, p.Name(), bad[0])
	}
	usage := newUsageTap(st, rep.Prices)
	tap := newReceiptTap(usage)                     // one per part: released with it
	usage.reported = true                           // bench.Verify hands over what it measures
	bv, err := bench.VerifyParsed(ctx, rep, v, tap) // rep is v parsed: not parsed again
	if err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	var mismatches []string
	for _, m := range bv.Mismatches {
		mismatches = append(mismatches, name+": "+m)
	}
	pc := *c
	pc.Declared = c.Workload.PartDeclared(p)
	sub := &run{w: c.Workload, c: &pc, opts: Options{Store: st}, o: &Outcome{Workload: c.Workload, Compiled: &pc, Bench: rep}}
	problems, alignErr := sub.alignment(tap)
	if alignErr != nil {
		problems = append(problems, fmt.Sprintf("scripted alignment cannot be checked: %v", alignErr))
	} else if _, err := usage.fill(rep, nil); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	for _, m := range problems {
		mismatches = append(mismatches, name+": "+m)
	}
	return &parts.Checked{Receipts: bv.CheckedReceipts, Mismatches: mismatches, Unknown: usage.unknown()}, nil
}

// recordPart verifies the part report a shard wrote in dir and, when it
// verifies, writes its record (PartRecord); it says whether it did.
func recordPart(ctx context.Context, c *workload.Compiled, dir string, p workload.Part, st evidence.Store) (bool, error) {
	b, _, err := PartRecord(ctx, c, dir, p, st)
	if err != nil || b == nil {
		return false, err
	}
	return true, atomicfile.Write(filepath.Join(dir, parts.RecordFile(p)), b)
}

// PartRecord verifies part p's report in dir in full, as a shard does
// (checkPart), and returns the bytes of the verification record a shard
// writes for it; nil when it writes none: the part does not verify
// (mismatches say why) or its receipts have unknown usage. It never reads
// a record. An error is a report that is not its config's at all, or a
// store that cannot be read. `assay ci verify` holds a shard's records to
// it, so a record is re-derived, never trusted.
func PartRecord(ctx context.Context, c *workload.Compiled, dir string, p workload.Part, st evidence.Store) (record []byte, mismatches []string, _ error) {
	report, err := canon.ReadBounded(filepath.Join(dir, p.ReportFile()), 0)
	if err != nil {
		return nil, nil, err
	}
	v, err := canon.Parse(report, 0)
	if err != nil {
		return nil, nil, canon.InFile(p.ReportFile(), report, err)
	}
	rep, err := bench.ParseReport(v)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %v", p.ReportFile(), err)
	}
	cfg, err := bench.LoadConfig(filepath.Join(dir, p.ConfigFile()))
	if err != nil {
		return nil, nil, fmt.Errorf("%s: the part's config does not admit: %v", p.ReportFile(), err)
	}
	pc, err := checkPart(ctx, c, p, rep, v, cfg, st)
	if err != nil {
		return nil, nil, err
	}
	if len(pc.Mismatches) > 0 || len(pc.Unknown) > 0 {
		return nil, pc.Mismatches, nil
	}
	b, err := parts.EncodeRecord(p, report, c.Slug, pc.Receipts)
	if err != nil {
		return nil, nil, err
	}
	return b, nil, nil
}
