package foundry

import (
	"cmp"
	"slices"
	"strings"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/evidence"
	"github.com/algal-assay/assay/engine/receipt"
)

// Work is a receipt's work ledger.
type Work = evidence.Work

// Usage is aggregate token use; foundry usage carries no cost.
type Usage struct{ TokensIn, TokensOut int64 }

func (u *Usage) add(o Usage) { u.TokensIn += o.TokensIn; u.TokensOut += o.TokensOut }

func (u Usage) value() map[string]any {
	return map[string]any{"tokensIn": float64(u.TokensIn), "tokensOut": float64(u.TokensOut)}
}

// ReceiptUsage sums the token usage of a receipt's effects.
func ReceiptUsage(rec map[string]any) Usage {
	var u Usage
	for _, e := range receipt.Unchecked(rec).Effects() {
		u.add(Usage{int64(e.TokensIn), int64(e.TokensOut)})
	}
	return u
}

// Score is passed out of total for one split.
type Score struct{ Passed, Total int64 }

func (s Score) value() map[string]any {
	return map[string]any{"passed": float64(s.Passed), "total": float64(s.Total)}
}

// cmpRate compares pass rates exactly; totals are always positive.
func cmpRate(a, b Score) int {
	return cmp.Compare(a.Passed*b.Total, b.Passed*a.Total)
}

// CaseResult is one run's evidence.
type CaseResult struct {
	ID            string
	Split         string
	Passed        bool
	Outcome       string
	Args          map[string]any
	Outputs       map[string]any
	Expect        map[string]any
	ReceiptDigest string
	Work          Work
	Usage         Usage
}

func (c *CaseResult) value() map[string]any {
	return map[string]any{
		"id": c.ID, "split": c.Split, "passed": c.Passed, "outcome": c.Outcome, "args": c.Args,
		"outputs": c.Outputs, "expect": c.Expect, "receiptDigest": c.ReceiptDigest,
		"work": c.Work.Value(), "usage": c.Usage.value(),
	}
}

// CandidateResult is one candidate's selection evidence.
type CandidateResult struct {
	ManifestDigest    string
	ManifestKey       string
	Train, Validation Score
	Work              Work
	Usage             Usage
	Cases             []CaseResult
}

func (c *CandidateResult) value() map[string]any {
	cases := make([]any, len(c.Cases))
	for i := range c.Cases {
		cases[i] = c.Cases[i].value()
	}
	return map[string]any{
		"manifestDigest": c.ManifestDigest, "manifestKey": c.ManifestKey,
		"train": c.Train.value(), "validation": c.Validation.value(),
		"work": c.Work.Value(), "usage": c.Usage.value(), "cases": cases,
	}
}

// aggregate recomputes scores, work and usage from the cases.
func (c *CandidateResult) aggregate() {
	c.Train, c.Validation, c.Work, c.Usage = Score{}, Score{}, Work{}, Usage{}
	for i := range c.Cases {
		cs := &c.Cases[i]
		var s *Score
		switch cs.Split {
		case SplitTrain:
			s = &c.Train
		case SplitValidation:
			s = &c.Validation
		}
		if s != nil {
			s.Total++
			if cs.Passed {
				s.Passed++
			}
		}
		c.Work.Add(cs.Work)
		c.Usage.add(cs.Usage)
	}
}

// Holdout is the promoted candidate's holdout evidence.
type Holdout struct {
	Score
	Cases []CaseResult
}

func holdoutScore(cases []CaseResult) Score {
	s := Score{Total: int64(len(cases))}
	for i := range cases {
		if cases[i].Passed {
			s.Passed++
		}
	}
	return s
}

// Lineage names the generator and its run.
type Lineage struct{ GeneratorDigest, ReceiptDigest string }

// Report is an algal.foundry.v1 report.
type Report struct {
	Candidates []CandidateResult
	Promoted   string
	Holdout    Holdout
	Scorer     *evidence.Scorer
	Lineage    *Lineage
	// Budget is the complete habitat account when the config declared a
	// budget.
	Budget *Account
	Digest string
}

// Value returns the report as a canonical JSON value, digest included when
// set.
func (r *Report) Value() map[string]any {
	return evidence.WithDigest(r.body(), r.Digest)
}

func (r *Report) body() map[string]any {
	cands := make([]any, len(r.Candidates))
	for i := range r.Candidates {
		cands[i] = r.Candidates[i].value()
	}
	hc := make([]any, len(r.Holdout.Cases))
	for i := range r.Holdout.Cases {
		hc[i] = r.Holdout.Cases[i].value()
	}
	v := map[string]any{
		"contract": ReportContract, "candidates": cands, "promoted": r.Promoted,
		"holdout": map[string]any{"passed": float64(r.Holdout.Passed), "total": float64(r.Holdout.Total), "cases": hc},
	}
	if r.Scorer != nil {
		v["scorer"] = r.Scorer.Envelope
	}
	if r.Lineage != nil {
		v["lineage"] = map[string]any{"generatorDigest": r.Lineage.GeneratorDigest, "receiptDigest": r.Lineage.ReceiptDigest}
	}
	if r.Budget != nil {
		v["budget"] = r.Budget.Value()
	}
	return v
}

// Encode returns the canonical bytes of the report.
func (r *Report) Encode() ([]byte, error) { return canon.Encode(r.Value()) }

func (r *Report) seal() error {
	d, err := canon.Digest(r.body())
	r.Digest = d
	return err
}

// Tiebreak names the promotion criterion that separates two candidates.
type Tiebreak int

// Promotion criteria in order.
const (
	ByValidation Tiebreak = iota
	ByTrain
	ByAgentCalls
	ByUnits
	ByDigest
	Identical // same digest: cannot happen in an admitted population
)

// String is the criterion's column name in reports.
func (t Tiebreak) String() string {
	switch t {
	case ByValidation:
		return "validation"
	case ByTrain:
		return "train"
	case ByAgentCalls:
		return "agent calls"
	case ByUnits:
		return "work units"
	case ByDigest:
		return "digest"
	}
	return "identical"
}

// Decider names the criterion that orders a and b; reports show it so a
// reader sees why one candidate ranks above the next (a one-unit work
// difference decides as surely as a validation rate).
func Decider(a, b *CandidateResult) Tiebreak {
	_, by := compareCandidates(a, b)
	return by
}

// compareCandidates orders a before b (negative) when a promotes first:
// validation rate desc, train rate desc, agent calls asc, work units asc,
// manifest digest asc. It also names the deciding criterion.
func compareCandidates(a, b *CandidateResult) (int, Tiebreak) {
	if d := cmpRate(b.Validation, a.Validation); d != 0 {
		return d, ByValidation
	}
	if d := cmpRate(b.Train, a.Train); d != 0 {
		return d, ByTrain
	}
	if d := cmp.Compare(a.Work.AgentCalls, b.Work.AgentCalls); d != 0 {
		return d, ByAgentCalls
	}
	if d := cmp.Compare(a.Work.Units, b.Work.Units); d != 0 {
		return d, ByUnits
	}
	if d := strings.Compare(a.ManifestDigest, b.ManifestDigest); d != 0 {
		return d, ByDigest
	}
	return 0, Identical
}

// Rank returns candidate indexes in promotion order.
func Rank(cands []CandidateResult) []int {
	idx := make([]int, len(cands))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(i, j int) int {
		d, _ := compareCandidates(&cands[i], &cands[j])
		return d
	})
	return idx
}

// Promote returns the deterministic winner's manifest digest ("" for an
// empty population).
func Promote(cands []CandidateResult) string {
	if len(cands) == 0 {
		return ""
	}
	return cands[Rank(cands)[0]].ManifestDigest
}
