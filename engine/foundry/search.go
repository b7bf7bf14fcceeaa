package foundry

import (
	"context"
	"fmt"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/evidence"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/manifest"
)

// Generation is one generation's selection evidence: the generator run
// that proposed, the proposals (digests in emitted order, duplicates
// kept), the whole population's train and validation evidence, and the
// winner. It never holds holdout evidence.
type Generation struct {
	Index           int
	GeneratorDigest string
	ReceiptDigest   string
	Proposed        []string
	Candidates      []CandidateResult
	Promoted        string
}

func (g *Generation) value() map[string]any {
	proposed := make([]any, len(g.Proposed))
	for i, d := range g.Proposed {
		proposed[i] = d
	}
	cands := make([]any, len(g.Candidates))
	for i := range g.Candidates {
		cands[i] = g.Candidates[i].value()
	}
	return map[string]any{
		"generation": float64(g.Index), "generatorDigest": g.GeneratorDigest, "receiptDigest": g.ReceiptDigest,
		"proposed": proposed, "candidates": cands, "promoted": g.Promoted,
	}
}

// SearchReport is an algal.search.v1 report: the generations in order and
// the final foundry report, whose holdout is the only one the search ran.
type SearchReport struct {
	GeneratorDigest string
	Generations     []Generation
	Result          *Report
	Digest          string
}

// Value returns the report as a canonical JSON value, digest included when
// set.
func (s *SearchReport) Value() map[string]any {
	return evidence.WithDigest(s.body(), s.Digest)
}

func (s *SearchReport) body() map[string]any {
	gens := make([]any, len(s.Generations))
	for i := range s.Generations {
		gens[i] = s.Generations[i].value()
	}
	return map[string]any{
		"contract": SearchContract, "generatorDigest": s.GeneratorDigest,
		"generations": gens, "result": s.Result.Value(),
	}
}

// Encode returns the canonical bytes of the report.
func (s *SearchReport) Encode() ([]byte, error) { return canon.Encode(s.Value()) }

func (s *SearchReport) seal() error {
	d, err := canon.Digest(s.body())
	s.Digest = d
	return err
}

// dedupe keeps the first manifest of each digest, in order.
func dedupe(ms []*manifest.Manifest) []*manifest.Manifest {
	seen := map[string]bool{}
	out := make([]*manifest.Manifest, 0, len(ms))
	for _, m := range ms {
		if !seen[m.Digest] {
			seen[m.Digest] = true
			out = append(out, m)
		}
	}
	return out
}

// RunSearch runs a generational search over a config admitted in search
// mode. Each generation runs the generator once (one session for the whole
// search, so a scripted queue advances generation by generation) with the
// fixed args plus the feedback input, admits its proposals, forms the
// population (the survivor first, then new proposals; duplicate digests
// collapse; generation 0's survivors are the config's file candidates),
// and measures it on train and validation exactly as a foundry does. The
// winner is the next generation's survivor. Finally one foundry epoch over
// the last winner and the last proposals runs holdout on its promotion;
// that report, with the last generator run as lineage, is the result.
// Like Run, the report does not depend on opts.Concurrency.
func RunSearch(ctx context.Context, cfg *Config, runner evidence.Runner, opts Options) (*SearchReport, error) {
	if err := checkSearchable(cfg); err != nil {
		return nil, err
	}
	s, err := openSearch(ctx, cfg, runner, opts)
	if err != nil {
		return nil, err
	}
	for gen := 0; gen < cfg.Search.MaxGenerations; gen++ {
		if err := s.generation(ctx, gen); err != nil {
			return nil, err
		}
	}
	return s.finish(ctx)
}

// checkSearchable rejects a config not admitted for foundry search.
func checkSearchable(cfg *Config) error {
	if cfg.Search == nil || cfg.Generator == nil {
		return fail(fault.Parse, "search", "RunSearch needs a config admitted for foundry search (a search block and a generator)")
	}
	if cfg.Budget != nil {
		return fail(fault.Parse, "budget", "a habitat budget is not supported under foundry search")
	}
	return nil
}

// search is a generational search in progress.
type search struct {
	f         *foundryRun
	g         *Generator
	gsess     evidence.Session // the generator's one session
	selection []Case           // the train and validation cases
	sr        *SearchReport
	// survivors open the next generation's population; members are the
	// last generation's proposals; prev is the last generation.
	survivors []*manifest.Manifest
	members   []*manifest.Manifest
	prev      *Generation
}

// openSearch opens the generator's session and starts from the config's
// file candidates.
func openSearch(ctx context.Context, cfg *Config, runner evidence.Runner, opts Options) (*search, error) {
	g := cfg.Generator
	gsess, err := runner.Open(ctx, g.Manifest, g.executorsIn(cfg))
	if err != nil {
		return nil, err
	}
	selection, _ := splitCases(cfg.Cases)
	return &search{
		f: &foundryRun{cfg: cfg, runner: runner, opts: opts}, g: g, gsess: gsess,
		selection: selection,
		sr:        &SearchReport{GeneratorDigest: g.Manifest.Digest},
		survivors: dedupe(cfg.Candidates),
	}, nil
}

// generation runs generation gen: the generator proposes, the survivors
// and the proposals are measured, and the winner survives.
func (s *search) generation(ctx context.Context, gen int) error {
	at := fmt.Sprintf("generations[%d]", gen)
	digest, proposed, err := s.propose(ctx, gen, at)
	if err != nil {
		return err
	}
	population := dedupe(append(append([]*manifest.Manifest(nil), s.survivors...), s.members...))
	if len(population) > MaxCandidates {
		return fail(fault.BudgetExhausted, at, "population of %d exceeds the bound of %d", len(population), MaxCandidates)
	}
	cands, _, err := s.f.measure(ctx, population, s.selection)
	if err != nil {
		return err
	}
	winner := Rank(cands)[0]
	s.sr.Generations = append(s.sr.Generations, Generation{
		Index: gen, GeneratorDigest: s.g.Manifest.Digest, ReceiptDigest: digest,
		Proposed: proposed, Candidates: cands, Promoted: population[winner].Digest,
	})
	s.prev = &s.sr.Generations[len(s.sr.Generations)-1]
	s.survivors = []*manifest.Manifest{population[winner]}
	return nil
}

// propose runs the generator for generation gen and admits its proposals
// as s.members, returning its receipt's digest and the proposals' digests.
func (s *search) propose(ctx context.Context, gen int, at string) (digest string, proposed []string, err error) {
	g := s.g
	args := generatorArgs(g, s.f.cfg.Search, gen, s.prev)
	receipt, digest, err := s.f.runGenerator(ctx, s.gsess, args, at)
	if err != nil {
		return "", nil, err
	}
	if s.members, err = Population(g, evidence.InterfaceOutputs(g.Manifest, receipt)); err != nil {
		return "", nil, err
	}
	proposed = make([]string, len(s.members))
	for i, m := range s.members {
		proposed[i] = m.Digest
		if err := compatible(m, s.f.cfg.Cases, fmt.Sprintf("%s.proposed[%d]", at, i)); err != nil {
			return "", nil, err
		}
	}
	return digest, proposed, nil
}

// finish runs one foundry epoch over the last winner and the last
// proposals, which runs holdout on its promotion, and seals the search
// report with it as the result and the last generator run as lineage.
func (s *search) finish(ctx context.Context) (*SearchReport, error) {
	cfg := s.f.cfg
	final := &Config{
		Candidates: dedupe(append(s.survivors, s.members...)),
		Cases:      cfg.Cases, Scorer: cfg.Scorer, Executors: cfg.Executors,
	}
	res, err := (&foundryRun{cfg: final, runner: s.f.runner, opts: s.f.opts}).evaluate(ctx)
	if err != nil {
		return nil, err
	}
	res.Lineage = &Lineage{GeneratorDigest: s.prev.GeneratorDigest, ReceiptDigest: s.prev.ReceiptDigest}
	if err := res.seal(); err != nil {
		return nil, err
	}
	s.sr.Result = res
	if err := s.sr.seal(); err != nil {
		return nil, err
	}
	if err := evidence.Commit(s.f.runner); err != nil {
		return nil, err
	}
	return s.sr, nil
}
