package report

import (
	"fmt"
	"math/big"
	"slices"
	"strings"
)

// TitleFlaky is the comment section on workloads run with repeats.
const TitleFlaky = "Flakiness (repeats)"

// withRepeats puts the flakiness section after the promotions when a
// workload ran with repeats.
func withRepeats(s []Section, d *Diff) []Section {
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
	return slices.Insert(s, at, Section{Title: TitleFlaky, Markdown: md})
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
func workloadRepeatsMD(b *strings.Builder, name string, r *DiffRepeats) {
	fmt.Fprintf(b, "### %s (%s)\n\n", text(name), repeatsShape(r))
	b.WriteString("| contender | pass rate base → head | pass^k base → head | flaky at head |\n| --- | --- | --- | --- |\n")
	rate := func(s *RepeatStats) string { return threeDecimals(s.PassRate) }
	hat := func(s *RepeatStats) string { return fmt.Sprintf("%s (k=%d)", threeDecimals(s.PassHatK), s.Repeats) }
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
		fmt.Fprintf(b, "- %s case %s: passed in %s of %d repeats\n", CodeSpan(f.Subject), CodeSpan(f.Case), repeatList(f.PassedIn), f.Runs)
	}
	b.WriteString("\n")
}

func repeatsShape(r *DiffRepeats) string {
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

// threeDecimals writes an exact fraction ("11/12") with three decimals,
// rounded half away from zero ("0.917"), as harness/passk's estimates
// print; "n/a" (an undefined estimate) stays "n/a".
func threeDecimals(fraction string) string {
	r, ok := new(big.Rat).SetString(fraction)
	if !ok {
		return "n/a"
	}
	return r.FloatString(3)
}
