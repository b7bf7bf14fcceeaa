package bench

import (
	"context"

	"github.com/algal-assay/assay/engine/evidence"
	"github.com/algal-assay/assay/engine/manifest"
	"golang.org/x/sync/errgroup"
)

// Options tune a bench run; the report never depends on them.
type Options struct {
	// Concurrency bounds the cases in flight; zero means one per CPU,
	// at least two.
	Concurrency int
	// OnCase, when set, is called after each case finishes, from any
	// goroutine.
	OnCase func(system, caseID string)
	// OnResult, when set, is called like OnCase with whether the case
	// passed (progress tallies).
	OnResult func(system, caseID string, passed bool)
	// Slots, when set, are shared with other runs in flight: each case
	// takes one while it runs, so the runs together hold at most as many
	// cases as there are slots, whatever each one's Concurrency. Rank
	// orders this run among them (lower first).
	Slots *Slots
	Rank  int
}

// Run measures every system on every case and returns the report. Cases
// run on a bounded worker pool and results are slotted by index, so the
// report is byte-identical whatever the concurrency.
func Run(ctx context.Context, cfg *Config, runner evidence.Runner, opts Options) (*Report, error) {
	n := opts.Concurrency
	if n <= 0 {
		n = evidence.DefaultConcurrency()
	}
	r := &Report{Cases: cfg.Cases, Prices: cfg.Prices, Scorer: cfg.Scorer, Axes: cfg.Axes}
	r.Systems = make([]SystemResult, len(cfg.Systems))
	sessions := make([]evidence.Session, len(cfg.Systems))
	for i := range cfg.Systems {
		s := &cfg.Systems[i]
		sess, err := runner.Open(ctx, s.Manifest, s.Executors)
		if err != nil {
			return nil, err
		}
		sessions[i] = sess
		r.Systems[i] = SystemResult{ID: s.ID, ManifestDigest: s.Manifest.Digest, ManifestKey: s.Manifest.Key, Cases: make([]CaseResult, len(cfg.Cases))}
	}
	// No job cancels the others: a failure is kept by report position
	// (system, then case), so a concurrent bench aborts with the error a
	// sequential one would, e.g. SCORER_INVALID naming the same case.
	var abort evidence.Abort
	var g errgroup.Group
	g.SetLimit(n)
	runCase := func(si, ci int) error {
		at := si*len(cfg.Cases) + ci
		if abort.Skip(at) {
			return nil
		}
		sys, c := &cfg.Systems[si], cfg.Cases[ci]
		if opts.Slots != nil {
			opts.Slots.acquire(opts.Rank)
			if abort.Skip(at) { // failed meanwhile
				opts.Slots.release()
				return nil
			}
		}
		receipt, digest, err := sessions[si].Run(ctx, evidence.CellArgs(sys.Manifest, c.Args))
		if err == nil {
			r.Systems[si].Cases[ci], err = caseResult(cfg.Scorer, cfg.Prices, sys.Manifest, c, receipt, digest)
		}
		if opts.Slots != nil {
			opts.Slots.release()
		}
		abort.Record(at, err)
		if err == nil && opts.OnCase != nil {
			opts.OnCase(sys.ID, c.ID)
		}
		if err == nil && opts.OnResult != nil {
			opts.OnResult(sys.ID, c.ID, r.Systems[si].Cases[ci].Passed)
		}
		return err
	}
	for si := range cfg.Systems {
		if sessions[si].Ordered() {
			g.Go(func() error {
				for ci := range cfg.Cases {
					if runCase(si, ci) != nil {
						return nil
					}
				}
				return nil
			})
			continue
		}
		for ci := range cfg.Cases {
			g.Go(func() error { _ = runCase(si, ci); return nil }) // recorded in abort
		}
	}
	// Workers return nil; a failure travels through abort.
	if err := g.Wait(); err != nil {
		return nil, err
	}
	if err := abort.Err(); err != nil {
		return nil, err
	}
	if err := r.finish(); err != nil {
		return nil, err
	}
	// The report names every receipt: they become durable before it exists.
	if err := evidence.Commit(runner); err != nil {
		return nil, err
	}
	return r, nil
}

// caseResult turns one receipt into case evidence.
func caseResult(sc *evidence.Scorer, prices map[string]Price, m *manifest.Manifest, c Case, receipt map[string]any, digest string) (CaseResult, error) {
	outcome, _ := receipt["outcome"].(string)
	outputs := evidence.InterfaceOutputs(m, receipt)
	passed, err := sc.Judge(c.ID, c.Args, c.Expect, outcome, outputs)
	if err != nil {
		return CaseResult{}, err
	}
	calls, usage, attribution := Measure(receipt, prices)
	return CaseResult{
		ID: c.ID, Passed: passed, Outcome: outcome, Outputs: outputs, Expect: c.Expect,
		ReceiptDigest: digest, EffectCalls: calls, Work: evidence.ReceiptWork(receipt),
		Usage: usage, Attribution: attribution,
	}, nil
}
