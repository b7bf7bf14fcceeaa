package harness

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"

	"github.com/algal-assay/assay/engine/bench"
	"github.com/algal-assay/assay/engine/evidence"
	"github.com/algal-assay/assay/htmlreport"
	"github.com/algal-assay/assay/runrecord"
)

// A bench run in parts follows the same roster as any run, part by part:
// compile writes every part's config and tables; evaluate runs one part
// per iteration and writes its report before the next part starts, so a
// part's results are released once written; verify reads the parts back,
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
			a.Phases[i].Outputs = []runrecord.Output{{ID: "aggregate", File: AggregateFile}, {ID: "verification", File: VerificationFile}}
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

// evaluateParts runs the parts in order, each admitted from the config
// the compile phase wrote, exactly as `assay bench run` would admit it.
func (r *run) evaluateParts(ctx context.Context) error {
	p := &progress{name: r.w.Name, f: r.opts.OnProgress, total: len(r.w.Systems) * len(r.w.Cases)}
	runner, err := r.runnerAt(1)
	if err != nil {
		return err
	}
	for _, part := range r.c.Parts {
		it, err := r.rec.NextIteration(PhaseEvaluate)
		if err != nil {
			return err
		}
		taken, err := r.takenPart(part)
		if err != nil {
			return err
		}
		id := "part-report"
		if taken == nil && r.resume != nil {
			cfg, err := bench.LoadConfig(filepath.Join(r.dir, part.ConfigFile()))
			if err != nil {
				return err
			}
			if taken, err = r.resume.take(ctx, r.c, part, cfg, r.opts.Store); err != nil {
				return err
			}
			if taken != nil {
				id = ReusedPartReport
				p.reusedPart(taken)
			}
		}
		if taken == nil {
			if r.opts.Reports != nil {
				return fmt.Errorf("%s of %s: no shard holds its report", part.Name(), r.w.Name)
			}
			cfg, err := bench.LoadConfig(filepath.Join(r.dir, part.ConfigFile()))
			if err != nil {
				return err
			}
			rep, err := bench.Run(ctx, cfg, runner, bench.Options{
				Concurrency: r.concurrency(),
				OnResult:    func(_, _ string, passed bool) { p.judged(passed); p.tick() },
			})
			if err != nil {
				return err
			}
			taken = rep.Value()
		}
		// The verify phase checks a taken report like a run one.
		if err := r.writeJSON(part.ReportFile(), taken); err != nil {
			return err
		}
		if err := r.rec.AddLoopArtifact(PhaseEvaluate, it, id, part.ReportFile()); err != nil {
			return err
		}
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
			p.tick()
		}
	}
}

// verifyParts verifies the written parts and writes the aggregate they
// fold into, then the verification.
func (r *run) verifyParts(ctx context.Context) error {
	d, err := r.c.deriveParts(ctx, r.dir, r.opts.Store, deriveOptions{written: true})
	if err != nil {
		return err
	}
	r.o.Bench, r.o.partDigests = d.Report, d.Digests
	if err := r.writeJSON(AggregateFile, d.Value); err != nil {
		return err
	}
	if err := r.rec.AddArtifact(PhaseVerify, "aggregate", AggregateFile); err != nil {
		return err
	}
	r.o.Verification = d.Verification
	if err := r.writeJSON(VerificationFile, d.Verification.Value()); err != nil {
		return err
	}
	return r.rec.AddArtifact(PhaseVerify, "verification", VerificationFile)
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
func RederiveParts(ctx context.Context, c *Compiled, dir string, st evidence.Store, keep Verdicts) (*Derived, error) {
	d, err := c.deriveParts(ctx, dir, st, deriveOptions{allCases: keep == EveryVerdict})
	if err != nil {
		return nil, err
	}
	return &Derived{Bench: d.Report, Verification: d.Verification, Aggregate: d.Value, Gates: EvaluateBench(c.Workload, d.Report)}, nil
}

// htmlParts lists an outcome's parts for report.html (nil for a run in
// one part).
func htmlParts(o *Outcome) []htmlreport.Part {
	if o.Compiled == nil || o.Compiled.Parts == nil {
		return nil
	}
	w := o.Workload
	out := make([]htmlreport.Part, 0, len(o.Compiled.Parts))
	for i, p := range o.Compiled.Parts {
		hp := htmlreport.Part{Name: p.Name(), Report: p.ReportFile(),
			Cases:   fmt.Sprintf("%s to %s (%d)", w.Cases[p.CaseFrom].ID, w.Cases[p.CaseTo-1].ID, p.CaseTo-p.CaseFrom),
			Systems: fmt.Sprintf("%s to %s (%d)", w.Systems[p.SystemFrom].ID, w.Systems[p.SystemTo-1].ID, p.SystemTo-p.SystemFrom)}
		if i < len(o.partDigests) {
			hp.Digest = o.partDigests[i]
		}
		out = append(out, hp)
	}
	return out
}

// maxListedFailures bounds the failing cases a min-passed message of an
// aggregate names.
const maxListedFailures = 20

// failingBenchCase describes one failing case; an aggregate keeps only a
// case's verdict and outcome (its part report holds the rest).
func failingBenchCase(c bench.CaseResult) string {
	if c.Expect == nil && c.Outputs == nil {
		return fmt.Sprintf("%s (outcome %s)", c.ID, c.Outcome)
	}
	return fmt.Sprintf("%s (outcome %s, expected %s, got %s)", c.ID, c.Outcome, ShortJSON(c.Expect), ShortJSON(c.Outputs))
}

// partsSummary is summary.md's line about the parts of a run in parts.
func partsSummary(o *Outcome) string {
	if o.Compiled == nil || o.Compiled.Parts == nil {
		return ""
	}
	ps := o.Compiled.Parts
	return fmt.Sprintf("- parts: %d (%s to %s), each at most %d cases and %d systems; totals in `%s`\n", len(ps), ps[0].ReportFile(), ps[len(ps)-1].ReportFile(), PartCases, PartSystems, AggregateFile)
}
