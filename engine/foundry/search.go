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
	if cfg.Search == nil || cfg.Generator == nil {
		return nil, fail(fault.Parse, "search", "RunSearch needs a config admitted for foundry search (a search block and a generator)")
	}
	if cfg.Budget != nil {
		return nil, fail(fault.Parse, "budget", "a habitat budget is not supported under foundry search")
	}
	f := &foundryRun{cfg: cfg, runner: runner, opts: opts}
	g := cfg.Generator
	execs := g.Executors
	if execs == nil {
		execs = cfg.Executors
	}
	gsess, err := runner.Open(ctx, g.Manifest, execs)
	if err != nil {
		return nil, err
	}
	var selection []Case
	for _, c := range cfg.Cases {
		if c.Split != SplitHoldout {
			selection = append(selection, c)
		}
	}
	sr := &SearchReport{GeneratorDigest: g.Manifest.Digest}
	survivors := dedupe(cfg.Candidates)
	var members []*manifest.Manifest
	var prev *Generation
	for gen := 0; gen < cfg.Search.MaxGenerations; gen++ {
		at := fmt.Sprintf("generations[%d]", gen)
		args := generatorArgs(g, cfg.Search, gen, prev)
		receipt, digest, err := f.run(ctx, gsess, g.Manifest, evidence.CellArgs(g.Manifest, args))
		if err != nil {
			return nil, err
		}
		if f.opts.OnRun != nil {
			f.opts.OnRun(g.Manifest.Key, "", "")
		}
		if o, _ := receipt["outcome"].(string); o != "complete" {
			return nil, fail(fault.Parse, at, "generator %s ended %s (receipt %s)", g.Manifest.Key, o, digest)
		}
		if members, err = Population(g, evidence.InterfaceOutputs(g.Manifest, receipt)); err != nil {
			return nil, err
		}
		proposed := make([]string, len(members))
		for i, m := range members {
			proposed[i] = m.Digest
			if err := compatible(m, cfg.Cases, fmt.Sprintf("%s.proposed[%d]", at, i)); err != nil {
				return nil, err
			}
		}
		population := dedupe(append(append([]*manifest.Manifest(nil), survivors...), members...))
		if len(population) > MaxCandidates {
			return nil, fail(fault.BudgetExhausted, at, "population of %d exceeds the bound of %d", len(population), MaxCandidates)
		}
		cands, err := f.measure(ctx, population, selection)
		if err != nil {
			return nil, err
		}
		winner := Rank(cands)[0]
		sr.Generations = append(sr.Generations, Generation{
			Index: gen, GeneratorDigest: g.Manifest.Digest, ReceiptDigest: digest,
			Proposed: proposed, Candidates: cands, Promoted: population[winner].Digest,
		})
		prev = &sr.Generations[len(sr.Generations)-1]
		survivors = []*manifest.Manifest{population[winner]}
	}
	final := &Config{
		Candidates: dedupe(append(survivors, members...)),
		Cases:      cfg.Cases, Scorer: cfg.Scorer, Executors: cfg.Executors,
	}
	res, err := (&foundryRun{cfg: final, runner: runner, opts: opts}).evaluate(ctx)
	if err != nil {
		return nil, err
	}
	res.Lineage = &Lineage{GeneratorDigest: prev.GeneratorDigest, ReceiptDigest: prev.ReceiptDigest}
	if err := res.seal(); err != nil {
		return nil, err
	}
	sr.Result = res
	if err := sr.seal(); err != nil {
		return nil, err
	}
	if err := evidence.Commit(runner); err != nil {
		return nil, err
	}
	return sr, nil
}

// measure runs every selection case for every member of the population
// and aggregates each candidate's evidence, as a foundry epoch does before
// promotion.
func (f *foundryRun) measure(ctx context.Context, population []*manifest.Manifest, selection []Case) ([]CandidateResult, error) {
	sessions := make([]evidence.Session, len(population))
	cands := make([]CandidateResult, len(population))
	for i, m := range population {
		sess, err := f.runner.Open(ctx, m, f.cfg.Executors)
		if err != nil {
			return nil, err
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
		return nil, err
	}
	for i := range cands {
		cands[i].aggregate()
	}
	return cands, nil
}
