package diff

import (
	"math/big"

	"github.com/algal-assay/assay/engine/foundry"
	"github.com/algal-assay/assay/engine/significance"
	"github.com/algal-assay/assay/harness/repeats"
	"github.com/algal-assay/assay/harness/workload"
)

// samples are one side's per-case samples of every contender: the
// repeats aggregate's, or one sample per case of a single run.
type samples struct {
	repeated bool
	by       map[string]*repeats.Contender
	holdout  []repeats.Case
}

func sideSamples(r *Run) *samples {
	s := &samples{by: map[string]*repeats.Contender{}}
	if r == nil {
		return s
	}
	k, cs := contenderSamples(r)
	s.repeated = k > 1
	for i := range cs {
		if _, dup := s.by[cs[i].ID]; !dup {
			s.by[cs[i].ID] = &cs[i]
		}
	}
	s.holdout = holdoutSamples(r)
	return s
}

// holdoutSamples are a run's holdout cases: the repeats aggregate's, or
// one sample per case of a single foundry run.
func holdoutSamples(r *Run) []repeats.Case {
	if r.Repeats != nil && r.Repeats.Holdout != nil {
		return r.Repeats.Holdout.Cases
	}
	if r.Foundry == nil {
		return nil
	}
	var out []repeats.Case
	for _, c := range r.Foundry.Holdout.Cases {
		rc := repeats.Case{ID: c.ID, Split: foundry.SplitHoldout, Runs: 1}
		if c.Passed {
			rc.PassedIn = []int{1}
		}
		out = append(out, rc)
	}
	return out
}

func count(c repeats.Case) significance.Count {
	return significance.Count{Passed: len(c.PassedIn), Runs: c.Runs}
}

// cases are id's cases of split ("" for all).
func (s *samples) cases(id, split string) []repeats.Case {
	c := s.by[id]
	if c == nil {
		return nil
	}
	if split == "" {
		return c.Cases
	}
	var out []repeats.Case
	for _, x := range c.Cases {
		if x.Split == split {
			out = append(out, x)
		}
	}
	return out
}

// interval is the 95% interval of a pass rate: clustered by case over
// the cases with repeats, Wilson's of the rate without.
func (s *samples) interval(cases []repeats.Case, r Rate) significance.Interval {
	if !s.repeated {
		return significance.Wilson(int(r.Passed), int(r.Total))
	}
	cs := make([]significance.Count, len(cases))
	for i, c := range cases {
		cs[i] = count(c)
	}
	return significance.Clustered(cs)
}

// pair matches two case lists by id, in head order.
func pair(base, head []repeats.Case) []significance.Pair {
	at := make(map[string]significance.Count, len(base))
	for _, c := range base {
		at[c.ID] = count(c)
	}
	var out []significance.Pair
	for _, c := range head {
		if b, ok := at[c.ID]; ok {
			out = append(out, significance.Pair{Base: b, Head: count(c)})
		}
	}
	return out
}

func testOf(repeated bool) string {
	if repeated {
		return significance.PairedMean
	}
	return significance.McNemarExact
}

// compareSettings is the head's workload's compare block (the base's when
// the head does not run it).
func compareSettings(b, h *Run) workload.Compare {
	for _, r := range []*Run{h, b} {
		if r != nil && r.Compare.FailOn != "" {
			return r.Compare
		}
	}
	return workload.DefaultCompare()
}

// addStatistics puts the intervals, the paired tests and the promotion
// margins on a compared workload.
func addStatistics(w *Workload, b, h *Run) {
	set := compareSettings(b, h)
	bs, hs := sideSamples(b), sideSamples(h)
	st := &Statistics{Test: testOf(bs.repeated || hs.repeated), Alpha: significance.Figure(set.Alpha), FailOn: set.FailOn, Failures: []string{}}
	w.Statistics = st
	c := &statsPair{st: st, alpha: set.AlphaRat(), base: bs, head: hs}
	if bn := w.Bench; bn != nil {
		c.bench(bn, b, h)
	}
	if f := w.Foundry; f != nil {
		c.foundry(f)
	}
	st.MinFlips = significance.MinFlips(st.Test, st.Cases, c.alpha)
	if f := compareFailures(w); f != nil {
		st.Failures = f
	}
}

// statsPair is the statistics of a workload under way, with both sides'
// samples.
type statsPair struct {
	st *Statistics
	// alpha is the workload's alpha as the exact decimal written.
	alpha      *big.Rat
	base, head *samples
}

// change is the paired test of two case lists.
func (c *statsPair) change(base, head []repeats.Case) *significance.Change {
	ch := significance.Compare(c.st.Test, pair(base, head), c.alpha)
	return &ch
}

// bench adds each system's intervals and change, and the cases the test
// ran on (the head's, else the base's).
func (c *statsPair) bench(bn *Bench, b, h *Run) {
	for _, sys := range bn.Systems {
		if sys.Base != nil {
			sys.Base.PassRateCI95 = c.base.interval(c.base.cases(sys.ID, ""), Rate{Passed: sys.Base.Passed, Total: sys.Base.Total})
		}
		if sys.Head != nil {
			sys.Head.PassRateCI95 = c.head.interval(c.head.cases(sys.ID, ""), Rate{Passed: sys.Head.Passed, Total: sys.Head.Total})
		}
		if sys.Base != nil && sys.Head != nil {
			sys.Change = c.change(c.base.cases(sys.ID, ""), c.head.cases(sys.ID, ""))
		}
	}
	c.st.Cases = benchCases(b, h, c.st.Cases)
}

// benchCases are how many cases the bench ran (the head's, else the
// base's; else cases).
func benchCases(b, h *Run, cases int) int {
	for _, r := range []*Run{h, b} {
		if r != nil && r.Bench != nil {
			return len(r.Bench.Cases)
		}
	}
	return cases
}

// foundry adds each candidate's intervals and change, the promoted
// organisms' intervals and margins, and the change of the promoted one.
func (c *statsPair) foundry(f *Foundry) {
	for _, cand := range f.Candidates {
		c.candidate(cand)
	}
	c.promotion(c.base, f.Base, f.BaseRanking)
	c.promotion(c.head, f.Head, f.HeadRanking)
	if f.Base != nil && f.Head != nil && f.Base.Key != "" && f.Head.Key != "" {
		f.PromotedChange = c.change(c.base.cases(f.Base.Key, foundry.SplitValidation), c.head.cases(f.Head.Key, foundry.SplitValidation))
	}
	c.st.Cases = c.promotedCases(f)
}

// promotedCases are how many validation cases the promoted organism ran
// (the head's, else the base's; 0 when neither promoted one).
func (c *statsPair) promotedCases(f *Foundry) int {
	if f.Head != nil && f.Head.Key != "" {
		return len(c.head.cases(f.Head.Key, foundry.SplitValidation))
	}
	if f.Base != nil && f.Base.Key != "" {
		return len(c.base.cases(f.Base.Key, foundry.SplitValidation))
	}
	return c.st.Cases
}

// candidate adds a candidate's intervals on each side and, when both
// sides ran it, its change on validation.
func (c *statsPair) candidate(cand *CandidatePair) {
	candidateIntervals(c.base, cand.Key, cand.Base)
	candidateIntervals(c.head, cand.Key, cand.Head)
	if cand.Base != nil && cand.Head != nil {
		cand.Change = c.change(c.base.cases(cand.Key, foundry.SplitValidation), c.head.cases(cand.Key, foundry.SplitValidation))
	}
}

// candidateIntervals sets a candidate's validation and train intervals
// on one side (none when the side does not have it).
func candidateIntervals(s *samples, key string, cs *CandidateStats) {
	if cs == nil {
		return
	}
	cs.Validation.PassRateCI95 = s.interval(s.cases(key, foundry.SplitValidation), cs.Validation)
	cs.Train.PassRateCI95 = s.interval(s.cases(key, foundry.SplitTrain), cs.Train)
}

// promotion sets one side's promoted organism's intervals and, when the
// ranking has a runner-up, its margin over it.
func (c *statsPair) promotion(s *samples, p *Promotion, ranking []RankPlace) {
	if p == nil || p.Key == "" {
		return
	}
	p.Validation.PassRateCI95 = s.interval(s.cases(p.Key, foundry.SplitValidation), p.Validation)
	p.Train.PassRateCI95 = s.interval(s.cases(p.Key, foundry.SplitTrain), p.Train)
	p.Holdout.PassRateCI95 = s.interval(s.holdout, p.Holdout)
	if len(ranking) < 2 {
		return
	}
	win, run := ranking[0].Key, ranking[1].Key
	ch := significance.Compare(testOf(s.repeated), pair(s.cases(run, foundry.SplitValidation), s.cases(win, foundry.SplitValidation)), c.alpha)
	p.Margin = &Margin{Winner: win, RunnerUp: run, Split: foundry.SplitValidation, Test: ch.Test, PairedCases: ch.PairedCases,
		WinnerOnly: ch.Fixed, RunnerUpOnly: ch.Broken, PValue: ch.PValue, Significant: ch.Significant}
}
