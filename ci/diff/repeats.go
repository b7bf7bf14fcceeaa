package diff

import (
	"maps"
	"slices"
	"strings"

	"github.com/algal-assay/assay/engine/foundry"
	"github.com/algal-assay/assay/harness/repeats"
)

// contenderSamples lists a run's contenders with their per-case samples:
// the aggregate's when the run has repeats, else one sample per case from
// its report.
func contenderSamples(r *Run) (int, []repeats.Contender) {
	if r == nil {
		return 0, nil
	}
	if r.Repeats != nil {
		return r.Repeats.K, r.Repeats.Contenders
	}
	var out []repeats.Contender
	for _, s := range r.BenchVerdicts {
		out = append(out, oneSample(s.ID, s.Cases, func(x CaseVerdict) (string, string, bool) { return x.ID, "", x.Passed }))
	}
	if r.Foundry != nil {
		for _, c := range r.Foundry.Candidates {
			out = append(out, oneSample(c.ManifestKey, c.Cases, func(x foundry.CaseResult) (string, string, bool) { return x.ID, x.Split, x.Passed }))
		}
	}
	return 1, out
}

// oneSample is a contender of a run without repeats: each of its cases,
// a bench's or a foundry's (outcome names each kind's id, split and
// verdict), run once.
func oneSample[C any](id string, cases []C, outcome func(C) (string, string, bool)) repeats.Contender {
	c := repeats.Contender{ID: id}
	for _, x := range cases {
		caseID, split, passed := outcome(x)
		rc := repeats.Case{ID: caseID, Split: split, Runs: 1}
		c.Samples++
		if passed {
			rc.PassedIn = []int{1}
			c.Passes++
		}
		c.Cases = append(c.Cases, rc)
	}
	return c
}

func repeatStats(k int, c *repeats.Contender) *RepeatStats {
	s := &RepeatStats{Repeats: k, Samples: c.Samples, Passes: c.Passes, Flaky: c.Flaky(),
		PassRate: c.PassRate().Fraction(), PassHatK: c.PassHatK(k).Fraction()}
	if s.Flaky == nil {
		s.Flaky = []string{}
	}
	return s
}

// compareRepeats is nil unless a side ran with repeats.
func compareRepeats(b, h *Run) *Repeats {
	if (b == nil || b.Repeats == nil) && (h == nil || h.Repeats == nil) {
		return nil
	}
	out := &Repeats{}
	var bcs, hcs []repeats.Contender
	out.BaseRepeats, bcs = contenderSamples(b)
	out.HeadRepeats, hcs = contenderSamples(h)
	out.Contenders = pairContenders(out.BaseRepeats, bcs, out.HeadRepeats, hcs)
	bf, hf := flakyCases(bcs), flakyCases(hcs)
	out.BecameFlaky, out.StoppedFlaky = onlyIn(hf, bf), onlyIn(bf, hf)
	return out
}

// repeatsChanged reports whether a case became or stopped being flaky,
// or the number of repeats changed.
func repeatsChanged(r *Repeats) bool {
	return len(r.BecameFlaky) > 0 || len(r.StoppedFlaky) > 0 || r.BaseRepeats != r.HeadRepeats
}

// pairContenders pairs each contender's repeat figures on the two sides,
// head order first, then contenders only the base ran.
func pairContenders(bk int, bcs []repeats.Contender, hk int, hcs []repeats.Contender) []*RepeatContender {
	out := []*RepeatContender{}
	byID := map[string]*RepeatContender{}
	get := func(id string) *RepeatContender {
		if c, ok := byID[id]; ok {
			return c
		}
		c := &RepeatContender{ID: id}
		byID[id] = c
		out = append(out, c)
		return c
	}
	for i := range hcs {
		get(hcs[i].ID).Head = repeatStats(hk, &hcs[i])
	}
	for i := range bcs {
		get(bcs[i].ID).Base = repeatStats(bk, &bcs[i])
	}
	return out
}

// flakyCases are the flaky cases of every contender, keyed by contender
// and case id.
func flakyCases(cs []repeats.Contender) map[string]repeats.Case {
	m := map[string]repeats.Case{}
	for _, c := range cs {
		for _, rc := range c.Cases {
			if rc.Verdict() == repeats.VerdictFlaky {
				m[c.ID+"\x00"+rc.ID] = rc
			}
		}
	}
	return m
}

// onlyIn are the flaky cases of a that b does not have, sorted by key.
func onlyIn(a, b map[string]repeats.Case) []FlakyCase {
	out := []FlakyCase{}
	for _, key := range slices.Sorted(maps.Keys(a)) {
		if _, ok := b[key]; ok {
			continue
		}
		rc := a[key]
		subject, _, _ := strings.Cut(key, "\x00")
		out = append(out, FlakyCase{Subject: subject, Case: rc.ID, PassedIn: rc.PassedIn, Runs: rc.Runs})
	}
	return out
}
