package foundry

import (
	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/evidence"
	"github.com/algal-assay/assay/engine/fault"
)

// Generational search (algal.search.v1) is a host layer over the foundry:
// a generator organism proposes a population each generation, the
// population is measured on train and validation like any foundry
// population, the winner survives into the next generation, and the
// generator hears about the previous generation through one interface
// input. After the last generation a single ordinary foundry epoch over
// the survivor and the last proposals unseals holdout.
const (
	SearchContract = "algal.search.v1"
	// MaxGenerations bounds maxGenerations and a report's generations.
	MaxGenerations = 8
)

// SearchSettings is a config's search block.
type SearchSettings struct {
	// MaxGenerations is how many generations run, 1 to MaxGenerations.
	MaxGenerations int
	// FeedbackInput is the generator interface input that receives the
	// previous generation's evidence (null in generation 0).
	FeedbackInput string
}

// parseSearch reads the search block in search mode. hasBudget reports a
// configured habitat budget, which search refuses: upstream's search
// neither charges an account nor records one in algal.search.v1.
func parseSearch(v any, hasBudget bool) (*SearchSettings, error) {
	if v == nil {
		return nil, fail(fault.Parse, "search", "foundry search needs a search block {maxGenerations, feedbackInput}")
	}
	if hasBudget {
		return nil, fail(fault.Parse, "budget", "a habitat budget is not supported under foundry search: algal.search.v1 records no account; remove budget or run a single foundry epoch")
	}
	raw, err := evidence.Closed(v, "search", "maxGenerations", "feedbackInput")
	if err != nil {
		return nil, err
	}
	if err := requireKeys(raw, "search", "maxGenerations", "feedbackInput"); err != nil {
		return nil, err
	}
	n, ok := raw["maxGenerations"].(float64)
	if !ok || n != float64(int(n)) || n < 1 || n > MaxGenerations {
		return nil, fail(fault.Parse, "search.maxGenerations", "must be an integer from 1 to %d", MaxGenerations)
	}
	fb, err := evidence.Text(raw["feedbackInput"], "search.feedbackInput", MaxIDLen)
	if err != nil {
		return nil, err
	}
	return &SearchSettings{MaxGenerations: int(n), FeedbackInput: fb}, nil
}

// checkSearchGenerator: search proposes every population through the
// generator, which must declare the feedback input and must not fix it in
// its args (the search supplies it each generation).
func checkSearchGenerator(cfg *Config) error {
	g := cfg.Generator
	if g == nil {
		return fail(fault.Parse, "generator", "foundry search needs a generator: it proposes every generation's population")
	}
	fb := cfg.Search.FeedbackInput
	if !hasInput(g.Manifest, fb) {
		return fail(fault.Parse, "search.feedbackInput", "generator %s has no interface input %q", g.Manifest.Key, fb)
	}
	if _, ok := g.Args[fb]; ok {
		return fail(fault.Parse, "generator.args", "must not set %q: the search feeds it each generation", fb)
	}
	return nil
}

// SearchFeedback is what the generator receives through the feedback
// input in generation gen: null in generation 0, then the previous
// generation's promoted digest and, for each of its candidates in
// population order, the digest, key, train and validation scores, work
// and token usage. Holdout never appears: it has not run yet.
func SearchFeedback(gen int, prev *Generation) any {
	if prev == nil {
		return nil
	}
	cands := make([]any, len(prev.Candidates))
	for i := range prev.Candidates {
		c := &prev.Candidates[i]
		cands[i] = map[string]any{
			"manifestDigest": c.ManifestDigest, "manifestKey": c.ManifestKey,
			"train": c.Train.value(), "validation": c.Validation.value(),
			"work": c.Work.Value(), "usage": c.Usage.value(),
		}
	}
	return map[string]any{"generation": float64(gen), "promoted": prev.Promoted, "candidates": cands}
}

// generatorArgs are the generator's interface args in generation gen.
func generatorArgs(g *Generator, s *SearchSettings, gen int, prev *Generation) map[string]any {
	args := make(map[string]any, len(g.Args)+1)
	for _, k := range canon.SortedKeys(g.Args) {
		args[k] = g.Args[k]
	}
	args[s.FeedbackInput] = SearchFeedback(gen, prev)
	return args
}
