package report

import (
	"fmt"
	"maps"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/algal-assay/assay/engine/vm"
)

// The comment's regressions, archived receipts and case flips sections.

func regressionsMD(d *Diff, o MarkdownOptions) string {
	if len(d.Regressions) == 0 {
		return "No regressions: no pass rate dropped and no case went from pass to fail.\n"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "<details><summary>%s, largest first</summary>\n\n", howMany(len(d.Regressions), "regression"))
	b.WriteString("| workload | subject | measure | base | head | Δ | cases now failing |\n| --- | --- | --- | --- | --- | --- | --- |\n")
	for i, r := range d.Regressions {
		if i == o.rows() {
			fmt.Fprintf(&b, "\n… and %d more in the diff JSON.\n", len(d.Regressions)-i)
			break
		}
		cases := "—"
		if len(r.Cases) > 0 {
			cases = cell(strings.Join(r.Cases, ", "))
		}
		if a := r.Amount; a != nil {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", cell(r.Workload), cell(r.Subject), text(r.Metric), amount(r.Metric, a.Base), amount(r.Metric, a.Head), relative(a), cases)
			continue
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", cell(r.Workload), cell(r.Subject), text(r.Metric), pct(r.Base), pct(r.Head), ppDelta(r.Base, r.Head), cases)
	}
	b.WriteString("\n</details>\n")
	return b.String()
}

// amount renders a total: dollars for cost, a count otherwise.
func amount(metric string, v float64) string {
	if metric == MetricCost {
		return Money(v)
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// relative renders a growth as a signed percentage of the base ("+20%").
func relative(a *Amount) string {
	if a.Base == 0 {
		return "new (base 0)"
	}
	return "+" + trimFloat(100*a.Relative) + "%"
}

func replaysMD(d *Diff, o MarkdownOptions) string {
	r := d.Replays
	if r == nil {
		return "Not compared: no receipt archive (commit receipts under `receipts/` or pass `--archive DIR`).\n"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d receipts in %s; %d of them ran an organism this change touched.\n", r.Receipts, CodeSpan(r.Archive), r.Touched)
	if r.Requests > 0 {
		fmt.Fprintf(&b, "%d recorded live request bodies (values/) are kept to say what changed when a request cannot be replayed.\n", r.Requests)
	}
	if len(r.Skipped) > 0 {
		fmt.Fprintf(&b, "%d files skipped (not algal.run.v1 receipts).\n", len(r.Skipped))
	}
	if len(r.Results) == 0 {
		return b.String()
	}
	// Which organisms, and which revision each receipt was replayed
	// against, once: the rows then name cases, not hashes.
	fmt.Fprintf(&b, "Replayed against: %s.\n", strings.Join(replayedAgainst(r.Results), "; "))
	verdicts, behaviour, work := replayVerdicts(r.Results)
	fmt.Fprintf(&b, "Verdicts: %s.\n\n", strings.Join(verdicts, ", "))
	shown := 0
	if len(behaviour) > 0 {
		shown = replayTable(&b, behaviour, o.rows())
	}
	if len(work) > 0 {
		if len(behaviour) > 0 {
			b.WriteString("\n")
		}
		b.WriteString("**Work accounting only**: these revisions take the same cells, effects, outcome and failures as the record and spend different work (a guard or expression that burns more or less fuel). Behaviour is unchanged; budgets and the work tie-break may not be.\n\n")
		replayTable(&b, work, max(o.rows()-shown, 1))
	}
	return b.String()
}

// replayedAgainst names, once each, every organism replayed and the base
// and head revisions it was replayed between.
func replayedAgainst(results []Replay) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range results {
		line := fmt.Sprintf("%s: %s → %s", CodeSpan(x.Key), CodeSpan(short(x.BaseManifest)), replayHead(x))
		if x.Verdict == VerdictRemoved {
			line = fmt.Sprintf("%s: %s → removed", CodeSpan(x.Key), CodeSpan(short(x.BaseManifest)))
		}
		if !seen[line] {
			seen[line] = true
			out = append(out, line)
		}
	}
	return out
}

// replayHead is the head revision a receipt was replayed against, with
// its file, or the file when it does not compile.
func replayHead(x Replay) string {
	head := CodeSpan(short(x.HeadManifest))
	if x.HeadManifest == "" && x.HeadPath != "" {
		return "invalid " + CodeSpan(x.HeadPath)
	} else if x.HeadPath != "" {
		head += " (" + CodeSpan(x.HeadPath) + ")"
	}
	return head
}

// replayVerdicts counts the verdicts ("diverged" split into behaviour and
// work accounting only) in sorted order, and parts the replays into those
// whose behaviour changed (or did not diverge) and the work-only ones.
func replayVerdicts(results []Replay) (verdicts []string, behaviour, work []Replay) {
	counts := map[string]int{}
	for _, x := range results {
		k := x.Verdict
		if workOnly(x) {
			k = "diverged in work accounting only"
			work = append(work, x)
		} else {
			if x.Verdict == vm.VerdictDiverged {
				k = "diverged in behaviour"
			}
			behaviour = append(behaviour, x)
		}
		counts[k]++
	}
	for _, k := range slices.Sorted(maps.Keys(counts)) {
		verdicts = append(verdicts, fmt.Sprintf("%s %d", k, counts[k]))
	}
	return verdicts, behaviour, work
}

// replayTable writes at most budget rows of replays and says how many
// more the diff JSON holds; it returns how many it wrote.
func replayTable(b *strings.Builder, rows []Replay, budget int) int {
	b.WriteString("| workload | system or candidate | case | verdict | detail | receipt |\n| --- | --- | --- | --- | --- | --- |\n")
	for i, x := range rows {
		if i == budget {
			fmt.Fprintf(b, "\n… and %d more in the diff JSON.\n", len(rows)-i)
			return i
		}
		b.WriteString(replayRow(x))
	}
	return len(rows)
}

// replayRow is one replayed receipt's row; a receipt no base run holds
// has no workload, subject or case.
func replayRow(x Replay) string {
	wl, subj, cs := cell(x.Workload), cell(x.Subject), cell(x.Case)
	if x.Workload == "" {
		wl, subj, cs = "—", "—", "not in a base run"
	} else if x.Split != "" {
		cs += " (" + text(x.Split) + ")"
	}
	verdict := text(x.Verdict)
	if x.Divergence != "" {
		verdict += " (" + text(x.Divergence) + ")"
	}
	return fmt.Sprintf("| %s | %s | %s | %s | %s | %s |\n", wl, subj, cs, verdict, cell(x.Detail), tcode(shortFile(x.File)))
}

// workOnly reports whether a replay diverged only in its work ledger.
func workOnly(x Replay) bool {
	return x.Verdict == vm.VerdictDiverged && x.Divergence == vm.DivergeWork
}

var digestName = regexp.MustCompile(`^([0-9a-f]{12})[0-9a-f]{52}\.json$`)

// shortFile abbreviates a content-addressed receipt file name (64 hex
// digits) to its first 12; the JSON keeps the whole path.
func shortFile(p string) string {
	dir, base := path.Split(p)
	if m := digestName.FindStringSubmatch(base); m != nil {
		return dir + m[1] + "….json"
	}
	return p
}

func flipsMD(d *Diff, o MarkdownOptions) string {
	total := 0
	var b strings.Builder
	for _, w := range d.Workloads {
		for _, f := range w.flips() {
			if total == o.rows()*4 {
				total++
				continue
			}
			if total == 0 {
				b.WriteString("| workload | subject | case | split | base → head |\n| --- | --- | --- | --- | --- |\n")
			}
			total++
			split := f.Split
			if split == "" {
				split = "—"
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s → %s |\n", cell(w.Name), cell(f.Subject), cell(f.Case), text(split), text(f.Base), text(f.Head))
		}
	}
	if total == 0 {
		return "No case changed outcome.\n"
	}
	if total > o.rows()*4 {
		b.WriteString("\n… more in the diff JSON.\n")
	}
	return fmt.Sprintf("<details><summary>%s flipped</summary>\n\n%s\n</details>\n", howMany(countFlips(d), "case outcome"), b.String())
}

func countFlips(d *Diff) int {
	n := 0
	for _, w := range d.Workloads {
		n += len(w.flips())
	}
	return n
}

// flips are the workload's verdict flips, whichever kind it is.
func (w *DiffWorkload) flips() []Flip {
	var fl []Flip
	if w.Bench != nil {
		fl = append(fl, w.Bench.Flips...)
	}
	if w.Foundry != nil {
		fl = append(fl, w.Foundry.Flips...)
	}
	return fl
}
