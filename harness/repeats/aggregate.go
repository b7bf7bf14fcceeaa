package repeats

import (
	"fmt"
	"slices"

	"github.com/algal-assay/assay/engine/bench"
	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/foundry"
	"github.com/algal-assay/assay/harness/passk"
	"github.com/algal-assay/assay/harness/rundir"
	"github.com/algal-assay/assay/harness/workload"
)

// File is repeats.json, the aggregate of a repeated run, beside its
// reports.
const File = "repeats.json"

// Contract names repeats.json's format. It is Assay's own file,
// not an ALGAL contract: every field is re-derived from the repeats'
// verified reports, never read as evidence.
const Contract = "assay.repeats.v1"

// Case verdicts over repeats.
const (
	VerdictPass  = "pass"  // passed in every repeat
	VerdictFail  = "fail"  // failed in every repeat
	VerdictFlaky = "flaky" // passed in some repeats, failed in others
)

// Aggregate is the aggregate of one run's repeats. For a bench, contenders
// are the systems in report order; for a foundry, the candidates by
// manifest digest in order of first appearance, with the promotion
// re-ranked on the evidence pooled over every repeat.
type Aggregate struct {
	Workload string
	Kind     workload.Kind
	K        int
	// Reports are the repeats' report (or exhausted account) digests, in
	// repeat order.
	Reports    []string
	Contenders []Contender
	// Pareto is the bench's Pareto set over the systems' samples pooled
	// over repeats (mean pass rate, mean cost or tokens, mean calls; or
	// the mean of each declared axis).
	Pareto []string
	// Promoted is the foundry candidate the pooled evidence promotes (the
	// contract's order on pooled validation and train rates, then summed
	// agent calls and work units, then digest); "" when a repeat exhausted
	// its habitat budget.
	Promoted string
	// Holdout is the promoted candidate's holdout over the repeats whose
	// own report promoted it too (each repeat runs its holdout once, on
	// its own winner).
	Holdout *Holdout
	// Exhausted lists the repeats that exhausted the habitat budget.
	Exhausted []int

	bench   []*bench.Report
	foundry []*foundry.Result
	// pooled are a foundry's candidates with scores and work summed over
	// repeats, in Contenders order: what the promotion ranks.
	pooled []foundry.CandidateResult
}

// Contender is one system or candidate over all repeats.
type Contender struct {
	ID             string // system id, or candidate manifest key
	ManifestDigest string
	// Cases are its cases (a foundry's selection cases), in report order.
	Cases []Case
	// Samples and Passes count case runs over all repeats.
	Samples, Passes int
	// Summed over repeats (bench).
	TokensIn, TokensOut, EffectCalls int64
	Cost                             float64
	// AxisValues are each declared axis's mean over repeats (bench).
	AxisValues map[string]float64
	// Foundry: pooled train and validation samples, and the repeats in
	// which this candidate was promoted.
	Train, Validation Pooled
	PromotedIn        []int
	UnknownUsage      bool
}

// Pooled counts the samples of one split.
type Pooled struct{ Samples, Passes int }

// Rate is the pooled pass rate.
func (p Pooled) Rate() passk.Estimate { return passk.Rate(p.Passes, p.Samples) }

// Case is one case of one contender over the repeats.
type Case struct {
	ID    string
	Split string // foundry only
	// Runs is how many repeats ran it; PassedIn the repeats (1-based) in
	// which it passed.
	Runs     int
	PassedIn []int
}

// Verdict is pass, fail or flaky ("" when never run).
func (c Case) Verdict() string {
	switch {
	case c.Runs == 0:
		return ""
	case len(c.PassedIn) == c.Runs:
		return VerdictPass
	case len(c.PassedIn) == 0:
		return VerdictFail
	}
	return VerdictFlaky
}

// Holdout is the promoted candidate's pooled holdout.
type Holdout struct {
	ManifestKey string
	Cases       []Case
	Samples     int
	Passes      int
}

// PassRate is passes over samples.
func (c *Contender) PassRate() passk.Estimate { return passk.Rate(c.Passes, c.Samples) }

// PassAtK is the mean over cases of the unbiased pass@k estimate.
func (c *Contender) PassAtK(k int) passk.Estimate {
	return meanOver(c.Cases, func(rc Case) passk.Estimate { return passk.PassAtK(rc.Runs, len(rc.PassedIn), k) })
}

// PassHatK is the mean over cases of the pass^k estimate.
func (c *Contender) PassHatK(k int) passk.Estimate {
	return meanOver(c.Cases, func(rc Case) passk.Estimate { return passk.PassHatK(rc.Runs, len(rc.PassedIn), k) })
}

func meanOver(cases []Case, f func(Case) passk.Estimate) passk.Estimate {
	es := make([]passk.Estimate, len(cases))
	for i, c := range cases {
		es[i] = f(c)
	}
	return passk.Mean(es)
}

// Flaky lists the ids of the contender's flaky cases, in case order.
func (c *Contender) Flaky() []string {
	var out []string
	for _, rc := range c.Cases {
		if rc.Verdict() == VerdictFlaky {
			out = append(out, rc.ID)
		}
	}
	return out
}

// Case finds a case by id.
func (c *Contender) Case(id string) *Case {
	for i := range c.Cases {
		if c.Cases[i].ID == id {
			return &c.Cases[i]
		}
	}
	return nil
}

// Contender finds a contender by id (system id or manifest key).
func (a *Aggregate) Contender(id string) *Contender {
	for i := range a.Contenders {
		if a.Contenders[i].ID == id {
			return &a.Contenders[i]
		}
	}
	return nil
}

// PromotedContender is the foundry's pooled winner (nil for a bench or
// when nothing was promoted).
func (a *Aggregate) PromotedContender() *Contender {
	for i := range a.Contenders {
		if a.Promoted != "" && a.Contenders[i].ManifestDigest == a.Promoted {
			return &a.Contenders[i]
		}
	}
	return nil
}

// PromotionOrder lists a foundry's contenders (indexes into Contenders)
// in the order the contract promotes them on the evidence pooled over
// every repeat: the pooled winner first.
func (a *Aggregate) PromotionOrder() []int { return foundry.Rank(a.pooled) }

// BenchReports are the repeats' reports, in repeat order (nil for a
// foundry).
func (a *Aggregate) BenchReports() []*bench.Report { return a.bench }

// FoundryResults are the repeats' results, in repeat order (nil for a
// bench).
func (a *Aggregate) FoundryResults() []*foundry.Result { return a.foundry }

func (c *Case) add(rep int, passed bool) {
	c.Runs++
	if passed {
		c.PassedIn = append(c.PassedIn, rep)
	}
}

// AggregateBench aggregates the reports of a bench's repeats, in repeat
// order. Every report runs the same systems on the same cases.
func AggregateBench(name string, reps []*bench.Report) (*Aggregate, error) {
	a := &Aggregate{Workload: name, Kind: workload.KindBench, K: len(reps), bench: reps}
	if len(reps) == 0 {
		return nil, fmt.Errorf("no repeats to aggregate")
	}
	first := reps[0]
	for _, s := range first.Systems {
		rc := Contender{ID: s.ID, ManifestDigest: s.ManifestDigest}
		for _, c := range s.Cases {
			rc.Cases = append(rc.Cases, Case{ID: c.ID})
		}
		if first.Axes != nil {
			rc.AxisValues = map[string]float64{}
		}
		a.Contenders = append(a.Contenders, rc)
	}
	for i, rep := range reps {
		a.Reports = append(a.Reports, rep.Digest)
		if len(rep.Systems) != len(first.Systems) || rep.Workload != first.Workload {
			return nil, fmt.Errorf("%s does not measure the systems and cases of %s", workload.RepeatFile(rundir.ReportFile, i+1), rundir.ReportFile)
		}
		for si, s := range rep.Systems {
			rc := &a.Contenders[si]
			if s.ID != rc.ID || s.ManifestDigest != rc.ManifestDigest || len(s.Cases) != len(rc.Cases) {
				return nil, fmt.Errorf("%s: system %d is %q, not %q of %s", workload.RepeatFile(rundir.ReportFile, i+1), si+1, s.ID, rc.ID, rundir.ReportFile)
			}
			for ci, c := range s.Cases {
				rc.Cases[ci].add(i+1, c.Passed)
				rc.Samples++
				if c.Passed {
					rc.Passes++
				}
			}
			rc.TokensIn += s.Usage.TokensIn
			rc.TokensOut += s.Usage.TokensOut
			rc.EffectCalls += s.EffectCalls
			rc.Cost += s.Usage.Cost
			for _, ax := range first.Axes {
				rc.AxisValues[ax.Name] += s.AxisValues[ax.Name]
			}
		}
	}
	// Pareto over the pooled samples: sums order the systems as means do
	// (every system has the same number of samples), and axis values are
	// means.
	pooled := make([]bench.SystemResult, len(a.Contenders))
	for i := range a.Contenders {
		rc := &a.Contenders[i]
		for _, ax := range first.Axes {
			rc.AxisValues[ax.Name] /= float64(a.K)
		}
		pooled[i] = bench.SystemResult{ID: rc.ID, ManifestDigest: rc.ManifestDigest, Passed: int64(rc.Passes), Total: int64(rc.Samples),
			EffectCalls: rc.EffectCalls, Usage: bench.Tally{TokensIn: rc.TokensIn, TokensOut: rc.TokensOut, Cost: rc.Cost}, AxisValues: rc.AxisValues}
	}
	a.Pareto = bench.Pareto(pooled, first.Prices, first.Axes)
	return a, nil
}

// AggregateFoundry aggregates the results of a foundry's repeats, in
// repeat order.
func AggregateFoundry(name string, res []*foundry.Result) (*Aggregate, error) {
	a := &Aggregate{Workload: name, Kind: workload.KindFoundry, K: len(res), foundry: res}
	if len(res) == 0 {
		return nil, fmt.Errorf("no repeats to aggregate")
	}
	byDigest := map[string]int{}
	pooled := []foundry.CandidateResult{}
	var holdoutIDs []string
	for i, r := range res {
		rep := i + 1
		if r.Report == nil {
			a.Exhausted = append(a.Exhausted, rep)
			digest := ""
			if r.Exhausted != nil {
				digest, _ = canon.Digest(r.Exhausted.Value())
			}
			a.Reports = append(a.Reports, digest)
			continue
		}
		a.Reports = append(a.Reports, r.Report.Digest)
		if holdoutIDs == nil {
			for _, c := range r.Report.Holdout.Cases {
				holdoutIDs = append(holdoutIDs, c.ID)
			}
		}
		for _, c := range r.Report.Candidates {
			at, ok := byDigest[c.ManifestDigest]
			if !ok {
				at = len(a.Contenders)
				byDigest[c.ManifestDigest] = at
				rc := Contender{ID: c.ManifestKey, ManifestDigest: c.ManifestDigest}
				for _, cs := range c.Cases {
					rc.Cases = append(rc.Cases, Case{ID: cs.ID, Split: cs.Split})
				}
				a.Contenders = append(a.Contenders, rc)
				pooled = append(pooled, foundry.CandidateResult{ManifestDigest: c.ManifestDigest, ManifestKey: c.ManifestKey})
			}
			rc := &a.Contenders[at]
			if len(c.Cases) != len(rc.Cases) {
				return nil, fmt.Errorf("%s: candidate %s has %d cases, not %d", workload.RepeatFile(rundir.ReportFile, rep), c.ManifestKey, len(c.Cases), len(rc.Cases))
			}
			for ci, cs := range c.Cases {
				if cs.ID != rc.Cases[ci].ID {
					return nil, fmt.Errorf("%s: candidate %s case %d is %q, not %q", workload.RepeatFile(rundir.ReportFile, rep), c.ManifestKey, ci+1, cs.ID, rc.Cases[ci].ID)
				}
				rc.Cases[ci].add(rep, cs.Passed)
				rc.Samples++
				if cs.Passed {
					rc.Passes++
				}
			}
			rc.Train.Samples += int(c.Train.Total)
			rc.Train.Passes += int(c.Train.Passed)
			rc.Validation.Samples += int(c.Validation.Total)
			rc.Validation.Passes += int(c.Validation.Passed)
			if c.ManifestDigest == r.Report.Promoted {
				rc.PromotedIn = append(rc.PromotedIn, rep)
			}
			p := &pooled[at]
			p.Train.Passed += c.Train.Passed
			p.Train.Total += c.Train.Total
			p.Validation.Passed += c.Validation.Passed
			p.Validation.Total += c.Validation.Total
			p.Work.Add(c.Work)
		}
	}
	a.pooled = pooled
	if len(a.Exhausted) > 0 || len(pooled) == 0 {
		return a, nil
	}
	winner := &a.Contenders[foundry.Rank(pooled)[0]]
	a.Promoted = winner.ManifestDigest
	h := &Holdout{ManifestKey: winner.ID}
	for _, id := range holdoutIDs {
		h.Cases = append(h.Cases, Case{ID: id, Split: foundry.SplitHoldout})
	}
	for _, rep := range winner.PromotedIn {
		for _, c := range res[rep-1].Report.Holdout.Cases {
			for hi := range h.Cases {
				if h.Cases[hi].ID == c.ID {
					h.Cases[hi].add(rep, c.Passed)
					h.Samples++
					if c.Passed {
						h.Passes++
					}
				}
			}
		}
	}
	a.Holdout = h
	return a, nil
}

// Value is repeats.json's canonical JSON form. Estimates are
// passk.Estimate values: {"exact": fraction, "value": number} or null
// when there are fewer samples than k.
func (a *Aggregate) Value() map[string]any {
	reports := make([]any, len(a.Reports))
	for i, d := range a.Reports {
		file := workload.RepeatFile(rundir.ReportFile, i+1)
		if slices.Contains(a.Exhausted, i+1) {
			file = workload.RepeatFile(rundir.BudgetFile, i+1)
		}
		reports[i] = map[string]any{"repeat": float64(i + 1), "file": file, "digest": d}
	}
	cs := make([]any, len(a.Contenders))
	for i := range a.Contenders {
		cs[i] = a.contenderValue(&a.Contenders[i])
	}
	v := map[string]any{"contract": Contract, "workload": a.Workload, "kind": string(a.Kind),
		"repeats": float64(a.K), "reports": reports, "contenders": cs}
	if a.Kind == workload.KindBench {
		v["pareto"] = canon.Strings(a.Pareto)
		return v
	}
	v["promoted"] = nil
	if a.Promoted != "" {
		v["promoted"] = a.Promoted
	}
	v["holdout"] = nil
	if h := a.Holdout; h != nil {
		v["holdout"] = map[string]any{"manifestKey": h.ManifestKey, "samples": float64(h.Samples), "passes": float64(h.Passes),
			"passRate": passk.Rate(h.Passes, h.Samples).Value(), "passRateCI95": ClusteredCI(h.Cases, "").Value(), "cases": casesValue(h.Cases)}
	}
	ex := make([]any, len(a.Exhausted))
	for i, r := range a.Exhausted {
		ex[i] = float64(r)
	}
	v["exhausted"] = ex
	return v
}

func (a *Aggregate) contenderValue(c *Contender) map[string]any {
	ests := make([]any, a.K)
	for k := 1; k <= a.K; k++ {
		ests[k-1] = map[string]any{"k": float64(k), "passAtK": c.PassAtK(k).Value(), "passHatK": c.PassHatK(k).Value()}
	}
	v := map[string]any{"id": c.ID, "manifestDigest": c.ManifestDigest, "samples": float64(c.Samples), "passes": float64(c.Passes),
		"passRate": c.PassRate().Value(), "passRateCI95": c.PassRateCI95("").Value(), "estimates": ests, "flaky": canon.Strings(c.Flaky()), "cases": casesValue(c.Cases)}
	if a.Kind == workload.KindBench {
		v["tokensIn"], v["tokensOut"], v["effectCalls"], v["cost"] = float64(c.TokensIn), float64(c.TokensOut), float64(c.EffectCalls), c.Cost
		if c.AxisValues != nil {
			av := map[string]any{}
			for k, x := range c.AxisValues {
				av[k] = x
			}
			v["axisValues"] = av
		}
		return v
	}
	pooled := func(p Pooled, split string) map[string]any {
		return map[string]any{"samples": float64(p.Samples), "passes": float64(p.Passes), "rate": p.Rate().Value(), "passRateCI95": c.PassRateCI95(split).Value()}
	}
	v["train"], v["validation"] = pooled(c.Train, foundry.SplitTrain), pooled(c.Validation, foundry.SplitValidation)
	in := make([]any, len(c.PromotedIn))
	for i, r := range c.PromotedIn {
		in[i] = float64(r)
	}
	v["promotedIn"] = in
	return v
}

func casesValue(cases []Case) []any {
	out := make([]any, len(cases))
	for i, c := range cases {
		in := make([]any, len(c.PassedIn))
		for j, r := range c.PassedIn {
			in[j] = float64(r)
		}
		cv := map[string]any{"id": c.ID, "runs": float64(c.Runs), "passedIn": in, "verdict": c.Verdict()}
		if c.Split != "" {
			cv["split"] = c.Split
		}
		out[i] = cv
	}
	return out
}

// PooledBench is the bench report readers that know no repeats (the PR
// diff, pr.html) compare: every system's passed and total count its case
// runs over all repeats, tokens, cost and calls are per-repeat means
// (rounded half up), axis values are means, a case passed when it passed
// in every repeat, and the Pareto set is the pooled one. It is a view, not
// a report: it has no digest and is never verified or written.
func (a *Aggregate) PooledBench() *bench.Report {
	if len(a.bench) == 0 {
		return nil
	}
	first := a.bench[0]
	k := int64(a.K)
	mean := func(total int64) int64 { return (total + k/2) / k }
	r := &bench.Report{Workload: first.Workload, Cases: first.Cases, Prices: first.Prices, Scorer: first.Scorer, Axes: first.Axes, Pareto: slices.Clone(a.Pareto)}
	for si, s := range first.Systems {
		c := &a.Contenders[si]
		ps := bench.SystemResult{ID: s.ID, ManifestDigest: s.ManifestDigest, ManifestKey: s.ManifestKey,
			Passed: int64(c.Passes), Total: int64(c.Samples), EffectCalls: mean(c.EffectCalls),
			Usage: bench.Tally{TokensIn: mean(c.TokensIn), TokensOut: mean(c.TokensOut), Cost: c.Cost / float64(a.K)}, AxisValues: c.AxisValues}
		for ci, cr := range s.Cases {
			cr.Passed = c.Cases[ci].Verdict() == VerdictPass
			ps.Cases = append(ps.Cases, cr)
		}
		r.Systems = append(r.Systems, ps)
	}
	return r
}

// PooledFoundry is PooledBench for a foundry: candidates with their train
// and validation samples pooled, work summed, a case passed when it passed
// in every repeat it ran in, the pooled promotion, and the promoted
// candidate's pooled holdout. Nil when a repeat exhausted its budget.
func (a *Aggregate) PooledFoundry() *foundry.Report {
	if len(a.foundry) == 0 || a.Promoted == "" {
		return nil
	}
	r := &foundry.Report{Promoted: a.Promoted}
	seen := map[string]bool{}
	for _, res := range a.foundry {
		rep := res.Report
		if r.Scorer == nil {
			r.Scorer, r.Lineage = rep.Scorer, rep.Lineage
		}
		for _, c := range rep.Candidates {
			if seen[c.ManifestDigest] {
				continue
			}
			seen[c.ManifestDigest] = true
			i := slices.IndexFunc(a.Contenders, func(x Contender) bool { return x.ManifestDigest == c.ManifestDigest })
			rc, p := &a.Contenders[i], a.pooled[i]
			pc := foundry.CandidateResult{ManifestDigest: c.ManifestDigest, ManifestKey: c.ManifestKey, Train: p.Train, Validation: p.Validation, Work: p.Work, Usage: c.Usage}
			for ci, cs := range c.Cases {
				cs.Passed = rc.Cases[ci].Verdict() == VerdictPass
				pc.Cases = append(pc.Cases, cs)
			}
			r.Candidates = append(r.Candidates, pc)
		}
	}
	if h := a.Holdout; h != nil {
		r.Holdout.Score = foundry.Score{Passed: int64(h.Passes), Total: int64(h.Samples)}
		if w := a.PromotedContender(); len(w.PromotedIn) > 0 {
			for hi, c := range a.foundry[w.PromotedIn[0]-1].Report.Holdout.Cases {
				c.Passed = h.Cases[hi].Verdict() == VerdictPass
				r.Holdout.Cases = append(r.Holdout.Cases, c)
			}
		}
	}
	return r
}
