package harness

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/algal-assay/assay/engine/bench"
	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/evidence"
	"github.com/algal-assay/assay/engine/foundry"
	"github.com/algal-assay/assay/harness/parts"
	"github.com/algal-assay/assay/harness/repeats"
	"github.com/algal-assay/assay/harness/rundir"
	"github.com/algal-assay/assay/harness/workload"
)

// memoRunner is a runner whose executors may consult an effect memo (a
// vm.Workbench with CacheEffects): a repeated run asks for one without,
// since a memo hit would hand repeat 2 the answer repeat 1 stored.
type memoRunner interface {
	WithoutMemo() evidence.Runner
}

// repeatEvidence lists every repeat's evidence in repeat order; for a run
// without repeats, the one report.
func (r *run) repeatEvidence() []repeats.Evidence {
	if a := r.o.Repeats; a != nil && a.K > 1 {
		return a.Evidence()
	}
	return []repeats.Evidence{{Bench: r.o.Bench, Foundry: r.o.Foundry}}
}

// repeats is the run's repeat count.
func (r *run) repeats() int { return max(1, r.w.Repeats) }

// benchConfigAt is the bench config repeat rep runs: config.json's, with
// the scripted tables of repeat rep where responses differ per repeat.
func (r *run) benchConfigAt(rep int) *bench.Config {
	if rep == 1 {
		return r.benchCfg
	}
	cfg := *r.benchCfg
	cfg.Systems = make([]bench.System, len(r.benchCfg.Systems))
	for i, s := range r.benchCfg.Systems {
		s.Executors = r.executorsAt(s.Executors, rep)
		cfg.Systems[i] = s
	}
	return &cfg
}

// foundryConfigAt is benchConfigAt for a foundry.
func (r *run) foundryConfigAt(rep int) *foundry.Config {
	if rep == 1 {
		return r.foundryCfg
	}
	cfg := *r.foundryCfg
	cfg.Executors = r.executorsAt(cfg.Executors, rep)
	if g := cfg.Generator; g != nil {
		gc := *g
		gc.Executors = r.executorsAt(g.Executors, rep)
		cfg.Generator = &gc
	}
	return &cfg
}

// executorsAt swaps each per-repeat scripted table for repeat rep's.
func (r *run) executorsAt(specs map[string]string, rep int) map[string]string {
	out := make(map[string]string, len(specs))
	for name, spec := range specs {
		if r.w.ScriptedRepeats(name) > 1 {
			if p, ok := strings.CutPrefix(spec, "scripted:"); ok && filepath.Base(p) == workload.ScriptedFile(name) {
				spec = "scripted:" + filepath.Join(filepath.Dir(p), workload.RepeatScriptedFile(name, rep))
			}
		}
		out[name] = spec
	}
	return out
}

// measure is the run's Measure (repeats.Measure): its bench or its
// foundry, counting case runs in p (whose total it sets when it is known
// beforehand). Its repeats (repeats.Run) and its parts (parts.Flight,
// through partMeasure) wrap it.
func (r *run) measure(ctx context.Context, p *progress) repeats.Measure {
	if r.w.Kind == workload.KindBench {
		p.total = r.repeats() * len(r.benchCfg.Systems) * len(r.benchCfg.Cases)
		return &benchMeasure{ctx: ctx, r: r, opts: bench.Options{
			Concurrency: r.concurrency(),
			OnResult:    func(_, _ string, passed bool) { p.judged(passed) },
		}}
	}
	if cfg := r.foundryCfg; cfg.Generator == nil {
		var sel, hold int
		for _, c := range cfg.Cases {
			if c.Split == foundry.SplitHoldout {
				hold++
			} else {
				sel++
			}
		}
		p.total = r.repeats() * (len(cfg.Candidates)*sel + hold)
	}
	return &foundryMeasure{ctx: ctx, r: r, opts: foundry.Options{
		Concurrency: r.concurrency(),
		OnRun: func(_, caseID, _ string) {
			if caseID == "" { // the generator run: no case to judge
				p.tick()
			}
		},
		OnResult: func(_, _, _ string, passed bool) { p.judged(passed) },
	}}
}

// benchMeasure runs a bench's systems over its cases (concurrently).
type benchMeasure struct {
	ctx  context.Context
	r    *run
	opts bench.Options
}

func (m *benchMeasure) Measure(rep int, runner evidence.Runner) (repeats.Evidence, error) {
	b, err := bench.Run(m.ctx, m.r.benchConfigAt(rep), runner, m.opts)
	return repeats.Evidence{Bench: b}, err
}

func (m *benchMeasure) Aggregate(name string, reps []repeats.Evidence) (*repeats.Aggregate, error) {
	bs := make([]*bench.Report, len(reps))
	for i, ev := range reps {
		bs[i] = ev.Bench
	}
	return repeats.AggregateBench(name, bs)
}

// MeasurePart runs one part of a bench run in parts (parts.Measure): the
// part's config on slots shared with the parts beside it, served by rank.
func (m *benchMeasure) MeasurePart(ctx context.Context, cfg *bench.Config, runner evidence.Runner, slots *bench.Slots, rank int) (*bench.Report, error) {
	opts := m.opts
	opts.Slots, opts.Rank = slots, rank
	return bench.Run(ctx, cfg, runner, opts)
}

// partMeasure is the run's bench Measure for its parts, counting case
// runs in p (whose total the caller sets).
func (r *run) partMeasure(p *progress) parts.Measure {
	return &benchMeasure{r: r, opts: bench.Options{
		Concurrency: r.concurrency(),
		OnResult:    func(_, _ string, passed bool) { p.judged(passed) },
	}}
}

// foundryMeasure runs a foundry: each repeat promotes on its own evidence
// and runs its holdout once, on its own winner.
type foundryMeasure struct {
	ctx  context.Context
	r    *run
	opts foundry.Options
}

func (m *foundryMeasure) Measure(rep int, runner evidence.Runner) (repeats.Evidence, error) {
	f, err := foundry.Run(m.ctx, m.r.foundryConfigAt(rep), runner, m.opts)
	return repeats.Evidence{Foundry: f}, err
}

func (m *foundryMeasure) Aggregate(name string, reps []repeats.Evidence) (*repeats.Aggregate, error) {
	fs := make([]*foundry.Result, len(reps))
	for i, ev := range reps {
		fs[i] = ev.Foundry
	}
	return repeats.AggregateFoundry(name, fs)
}

// pooling is the Measure of kind that pools evidence read back from a run
// directory (Rederive): it runs nothing.
func pooling(kind workload.Kind) repeats.Measure {
	if kind == workload.KindBench {
		return &benchMeasure{}
	}
	return &foundryMeasure{}
}

// reportFile is the file the evidence is written to and its value: the
// report, or a foundry's exhausted habitat account.
func reportFile(ev repeats.Evidence) (string, any) {
	switch {
	case ev.Bench != nil:
		return rundir.ReportFile, ev.Bench.Value()
	case ev.Foundry.Report != nil:
		return rundir.ReportFile, ev.Foundry.Report.Value()
	}
	return rundir.BudgetFile, ev.Foundry.Exhausted.Value()
}

// writeRepeatReports writes repeats 2..k's reports (or exhausted
// accounts) beside report.json.
func (r *run) writeRepeatReports() error {
	a := r.o.Repeats
	if a == nil {
		return nil
	}
	for i, ev := range r.repeatEvidence() {
		if i == 0 {
			continue
		}
		name, v := reportFile(ev)
		name = workload.RepeatFile(name, i+1)
		if err := r.writeJSON(name, v); err != nil {
			return err
		}
		if err := r.rec.AddArtifact(PhaseEvaluate, "report", name); err != nil {
			return err
		}
	}
	return nil
}

// repeatReportFiles are the files repeats 2..k left in dir, parsed.
func (r *run) repeatReportFiles() ([]any, error) {
	var out []any
	for rep := 2; rep <= r.repeats(); rep++ {
		name := workload.RepeatFile(rundir.ReportFile, rep)
		if r.o.Repeats != nil && containsInt(r.o.Repeats.Exhausted, rep) {
			name = workload.RepeatFile(rundir.BudgetFile, rep)
		}
		v, err := canon.ReadFile(filepath.Join(r.dir, name), 0)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

func containsInt(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// repeatView is r seen as repeat rep: its evidence and the responses its
// cases declared in that repeat, for the alignment check.
func (r *run) repeatView(rep int, b *bench.Report, f *foundry.Result) *run {
	v := *r
	v.o = &Outcome{Workload: r.w, Compiled: r.c, Bench: b, Foundry: f}
	c := *r.c
	c.Declared = workload.DeclaredCalls(r.w, rep)
	v.c = &c
	return &v
}

// verifyRepeats verifies repeat 1's parsed report first and then every
// further repeat's, each with its own alignment, and merges the verdicts:
// the digest is repeat 1's, receipts are counted over all, and a further
// repeat's mismatches name its file.
func (r *run) verifyRepeats(ctx context.Context, first any, others []any, parsed []repeats.Evidence) (*Verification, error, error) {
	out, alignErr, err := r.verification(ctx, first)
	if err != nil || len(others) == 0 {
		return out, alignErr, err
	}
	for i, v := range others {
		rep := i + 2
		ev := parsed[rep-1]
		vr, ae, err := r.repeatView(rep, ev.Bench, ev.Foundry).verification(ctx, v)
		if err != nil {
			return nil, nil, fmt.Errorf("repeat %d: %w", rep, err)
		}
		if ae != nil && alignErr == nil {
			alignErr = fmt.Errorf("repeat %d: %w", rep, ae)
		}
		name := workload.RepeatFile(rundir.ReportFile, rep)
		if ev.Foundry != nil && ev.Foundry.Report == nil {
			name = workload.RepeatFile(rundir.BudgetFile, rep)
		}
		out.OK = out.OK && vr.OK
		out.CheckedReceipts += vr.CheckedReceipts
		for _, m := range vr.Mismatches {
			out.Mismatches = append(out.Mismatches, name+": "+m)
		}
	}
	return out, alignErr, nil
}
