package diff

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	ghci "github.com/algal-assay/assay/ci/github"
	"github.com/algal-assay/assay/engine/foundry"
	"github.com/algal-assay/assay/harness/passk"
	"github.com/algal-assay/assay/harness/repeats"
)

// TitleFlaky is the comment section on workloads run with repeats.
const TitleFlaky = "Flakiness (repeats)"

// Repeats compares a workload run with repeats on either side: each
// contender's pass rate and pass^k (k = that side's repeats) and its
// flaky cases, and which cases became or stopped being flaky. A side run
// once has a pass rate, pass^1 and no flaky case (one sample cannot be
// flaky). With repeats, the Bench and Foundry comparisons read the pooled
// view (repeats.Aggregate.PooledBench): passed counts case runs over all
// repeats, tokens, cost and calls are per-repeat means, a case passes
// when it passed in every repeat, and the Pareto set is the pooled one.
type Repeats struct {
	BaseRepeats  int                `json:"baseRepeats"` // 0 when the side has no run
	HeadRepeats  int                `json:"headRepeats"`
	Contenders   []*RepeatContender `json:"contenders"`
	BecameFlaky  []FlakyCase        `json:"becameFlaky"`
	StoppedFlaky []FlakyCase        `json:"stoppedFlaky"`
}

// RepeatContender is one system or candidate on both sides.
type RepeatContender struct {
	ID   string       `json:"id"`
	Base *RepeatStats `json:"base"`
	Head *RepeatStats `json:"head"`
}

// RepeatStats are one side's samples of one contender. Rates are exact
// fractions ("11/12"), "n/a" when undefined.
type RepeatStats struct {
	Repeats  int      `json:"repeats"`
	Samples  int      `json:"samples"`
	Passes   int      `json:"passes"`
	PassRate string   `json:"passRate"`
	PassHatK string   `json:"passHatK"`
	Flaky    []string `json:"flaky"`

	rate, hatK passk.Estimate
}

// FlakyCase is a case that is flaky on one side: the repeats it passed
// in there, of how many.
type FlakyCase struct {
	Subject  string `json:"subject"`
	Case     string `json:"case"`
	PassedIn []int  `json:"passedIn"`
	Runs     int    `json:"runs"`
}

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
	s := &RepeatStats{Repeats: k, Samples: c.Samples, Passes: c.Passes, Flaky: c.Flaky(), rate: c.PassRate(), hatK: c.PassHatK(k)}
	if s.Flaky == nil {
		s.Flaky = []string{}
	}
	s.PassRate, s.PassHatK = s.rate.Fraction(), s.hatK.Fraction()
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

// changed reports whether a case became or stopped being flaky, or the
// number of repeats changed.
func (r *Repeats) changed() bool {
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

// withRepeats puts the flakiness section after the promotions when a
// workload ran with repeats.
func withRepeats(s []ghci.Section, d *Diff) []ghci.Section {
	md := repeatsMD(d)
	if md == "" {
		return s
	}
	at := len(s)
	for i, x := range s {
		if x.Title == TitlePromotions {
			at = i + 1
		}
	}
	return slices.Insert(s, at, ghci.Section{Title: TitleFlaky, Markdown: md})
}

func statsCell(s *RepeatStats, f func(*RepeatStats) string) string {
	if s == nil {
		return "—"
	}
	return f(s)
}

func repeatsMD(d *Diff) string {
	var b strings.Builder
	for _, w := range d.Workloads {
		if w.Repeats != nil {
			workloadRepeatsMD(&b, w.Name, w.Repeats)
		}
	}
	return b.String()
}

// workloadRepeatsMD writes one workload's repeats: a row per contender,
// then the cases that became or stopped being flaky.
func workloadRepeatsMD(b *strings.Builder, name string, r *Repeats) {
	fmt.Fprintf(b, "### %s (%s)\n\n", text(name), repeatsShape(r))
	b.WriteString("| contender | pass rate base → head | pass^k base → head | flaky at head |\n| --- | --- | --- | --- |\n")
	rate := func(s *RepeatStats) string { return s.rate.String() }
	hat := func(s *RepeatStats) string { return fmt.Sprintf("%s (k=%d)", s.hatK.String(), s.Repeats) }
	for _, c := range r.Contenders {
		fmt.Fprintf(b, "| %s | %s → %s | %s → %s | %s |\n", cell(c.ID), statsCell(c.Base, rate), statsCell(c.Head, rate), statsCell(c.Base, hat), statsCell(c.Head, hat), flakyCell(c.Head))
	}
	b.WriteString("\n")
	for _, l := range []struct {
		title string
		cases []FlakyCase
	}{{"Became flaky", r.BecameFlaky}, {"Stopped being flaky", r.StoppedFlaky}} {
		flakyListMD(b, l.title, l.cases)
	}
	if len(r.BecameFlaky) == 0 && len(r.StoppedFlaky) == 0 {
		b.WriteString("No case became or stopped being flaky.\n\n")
	}
}

// flakyCell is how many of a contender's cases are flaky at head, and
// which.
func flakyCell(head *RepeatStats) string {
	if head == nil {
		return "—"
	}
	s := fmt.Sprint(len(head.Flaky))
	if len(head.Flaky) > 0 {
		s += " (" + strings.Join(texts(head.Flaky), ", ") + ")"
	}
	return s
}

// flakyListMD writes a titled list of flaky cases (nothing when empty).
func flakyListMD(b *strings.Builder, title string, cases []FlakyCase) {
	if len(cases) == 0 {
		return
	}
	fmt.Fprintf(b, "%s:\n\n", title)
	for _, f := range cases {
		fmt.Fprintf(b, "- %s case %s: passed in %s of %d repeats\n", code(f.Subject), code(f.Case), repeatList(f.PassedIn), f.Runs)
	}
	b.WriteString("\n")
}

func repeatsShape(r *Repeats) string {
	switch {
	case r.BaseRepeats == 0:
		return fmt.Sprintf("%d repeats at head", r.HeadRepeats)
	case r.HeadRepeats == 0:
		return fmt.Sprintf("%d repeats at base", r.BaseRepeats)
	case r.BaseRepeats == r.HeadRepeats:
		return fmt.Sprintf("%d repeats", r.HeadRepeats)
	}
	return fmt.Sprintf("%d repeats at base, %d at head", r.BaseRepeats, r.HeadRepeats)
}

func repeatList(rs []int) string {
	if len(rs) == 0 {
		return "none"
	}
	s := make([]string, len(rs))
	for i, r := range rs {
		s[i] = fmt.Sprint(r)
	}
	return strings.Join(s, ", ")
}
