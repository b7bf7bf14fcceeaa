package foundry

import (
	"fmt"

	"github.com/algal-assay/assay/engine/evidence"
	"github.com/algal-assay/assay/engine/fault"
)

// ParseSearchReport reads an algal.search.v1 report strictly: closed and
// complete key sets, 1 to MaxGenerations generations numbered from 0 in
// order, 1 to MaxCandidates proposals and candidates per generation,
// candidate evidence in the foundry report's shape, and a result that
// parses as an algal.foundry.v1 report. It checks shape only;
// VerifySearch checks the claims.
func ParseSearchReport(v any) (*SearchReport, error) {
	keys := []string{"contract", "generatorDigest", "generations", "result", "digest"}
	raw, digest, err := openReport(v, SearchContract, keys, keys)
	if err != nil {
		return nil, err
	}
	s := &SearchReport{Digest: digest}
	if s.GeneratorDigest, err = evidence.DigestField(raw["generatorDigest"], "generatorDigest"); err != nil {
		return nil, err
	}
	gens, err := evidence.List(raw["generations"], "generations", 1, MaxGenerations)
	if err != nil {
		return nil, err
	}
	for i, rg := range gens {
		g, err := parseGeneration(rg, i)
		if err != nil {
			return nil, err
		}
		s.Generations = append(s.Generations, *g)
	}
	if s.Result, err = ParseReport(raw["result"]); err != nil {
		if e, ok := fault.As(err); ok && e.Path != "" {
			nested := *e
			nested.Path = "result." + e.Path
			return nil, &nested
		}
		return nil, err
	}
	return s, nil
}

func parseGeneration(v any, i int) (*Generation, error) {
	at := fmt.Sprintf("generations[%d]", i)
	m, err := evidence.Closed(v, at, "generation", "generatorDigest", "receiptDigest", "proposed", "candidates", "promoted")
	if err != nil {
		return nil, err
	}
	if err := requireKeys(m, at, "generation", "generatorDigest", "receiptDigest", "proposed", "candidates", "promoted"); err != nil {
		return nil, err
	}
	if n, ok := m["generation"].(float64); !ok || n != float64(i) {
		return nil, fail(fault.Parse, at+".generation", "must be %d: generations are numbered from 0 in order", i)
	}
	g := &Generation{Index: i}
	if g.GeneratorDigest, err = evidence.DigestField(m["generatorDigest"], at+".generatorDigest"); err != nil {
		return nil, err
	}
	if g.ReceiptDigest, err = evidence.DigestField(m["receiptDigest"], at+".receiptDigest"); err != nil {
		return nil, err
	}
	if g.Promoted, err = evidence.DigestField(m["promoted"], at+".promoted"); err != nil {
		return nil, err
	}
	if g.Proposed, err = evidence.Entries(m["proposed"], at+".proposed", 1, MaxCandidates, evidence.DigestField); err != nil {
		return nil, err
	}
	if g.Candidates, err = evidence.Entries(m["candidates"], at+".candidates", 1, MaxCandidates, parseCandidate); err != nil {
		return nil, err
	}
	return g, nil
}
