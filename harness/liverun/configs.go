package liverun

import (
	"context"

	"github.com/algal-assay/assay/engine/bench"
	"github.com/algal-assay/assay/engine/evidence"
	"github.com/algal-assay/assay/engine/foundry"
	"github.com/algal-assay/assay/engine/vm"
	"github.com/algal-assay/assay/harness"
)

// The config runs of `assay bench CONFIG`, `assay foundry CONFIG` and
// `assay foundry search CONFIG`: the recording is opened when any
// executor the config or the workbench names is live, the engine runs,
// and the live answers are archived once the report verifies.

// ConfigOptions are a config run's archive, workbench and concurrency.
type ConfigOptions struct {
	Archive Archive
	// Path is the config's path: the archive names its recording by it.
	Path      string
	Workbench *vm.Workbench
	// Concurrency is the asked case concurrency (0: the default, raised to
	// keep live backends busy).
	Concurrency int
}

// Outcome is a finished config run: the document the command prints and
// what is left to say after it.
type Outcome struct {
	// Doc is the report or, when Exhausted, the foundry's exhausted
	// algal.habitat-budget.v1 account, printed instead of a report.
	Doc       map[string]any
	Exhausted bool
	// recorded is the report whose verification permits recording (nil:
	// nothing may be recorded).
	recorded map[string]any
	runs     []harness.RecordedRun
	cr       *ConfigRun
	wb       *vm.Workbench
}

// Failures names, once the document is printed, every live request that
// got no answer (their runs were not archived); nil when there are none.
func (o *Outcome) Failures() error { return o.cr.Failures(o.wb, o.runs) }

// engineRun runs the engine on runner: the outcome before it is finished.
type engineRun func(runner evidence.Runner, concurrency int) (*Outcome, error)

// RunBench runs every system of a loaded bench config on every case.
func RunBench(ctx context.Context, cfg *bench.Config, opts ConfigOptions) (*Outcome, error) {
	var specs []string
	for _, s := range cfg.Systems {
		specs = appendSpecs(specs, s.Executors)
	}
	return opts.run(ctx, specs, func(runner evidence.Runner, concurrency int) (*Outcome, error) {
		rep, err := bench.Run(ctx, cfg, runner, bench.Options{Concurrency: concurrency})
		if err != nil {
			return nil, err
		}
		return &Outcome{Doc: rep.Value(), recorded: rep.Value(), runs: harness.Runs(rep, nil)}, nil
	})
}

// RunFoundry selects one organism of a loaded foundry config; a habitat
// budget that runs out gives its exhausted account, and nothing is
// recorded.
func RunFoundry(ctx context.Context, cfg *foundry.Config, opts ConfigOptions) (*Outcome, error) {
	return opts.run(ctx, foundrySpecs(cfg), func(runner evidence.Runner, concurrency int) (*Outcome, error) {
		res, err := foundry.Run(ctx, cfg, runner, foundry.Options{Concurrency: concurrency})
		if err != nil {
			return nil, err
		}
		o := &Outcome{runs: harness.Runs(nil, res)}
		if res.Report != nil {
			o.recorded = res.Report.Value()
		}
		if res.Exhausted != nil {
			o.Doc, o.Exhausted = res.Exhausted.Value(), true
		} else {
			o.Doc = res.Report.Value()
		}
		return o, nil
	})
}

// RunSearch evolves the population of a loaded foundry config with a
// search block (algal.search.v1).
func RunSearch(ctx context.Context, cfg *foundry.Config, opts ConfigOptions) (*Outcome, error) {
	return opts.run(ctx, foundrySpecs(cfg), func(runner evidence.Runner, concurrency int) (*Outcome, error) {
		rep, err := foundry.RunSearch(ctx, cfg, runner, foundry.Options{Concurrency: concurrency})
		if err != nil {
			return nil, err
		}
		return &Outcome{Doc: rep.Value(), recorded: rep.Value(), runs: harness.SearchRuns(rep)}, nil
	})
}

// run opens the recording over the workbench (the config's executors
// and the workbench's own), runs the engine and finishes the recording:
// a run the engine stopped is explained by the live requests that could
// not be answered, when that is why.
func (opts ConfigOptions) run(ctx context.Context, specs []string, start engineRun) (*Outcome, error) {
	wb := opts.Workbench
	cr, runner, err := OpenConfig(opts.Archive, opts.Path, appendSpecs(specs, wb.Extra), wb)
	if err != nil {
		return nil, err
	}
	o, err := start(runner, cr.Concurrency(opts.Concurrency))
	if err != nil {
		return nil, cr.Stopped(wb, err)
	}
	o.cr, o.wb = cr, wb
	if err := cr.Finish(ctx, wb, o.recorded, o.runs); err != nil {
		return nil, err
	}
	return o, nil
}

// foundrySpecs are the executor specs of a foundry config: its
// candidates' and its generator's.
func foundrySpecs(cfg *foundry.Config) []string {
	specs := appendSpecs(nil, cfg.Executors)
	if cfg.Generator != nil {
		specs = appendSpecs(specs, cfg.Generator.Executors)
	}
	return specs
}

// appendSpecs adds the executor specs of m to specs.
func appendSpecs(specs []string, m map[string]string) []string {
	for _, s := range m {
		specs = append(specs, s)
	}
	return specs
}
