package foundry

import (
	"github.com/algal-assay/assay/engine/evidence"
	"github.com/algal-assay/assay/engine/fault"
)

// ParseReport reads an algal.foundry.v1 report strictly: closed and
// complete key sets everywhere, bounded lists, well-formed ids, digests,
// splits, outcomes and counts, valid scores, and a budget account whose
// arithmetic holds. It checks shape only; Verify checks the claims.
func ParseReport(v any) (*Report, error) {
	raw, digest, err := openReport(v, ReportContract,
		[]string{"contract", "candidates", "promoted", "holdout", "scorer", "lineage", "budget", "digest"},
		[]string{"contract", "candidates", "promoted", "holdout", "digest"})
	if err != nil {
		return nil, err
	}
	r := &Report{Digest: digest}
	if r.Promoted, err = evidence.DigestField(raw["promoted"], "promoted"); err != nil {
		return nil, err
	}
	if sc, ok := raw["scorer"]; ok {
		if r.Scorer, err = evidence.CompileScorer(sc, "scorer"); err != nil {
			return nil, err
		}
	}
	if lv, ok := raw["lineage"]; ok {
		if r.Lineage, err = parseLineage(lv); err != nil {
			return nil, err
		}
	}
	if bv, ok := raw["budget"]; ok {
		if r.Budget, err = ParseAccount(bv, "budget"); err != nil {
			return nil, err
		}
	}
	if r.Candidates, err = evidence.Entries(raw["candidates"], "candidates", 1, MaxCandidates, parseCandidate); err != nil {
		return nil, err
	}
	if r.Holdout, err = parseHoldout(raw["holdout"]); err != nil {
		return nil, err
	}
	return r, nil
}

func parseLineage(v any) (*Lineage, error) {
	l, err := evidence.Closed(v, "lineage", "generatorDigest", "receiptDigest")
	if err != nil {
		return nil, err
	}
	lineage := &Lineage{}
	if lineage.GeneratorDigest, err = evidence.DigestField(l["generatorDigest"], "lineage.generatorDigest"); err != nil {
		return nil, err
	}
	if lineage.ReceiptDigest, err = evidence.DigestField(l["receiptDigest"], "lineage.receiptDigest"); err != nil {
		return nil, err
	}
	return lineage, nil
}

func parseHoldout(v any) (h Holdout, err error) {
	raw, err := evidence.Closed(v, "holdout", "passed", "total", "cases")
	if err != nil {
		return Holdout{}, err
	}
	if h.Score, err = parseScore(raw, "holdout"); err != nil {
		return Holdout{}, err
	}
	if h.Cases, err = evidence.Entries(raw["cases"], "holdout.cases", 1, MaxCases, parseCaseResult); err != nil {
		return Holdout{}, err
	}
	return h, nil
}

// openReport reads the top level of a foundry or search report: its keys
// among allowed, every one of required present, its contract, and its
// digest.
func openReport(v any, contract string, allowed, required []string) (map[string]any, string, error) {
	raw, err := evidence.Closed(v, "report", allowed...)
	if err != nil {
		return nil, "", err
	}
	if err := requireKeys(raw, "report", required...); err != nil {
		return nil, "", err
	}
	if raw["contract"] != contract {
		return nil, "", fail(fault.Parse, "contract", "must be %s", contract)
	}
	digest, err := evidence.DigestField(raw["digest"], "digest")
	if err != nil {
		return nil, "", err
	}
	return raw, digest, nil
}

func parseScore(m map[string]any, field string) (Score, error) {
	var s Score
	var err error
	if s.Passed, err = evidence.CountField(m["passed"], field+".passed"); err != nil {
		return Score{}, err
	}
	if s.Total, err = evidence.CountField(m["total"], field+".total"); err != nil {
		return Score{}, err
	}
	if s.Total == 0 || s.Passed > s.Total {
		return Score{}, fail(fault.Parse, field, "is not a valid score: %d of %d", s.Passed, s.Total)
	}
	return s, nil
}

func parseUsage(v any, field string) (Usage, error) {
	m, err := evidence.Closed(v, field, "tokensIn", "tokensOut")
	if err != nil {
		return Usage{}, err
	}
	var u Usage
	if u.TokensIn, err = evidence.CountField(m["tokensIn"], field+".tokensIn"); err != nil {
		return Usage{}, err
	}
	if u.TokensOut, err = evidence.CountField(m["tokensOut"], field+".tokensOut"); err != nil {
		return Usage{}, err
	}
	return u, nil
}

func parseCandidate(v any, at string) (CandidateResult, error) {
	m, err := evidence.Closed(v, at, "manifestDigest", "manifestKey", "train", "validation", "work", "usage", "cases")
	if err != nil {
		return CandidateResult{}, err
	}
	var c CandidateResult
	if c.ManifestDigest, err = evidence.DigestField(m["manifestDigest"], at+".manifestDigest"); err != nil {
		return CandidateResult{}, err
	}
	if c.ManifestKey, err = evidence.Text(m["manifestKey"], at+".manifestKey", 256); err != nil {
		return CandidateResult{}, err
	}
	for _, s := range []struct {
		key string
		dst *Score
	}{{"train", &c.Train}, {"validation", &c.Validation}} {
		sm, err := evidence.Closed(m[s.key], at+"."+s.key, "passed", "total")
		if err != nil {
			return CandidateResult{}, err
		}
		if *s.dst, err = parseScore(sm, at+"."+s.key); err != nil {
			return CandidateResult{}, err
		}
	}
	if c.Work, err = evidence.ParseWork(m["work"], at+".work"); err != nil {
		return CandidateResult{}, err
	}
	if c.Usage, err = parseUsage(m["usage"], at+".usage"); err != nil {
		return CandidateResult{}, err
	}
	if c.Cases, err = evidence.Entries(m["cases"], at+".cases", 1, MaxCases, parseCaseResult); err != nil {
		return CandidateResult{}, err
	}
	return c, nil
}

func parseCaseResult(v any, at string) (CaseResult, error) {
	m, cl, err := evidence.ParseCaseRecord(v, at, "id", "split", "passed", "outcome", "args", "outputs", "expect", "receiptDigest", "work", "usage")
	if err != nil {
		return CaseResult{}, err
	}
	c := CaseResult{ID: cl.ID, Passed: cl.Passed, Outcome: cl.Outcome, Outputs: cl.Outputs, Expect: cl.Expect,
		ReceiptDigest: cl.ReceiptDigest, Work: cl.Work}
	switch c.Split, _ = m["split"].(string); c.Split {
	case SplitTrain, SplitValidation, SplitHoldout:
	default:
		return CaseResult{}, fail(fault.Parse, at+".split", "must be train, validation or holdout")
	}
	if c.Args, err = evidence.Object(m["args"], at+".args"); err != nil {
		return CaseResult{}, err
	}
	if c.Usage, err = parseUsage(m["usage"], at+".usage"); err != nil {
		return CaseResult{}, err
	}
	return c, nil
}
