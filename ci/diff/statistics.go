package diff

import (
	"math/big"

	"github.com/algal-assay/assay/engine/foundry"
	"github.com/algal-assay/assay/engine/significance"
	"github.com/algal-assay/assay/harness"
)

// Statistics is how a workload's changes are tested (engine/significance)
// and what the workload's `compare:` block makes of them.
type Statistics struct {
	// Test is mcnemar-exact, or paired-mean when a side ran with repeats.
	Test   string              `json:"test"`
	Alpha  significance.Figure `json:"alpha"`
	FailOn string              `json:"failOn"`
	// Cases is how many cases the test pairs at most (a bench's cases, a
	// foundry's validation cases, at head); MinFlips the fewest that must
	// flip one way before a change can be significant, 0 when none can.
	Cases    int `json:"cases"`
	MinFlips int `json:"minFlips"`
	// Failures are the changes that fail the check under FailOn.
	Failures []string `json:"failures"`

	alpha *big.Rat
}

// Margin is how clearly a foundry side's promoted candidate beat the next
// one on the validation cases: the paired test of the two (winnerOnly
// counts the cases only the winner passes, or, with repeats, whose pass
// rate is higher for the winner).
type Margin struct {
	Winner       string              `json:"winner"`
	RunnerUp     string              `json:"runnerUp"`
	Split        string              `json:"split"`
	Test         string              `json:"test"`
	PairedCases  int                 `json:"pairedCases"`
	WinnerOnly   int                 `json:"winnerOnly"`
	RunnerUpOnly int                 `json:"runnerUpOnly"`
	PValue       significance.Figure `json:"pValue"`
	Significant  bool                `json:"significant"`
}

// samples are one side's per-case samples of every contender: the
// repeats aggregate's, or one sample per case of a single run.
type samples struct {
	repeated bool
	by       map[string]*harness.RepeatContender
	holdout  []harness.RepeatCase
}

func sideSamples(r *Run) *samples {
	s := &samples{by: map[string]*harness.RepeatContender{}}
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
	switch {
	case r.Repeats != nil && r.Repeats.Holdout != nil:
		s.holdout = r.Repeats.Holdout.Cases
	case r.Foundry != nil:
		for _, c := range r.Foundry.Holdout.Cases {
			rc := harness.RepeatCase{ID: c.ID, Split: foundry.SplitHoldout, Runs: 1}
			if c.Passed {
				rc.PassedIn = []int{1}
			}
			s.holdout = append(s.holdout, rc)
		}
	}
	return s
}

func count(c harness.RepeatCase) significance.Count {
	return significance.Count{Passed: len(c.PassedIn), Runs: c.Runs}
}

// cases are id's cases of split ("" for all).
func (s *samples) cases(id, split string) []harness.RepeatCase {
	c := s.by[id]
	if c == nil {
		return nil
	}
	if split == "" {
		return c.Cases
	}
	var out []harness.RepeatCase
	for _, x := range c.Cases {
		if x.Split == split {
			out = append(out, x)
		}
	}
	return out
}

// interval is the 95% interval of a pass rate: clustered by case over
// the cases with repeats, Wilson's of the rate without.
func (s *samples) interval(cases []harness.RepeatCase, r Rate) significance.Interval {
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
func pair(base, head []harness.RepeatCase) []significance.Pair {
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
func compareSettings(b, h *Run) harness.Compare {
	for _, r := range []*Run{h, b} {
		if r != nil && r.Compare.FailOn != "" {
			return r.Compare
		}
	}
	return harness.DefaultCompare()
}

// addStatistics puts the intervals, the paired tests and the promotion
// margins on a compared workload.
func addStatistics(w *Workload, b, h *Run) {
	set := compareSettings(b, h)
	bs, hs := sideSamples(b), sideSamples(h)
	st := &Statistics{Test: testOf(bs.repeated || hs.repeated), Alpha: significance.Figure(set.Alpha), FailOn: set.FailOn, Failures: []string{}, alpha: set.AlphaRat()}
	w.Statistics = st
	change := func(base, head []harness.RepeatCase) *significance.Change {
		ch := significance.Compare(st.Test, pair(base, head), st.alpha)
		return &ch
	}
	if bn := w.Bench; bn != nil {
		for _, sys := range bn.Systems {
			if sys.Base != nil {
				sys.Base.PassRateCI95 = bs.interval(bs.cases(sys.ID, ""), Rate{Passed: sys.Base.Passed, Total: sys.Base.Total})
			}
			if sys.Head != nil {
				sys.Head.PassRateCI95 = hs.interval(hs.cases(sys.ID, ""), Rate{Passed: sys.Head.Passed, Total: sys.Head.Total})
			}
			if sys.Base != nil && sys.Head != nil {
				sys.Change = change(bs.cases(sys.ID, ""), hs.cases(sys.ID, ""))
			}
		}
		if r := h; r != nil && r.Bench != nil {
			st.Cases = len(r.Bench.Cases)
		} else if b != nil && b.Bench != nil {
			st.Cases = len(b.Bench.Cases)
		}
	}
	if f := w.Foundry; f != nil {
		for _, c := range f.Candidates {
			for _, x := range []struct {
				s  *samples
				cs *CandidateStats
			}{{bs, c.Base}, {hs, c.Head}} {
				if x.cs != nil {
					x.cs.Validation.PassRateCI95 = x.s.interval(x.s.cases(c.Key, foundry.SplitValidation), x.cs.Validation)
					x.cs.Train.PassRateCI95 = x.s.interval(x.s.cases(c.Key, foundry.SplitTrain), x.cs.Train)
				}
			}
			if c.Base != nil && c.Head != nil {
				c.Change = change(bs.cases(c.Key, foundry.SplitValidation), hs.cases(c.Key, foundry.SplitValidation))
			}
		}
		for _, x := range []struct {
			s       *samples
			p       *Promotion
			ranking []RankPlace
		}{{bs, f.Base, f.BaseRanking}, {hs, f.Head, f.HeadRanking}} {
			p := x.p
			if p == nil || p.Key == "" {
				continue
			}
			p.Validation.PassRateCI95 = x.s.interval(x.s.cases(p.Key, foundry.SplitValidation), p.Validation)
			p.Train.PassRateCI95 = x.s.interval(x.s.cases(p.Key, foundry.SplitTrain), p.Train)
			p.Holdout.PassRateCI95 = x.s.interval(x.s.holdout, p.Holdout)
			if len(x.ranking) > 1 {
				win, run := x.ranking[0].Key, x.ranking[1].Key
				ch := significance.Compare(testOf(x.s.repeated), pair(x.s.cases(run, foundry.SplitValidation), x.s.cases(win, foundry.SplitValidation)), st.alpha)
				p.Margin = &Margin{Winner: win, RunnerUp: run, Split: foundry.SplitValidation, Test: ch.Test, PairedCases: ch.PairedCases,
					WinnerOnly: ch.Fixed, RunnerUpOnly: ch.Broken, PValue: ch.PValue, Significant: ch.Significant}
			}
		}
		if f.Base != nil && f.Head != nil && f.Base.Key != "" && f.Head.Key != "" {
			f.PromotedChange = change(bs.cases(f.Base.Key, foundry.SplitValidation), hs.cases(f.Head.Key, foundry.SplitValidation))
		}
		if f.Head != nil && f.Head.Key != "" {
			st.Cases = len(hs.cases(f.Head.Key, foundry.SplitValidation))
		} else if f.Base != nil && f.Base.Key != "" {
			st.Cases = len(bs.cases(f.Base.Key, foundry.SplitValidation))
		}
	}
	st.MinFlips = significance.MinFlips(st.Test, st.Cases, st.alpha)
	if f := compareFailures(w); f != nil {
		st.Failures = f
	}
}
