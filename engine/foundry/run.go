package foundry

import (
	"context"
	"errors"
	"fmt"

	"github.com/algal-assay/assay/engine/evidence"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/manifest"
	"golang.org/x/sync/errgroup"
)

// Options tune a foundry run; the report never depends on them.
type Options struct {
	// Concurrency bounds the runs in flight; zero means evidence.DefaultConcurrency.
	// A configured habitat budget runs everything one at a time in
	// admission order, because each admission depends on what the earlier
	// runs were charged.
	Concurrency int
	// OnRun, when set, is called after each run finishes, from any
	// goroutine. caseID is empty for the generator run.
	OnRun func(manifestKey, caseID, split string)
	// OnResult, when set, is called after each case run with whether the
	// case passed (progress tallies); the generator run is not a case.
	OnResult func(manifestKey, caseID, split string, passed bool)
}

// Result is what a foundry run yields: a report, or, when the habitat
// budget refused a reservation, the exhausted account instead.
type Result struct {
	Report    *Report
	Exhausted *Account
}

// errExhausted unwinds a run whose reservation was refused.
var errExhausted = errors.New("habitat budget exhausted")

type foundryRun struct {
	cfg     *Config
	runner  evidence.Runner
	opts    Options
	account *Account
}

// run admits one run against the account (if any), executes it and
// charges its receipt.
func (f *foundryRun) run(ctx context.Context, sess evidence.Session, m *manifest.Manifest, args map[string]any) (map[string]any, string, error) {
	if f.account != nil {
		if err := f.account.Reserve(m); err != nil {
			if f.account.Exhausted() {
				return nil, "", errExhausted
			}
			return nil, "", err
		}
	}
	receipt, digest, err := sess.Run(ctx, args)
	if err != nil {
		if f.account != nil {
			f.account.Release()
		}
		return nil, "", err
	}
	if f.account != nil {
		if err := f.account.Charge(digest, receipt); err != nil {
			return nil, "", err
		}
	}
	return receipt, digest, nil
}

// Run evaluates the population: the generator first (when configured),
// then every candidate on every train and validation case, then the
// holdout cases on the promoted candidate only. Runs go to a bounded pool
// and results are slotted by index, so the report is byte-identical
// whatever the concurrency; Ordered sessions run their cases in case
// order.
func Run(ctx context.Context, cfg *Config, runner evidence.Runner, opts Options) (*Result, error) {
	f := &foundryRun{cfg: cfg, runner: runner, opts: opts}
	if cfg.Budget != nil {
		f.account = NewAccount(ActivityFoundry, *cfg.Budget)
	}
	rep, err := f.evaluate(ctx)
	if err != nil && !errors.Is(err, errExhausted) {
		return nil, err
	}
	// The report (or exhausted account) names receipts: they become
	// durable before it exists.
	if cerr := evidence.Commit(runner); cerr != nil {
		return nil, cerr
	}
	if err != nil {
		return &Result{Exhausted: f.account}, nil
	}
	return &Result{Report: rep}, nil
}

func (f *foundryRun) evaluate(ctx context.Context) (*Report, error) {
	cfg := f.cfg
	population := append([]*manifest.Manifest(nil), cfg.Candidates...)
	r := &Report{Scorer: cfg.Scorer}
	if cfg.Generator != nil {
		generated, lineage, err := f.generate(ctx, len(population))
		if err != nil {
			return nil, err
		}
		population = append(population, generated...)
		r.Lineage = lineage
	}
	selection, holdout := splitCases(cfg.Cases)
	cands, sessions, err := f.measure(ctx, population, selection)
	if err != nil {
		return nil, err
	}
	r.Candidates = cands
	winner := Rank(r.Candidates)[0]
	r.Promoted = population[winner].Digest
	if r.Holdout.Cases, err = f.runHoldout(ctx, sessions[winner], population[winner], holdout); err != nil {
		return nil, err
	}
	r.Holdout.Score = holdoutScore(r.Holdout.Cases)
	r.Budget = f.account
	if err := r.seal(); err != nil {
		return nil, err
	}
	return r, nil
}

// measure runs every selection case for every member of the population
// and aggregates each candidate's evidence, as a foundry epoch does before
// promotion. It returns the members' sessions too, for the holdout.
func (f *foundryRun) measure(ctx context.Context, population []*manifest.Manifest, selection []Case) ([]CandidateResult, []evidence.Session, error) {
	sessions := make([]evidence.Session, len(population))
	cands := make([]CandidateResult, len(population))
	for i, m := range population {
		sess, err := f.runner.Open(ctx, m, f.cfg.Executors)
		if err != nil {
			return nil, nil, err
		}
		sessions[i] = sess
		cands[i] = CandidateResult{ManifestDigest: m.Digest, ManifestKey: m.Key, Cases: make([]CaseResult, len(selection))}
	}
	err := f.schedule(ctx, len(population), len(selection), func(i int) bool { return sessions[i].Ordered() },
		func(ctx context.Context, ci, k int) error {
			res, err := f.evalCase(ctx, sessions[ci], population[ci], selection[k])
			cands[ci].Cases[k] = res
			return err
		})
	if err != nil {
		return nil, nil, err
	}
	for i := range cands {
		cands[i].aggregate()
	}
	return cands, sessions, nil
}

// splitCases parts the workload into the selection (train and
// validation) cases and the holdout cases, each in workload order.
func splitCases(cases []Case) (selection, holdout []Case) {
	for _, c := range cases {
		if c.Split == SplitHoldout {
			holdout = append(holdout, c)
		} else {
			selection = append(selection, c)
		}
	}
	return selection, holdout
}

// runHoldout runs the holdout cases on the promoted candidate m, in its
// session sess.
func (f *foundryRun) runHoldout(ctx context.Context, sess evidence.Session, m *manifest.Manifest, holdout []Case) ([]CaseResult, error) {
	results := make([]CaseResult, len(holdout))
	err := f.schedule(ctx, 1, len(holdout), func(int) bool { return sess.Ordered() },
		func(ctx context.Context, _, k int) error {
			res, err := f.evalCase(ctx, sess, m, holdout[k])
			results[k] = res
			return err
		})
	if err != nil {
		return nil, err
	}
	return results, nil
}

// schedule runs job(candidate, case) for every pair. With a budget every
// job runs in order on this goroutine; otherwise on a bounded pool, with
// an ordered candidate's cases chained in case order.
func (f *foundryRun) schedule(ctx context.Context, nCand, nCase int, ordered func(int) bool, job func(context.Context, int, int) error) error {
	if f.account != nil {
		return runInOrder(ctx, nCand, nCase, job)
	}
	// No job cancels the others: a failure is kept by report position
	// (candidate, then case), so a concurrent foundry aborts with the
	// error a sequential one would, e.g. SCORER_INVALID naming the same
	// case.
	p := &pool{ctx: ctx, nCase: nCase, job: job}
	p.g.SetLimit(f.concurrency())
	for ci := 0; ci < nCand; ci++ {
		if ordered(ci) {
			p.g.Go(p.chain(ci))
			continue
		}
		for k := 0; k < nCase; k++ {
			p.g.Go(func() error { _ = p.do(ci, k); return nil }) // recorded in abort
		}
	}
	// Workers return nil; a failure travels through abort.
	if err := p.g.Wait(); err != nil {
		return err
	}
	return p.abort.Err()
}

// concurrency is the bound on runs in flight.
func (f *foundryRun) concurrency() int {
	if f.opts.Concurrency <= 0 {
		return evidence.DefaultConcurrency()
	}
	return f.opts.Concurrency
}

// runInOrder runs job for every (candidate, case) pair in order on this
// goroutine, stopping at the first failure.
func runInOrder(ctx context.Context, nCand, nCase int, job func(context.Context, int, int) error) error {
	for ci := 0; ci < nCand; ci++ {
		for k := 0; k < nCase; k++ {
			if err := job(ctx, ci, k); err != nil {
				return err
			}
		}
	}
	return nil
}

// pool runs a schedule's jobs concurrently, recording each failure by its
// report position in abort.
type pool struct {
	ctx   context.Context
	nCase int
	job   func(context.Context, int, int) error
	g     errgroup.Group
	abort evidence.Abort
}

// do runs the job of candidate ci and case k, unless a failure at an
// earlier position makes it moot.
func (p *pool) do(ci, k int) error {
	at := ci*p.nCase + k
	if p.abort.Skip(at) {
		return nil
	}
	err := p.job(p.ctx, ci, k)
	p.abort.Record(at, err)
	return err
}

// chain is a worker that runs candidate ci's cases in case order,
// stopping at its first failure.
func (p *pool) chain(ci int) func() error {
	return func() error {
		for k := 0; k < p.nCase; k++ {
			if p.do(ci, k) != nil {
				break
			}
		}
		return nil
	}
}

// evalCase runs one case and turns its receipt into case evidence.
func (f *foundryRun) evalCase(ctx context.Context, sess evidence.Session, m *manifest.Manifest, c Case) (CaseResult, error) {
	receipt, digest, err := f.run(ctx, sess, m, evidence.CellArgs(m, c.Args))
	if err != nil {
		return CaseResult{}, err
	}
	outcome, _ := receipt["outcome"].(string)
	outputs := evidence.InterfaceOutputs(m, receipt)
	passed, err := f.cfg.Scorer.Judge(c.ID, c.Args, c.Expect, outcome, outputs)
	if err != nil {
		return CaseResult{}, err
	}
	f.ran(m.Key, c.ID, c.Split)
	if f.opts.OnResult != nil {
		f.opts.OnResult(m.Key, c.ID, c.Split, passed)
	}
	return CaseResult{
		ID: c.ID, Split: c.Split, Passed: passed, Outcome: outcome, Args: c.Args, Outputs: outputs,
		Expect: c.Expect, ReceiptDigest: digest, Work: evidence.ReceiptWork(receipt), Usage: ReceiptUsage(receipt),
	}, nil
}

// generate runs the generator and admits its population: a non-empty list
// of algal.organism.v1 values, each through the ordinary manifest parser,
// distinct from each other and from the nfile file candidates, within the
// population bound, and compatible with every case.
func (f *foundryRun) generate(ctx context.Context, nfile int) ([]*manifest.Manifest, *Lineage, error) {
	g := f.cfg.Generator
	sess, err := f.runner.Open(ctx, g.Manifest, g.executorsIn(f.cfg))
	if err != nil {
		return nil, nil, err
	}
	receipt, digest, err := f.runGenerator(ctx, sess, g.Args, "generator")
	if err != nil {
		return nil, nil, err
	}
	members, err := Population(g, evidence.InterfaceOutputs(g.Manifest, receipt))
	if err != nil {
		return nil, nil, err
	}
	if err := f.admitGenerated(members, nfile); err != nil {
		return nil, nil, err
	}
	return members, &Lineage{GeneratorDigest: g.Manifest.Digest, ReceiptDigest: digest}, nil
}

// executorsIn are the executors that serve generator g under cfg: its
// own, or else the config's.
func (g *Generator) executorsIn(cfg *Config) map[string]string {
	if g.Executors == nil {
		return cfg.Executors
	}
	return g.Executors
}

// runGenerator runs the config's generator once in sess with its
// interface args; a run that does not complete is rejected at at.
func (f *foundryRun) runGenerator(ctx context.Context, sess evidence.Session, args map[string]any, at string) (map[string]any, string, error) {
	g := f.cfg.Generator
	receipt, digest, err := f.run(ctx, sess, g.Manifest, evidence.CellArgs(g.Manifest, args))
	if err != nil {
		return nil, "", err
	}
	f.ran(g.Manifest.Key, "", "")
	if o, _ := receipt["outcome"].(string); o != "complete" {
		return nil, "", fail(fault.Parse, at, "generator %s ended %s (receipt %s)", g.Manifest.Key, o, digest)
	}
	return receipt, digest, nil
}

// ran tells opts.OnRun, if set, that a run finished.
func (f *foundryRun) ran(manifestKey, caseID, split string) {
	if f.opts.OnRun != nil {
		f.opts.OnRun(manifestKey, caseID, split)
	}
}

// admitGenerated admits the generated members beside the nfile file
// candidates: within the population bound, distinct from each other and
// from the file candidates, and compatible with every case.
func (f *foundryRun) admitGenerated(members []*manifest.Manifest, nfile int) error {
	if nfile+len(members) > MaxCandidates {
		return fail(fault.BudgetExhausted, "generator.output", "%d file and %d generated candidates exceed the bound of %d", nfile, len(members), MaxCandidates)
	}
	seen := map[string]string{}
	for i, m := range f.cfg.Candidates {
		seen[m.Digest] = fmt.Sprintf("candidates[%d]", i)
	}
	for i, m := range members {
		at := fmt.Sprintf("generator.output[%d]", i)
		if prev, dup := seen[m.Digest]; dup {
			return fail(fault.Parse, at, "duplicate candidate %s (same manifest as %s)", m.Digest, prev)
		}
		seen[m.Digest] = at
		if err := compatible(m, f.cfg.Cases, at); err != nil {
			return err
		}
	}
	return nil
}

// Population reads the generator's proposed manifests from its interface
// outputs: the named output holds the list directly, or an object holding
// it under the configured field. Each value is admitted by the manifest
// parser; the list must be non-empty and within MaxCandidates.
func Population(g *Generator, outputs map[string]any) ([]*manifest.Manifest, error) {
	l, err := proposalList(g, outputs)
	if err != nil {
		return nil, err
	}
	out := make([]*manifest.Manifest, len(l))
	for i, e := range l {
		m, err := manifest.ParseValue(e)
		if err != nil {
			return nil, fail(fault.Parse, fmt.Sprintf("generator.output[%d]", i), "generated candidate %d: %v", i, err)
		}
		out[i] = m
	}
	return out, nil
}

// proposalList is the list of proposed manifest values in the generator's
// interface outputs, non-empty and within MaxCandidates.
func proposalList(g *Generator, outputs map[string]any) ([]any, error) {
	v, ok := outputs[g.Output]
	if !ok {
		return nil, fail(fault.Parse, "generator.output", "generator %s did not emit interface output %q", g.Manifest.Key, g.Output)
	}
	if g.Field != "" {
		obj, isObj := v.(map[string]any)
		if v, ok = obj[g.Field]; !isObj || !ok {
			return nil, fail(fault.Parse, "generator.field", "generator %s output %q must be an object with field %q", g.Manifest.Key, g.Output, g.Field)
		}
	}
	l, ok := v.([]any)
	if !ok || len(l) == 0 {
		return nil, fail(fault.Parse, "generator.output", "generator %s must emit a non-empty list of manifests, got %s", g.Manifest.Key, evidence.Describe(v))
	}
	if len(l) > MaxCandidates {
		return nil, fail(fault.BudgetExhausted, "generator.output", "generator %s emitted %d candidates, over the bound of %d", g.Manifest.Key, len(l), MaxCandidates)
	}
	return l, nil
}
