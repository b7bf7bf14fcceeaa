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
	b, err := openRun(ctx, cfg, runner, opts)
	if err != nil {
		return nil, err
	}
	if err := b.runAll(ctx); err != nil {
		return nil, err
	}
	if err := b.r.finish(); err != nil {
		return nil, err
	}
	// The report names every receipt: they become durable before it exists.
	if err := evidence.Commit(runner); err != nil {
		return nil, err
	}
	return b.r, nil
}

// benchRun is a bench in progress: the report being filled in, a session
// per system, and the first failure by report position.
type benchRun struct {
	cfg      *Config
	opts     Options
	r        *Report
	sessions []evidence.Session
	abort    evidence.Abort
}

// openRun opens a session per system and lays out the report's slots.
func openRun(ctx context.Context, cfg *Config, runner evidence.Runner, opts Options) (*benchRun, error) {
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
	return &benchRun{cfg: cfg, opts: opts, r: r, sessions: sessions}, nil
}

// runAll runs every case of every system on a bounded pool, an ordered
// session's cases chained in case order. No job cancels the others: a
// failure is kept by report position (system, then case), so a concurrent
// bench aborts with the error a sequential one would, e.g. SCORER_INVALID
// naming the same case.
func (b *benchRun) runAll(ctx context.Context) error {
	var g errgroup.Group
	g.SetLimit(b.concurrency())
	for si := range b.cfg.Systems {
		if b.sessions[si].Ordered() {
			g.Go(b.chain(ctx, si))
			continue
		}
		for ci := range b.cfg.Cases {
			g.Go(func() error { _ = b.runCase(ctx, si, ci); return nil }) // recorded in abort
		}
	}
	// Workers return nil; a failure travels through abort.
	if err := g.Wait(); err != nil {
		return err
	}
	return b.abort.Err()
}

func (b *benchRun) concurrency() int {
	if b.opts.Concurrency <= 0 {
		return evidence.DefaultConcurrency()
	}
	return b.opts.Concurrency
}

// chain is a worker that runs system si's cases in case order, stopping
// at its first failure.
func (b *benchRun) chain(ctx context.Context, si int) func() error {
	return func() error {
		for ci := range b.cfg.Cases {
			if b.runCase(ctx, si, ci) != nil {
				return nil
			}
		}
		return nil
	}
}

// runCase runs case ci on system si, in a shared slot when there are
// any, unless a failure at an earlier position makes it moot.
func (b *benchRun) runCase(ctx context.Context, si, ci int) error {
	at := si*len(b.cfg.Cases) + ci
	if b.abort.Skip(at) || !b.takeSlot(at) {
		return nil
	}
	err := b.measureCase(ctx, si, ci)
	if b.opts.Slots != nil {
		b.opts.Slots.release()
	}
	b.abort.Record(at, err)
	if err == nil {
		b.tell(si, ci)
	}
	return err
}

// takeSlot waits for a shared slot, if there are any; it reports false,
// holding none, when a failure came meanwhile that makes position at moot.
func (b *benchRun) takeSlot(at int) bool {
	if b.opts.Slots == nil {
		return true
	}
	b.opts.Slots.acquire(b.opts.Rank)
	if b.abort.Skip(at) { // failed meanwhile
		b.opts.Slots.release()
		return false
	}
	return true
}

// measureCase runs case ci on system si and slots its evidence.
func (b *benchRun) measureCase(ctx context.Context, si, ci int) error {
	sys, c := &b.cfg.Systems[si], b.cfg.Cases[ci]
	receipt, digest, err := b.sessions[si].Run(ctx, evidence.CellArgs(sys.Manifest, c.Args))
	if err == nil {
		b.r.Systems[si].Cases[ci], err = caseResult(b.cfg.Scorer, b.cfg.Prices, sys.Manifest, c, receipt, digest)
	}
	return err
}

// tell passes a finished case to the progress callbacks that are set.
func (b *benchRun) tell(si, ci int) {
	sys, c := &b.cfg.Systems[si], b.cfg.Cases[ci]
	if b.opts.OnCase != nil {
		b.opts.OnCase(sys.ID, c.ID)
	}
	if b.opts.OnResult != nil {
		b.opts.OnResult(sys.ID, c.ID, b.r.Systems[si].Cases[ci].Passed)
	}
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
