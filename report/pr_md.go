package report

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
)

// The pull-request comment, in Markdown, from a Diff: the verdict first,
// then the Pareto sets (pr_md_pareto.go), the promotions
// (pr_md_promotions.go), the flakiness of repeated runs
// (pr_md_repeats.go), the regressions, archived receipts and case flips
// (pr_md_changes.go) and the notes; the statistics' wording is
// pr_md_statistics.go's, the escaping pr_md_text.go's. The job summary
// is the same sections with the plot tables (pr_md_plot.go). Every
// string from the pull request is made inert, so a name cannot inject
// markup, and the output is deterministic.

// Section titles, in the comment's priority order.
const (
	TitleVerdict     = "Assay PR check"
	TitlePareto      = "Pareto sets"
	TitlePromotions  = "Promotions"
	TitleRegressions = "Largest regressions"
	TitleReplays     = "Archived receipts"
	TitleFlips       = "Case flips"
	TitleNotes       = "Notes"
	TitleReproduce   = "Reproduce"
)

// Section is one titled section of the comment or the job summary; the
// pull-request check composes them (ci/github.Compose) within the size
// GitHub allows.
type Section struct {
	Title    string
	Markdown string
}

// MarkdownOptions bound the rendering.
type MarkdownOptions struct {
	// Pointer is a sentence ending the verdict section that says where the
	// rest is (job summary, artifact); "" for none.
	Pointer string
	// MaxRows caps each long table (regressions, replays, flips, failing
	// gates); 0 means 50. The JSON always holds everything.
	MaxRows int
	// Command reproduces the check locally (e.g. "assay ci pr --base-ref
	// origin/main"); "" leaves the Reproduce section out.
	Command string
	// BlobBase, when set, links the files the comment names: it is the
	// URL prefix of the head's files, e.g.
	// "https://github.com/OWNER/REPO/blob/HEAD_SHA/".
	BlobBase string
	// Drawn says where pr.html is, as Markdown (e.g. "`pr.html` in the
	// [assay-pr-check artifact](URL)"); "" for nowhere.
	Drawn string
}

func (o MarkdownOptions) rows() int {
	if o.MaxRows <= 0 {
		return 50
	}
	return o.MaxRows
}

// CommentSections renders the diff as the pull-request comment's
// sections in priority order: verdict, Pareto sets, promotions, largest
// regressions (inside <details>), archived receipts, case flips, notes.
func CommentSections(d *Diff, o MarkdownOptions) []Section {
	s := []Section{
		{Title: TitleVerdict, Markdown: verdictMD(d, o)},
		{Title: TitlePareto, Markdown: paretoMD(d)},
		{Title: TitlePromotions, Markdown: promotionsMD(d)},
		{Title: TitleRegressions, Markdown: regressionsMD(d, o)},
		{Title: TitleReplays, Markdown: replaysMD(d, o)},
		{Title: TitleFlips, Markdown: flipsMD(d, o)},
	}
	s = withRepeats(s, d)
	if len(d.Notes) > 0 {
		var b strings.Builder
		for _, n := range d.Notes {
			fmt.Fprintf(&b, "- %s\n", text(n))
		}
		s = append(s, Section{Title: TitleNotes, Markdown: b.String()})
	}
	if f := CommentFooter(d, o); f != "" {
		s = append(s, Section{Title: TitleReproduce, Markdown: f + "\n"})
	}
	return s
}

// CommentFooter is the comment's last paragraph, one line: the command that
// reproduces the check, links to the head files the comment names, and
// where the drawn report (pr.html) is. The check also hands it to the
// composer as the end of the truncation notice, so even a cut comment
// ends with it.
func CommentFooter(d *Diff, o MarkdownOptions) string {
	var parts []string
	if o.Command != "" {
		parts = append(parts, "Reproduce locally: "+CodeSpan(o.Command)+".")
	}
	if files := namedFiles(d); len(files) > 0 {
		links := make([]string, len(files))
		for i, f := range files {
			links[i] = fileLink(f, o.BlobBase)
		}
		parts = append(parts, "Files: "+strings.Join(links, ", ")+".")
	}
	if o.Drawn != "" {
		parts = append(parts, "Drawn report: "+o.Drawn+".")
	}
	return strings.Join(parts, " ")
}

// namedFiles are the head files the comment talks about: the workload
// files of changed or failing workloads and the organisms whose archived
// receipts were replayed.
func namedFiles(d *Diff) []string {
	set := map[string]bool{}
	for _, w := range d.Workloads {
		if w.File != "" && (w.Status != StatusUnchanged || (w.Head != nil && !w.Head.Passed)) && w.Head != nil {
			set[w.File] = true
		}
	}
	if d.Replays != nil {
		for _, r := range d.Replays.Results {
			if r.HeadPath != "" {
				set[r.HeadPath] = true
			}
		}
	}
	return slices.Sorted(maps.Keys(set))
}

var safePath = regexp.MustCompile(`^[A-Za-z0-9._/-]+$`)

// fileLink links a repository-relative path at the head; a path with
// characters a URL or Markdown would need escaped is named, not linked.
func fileLink(p, base string) string {
	if base == "" || !safePath.MatchString(p) || strings.Contains(p, "..") {
		return CodeSpan(p)
	}
	return "[" + CodeSpan(p) + "](" + base + p + ")"
}

func verdictMD(d *Diff, o MarkdownOptions) string {
	var b strings.Builder
	b.WriteString(verdictSentence(d) + "\n")
	items := verdictItems(d)
	for i, s := range items {
		if i == o.rows() {
			fmt.Fprintf(&b, "- … and %d more\n", len(items)-i)
			break
		}
		if i == 0 {
			b.WriteString("\n")
		}
		b.WriteString("- " + s + "\n")
	}
	if o.Pointer != "" {
		b.WriteString("\n" + o.Pointer + "\n")
	}
	return b.String()
}

// verdictSentence is the comment's first line: pass or fail, how many
// workloads, and which changed.
func verdictSentence(d *Diff) string {
	v := d.Verdict
	var s string
	if v.Passed {
		s = fmt.Sprintf("**✅ Pass** · %d workloads at %s compared with %s: every run verified and every gate holds.", v.Workloads, CodeSpan(d.Head), CodeSpan(d.Base))
	} else {
		s = fmt.Sprintf("**❌ Fail** · %d of %d workloads fail at %s (compared with %s).", len(v.Failed), v.Workloads, CodeSpan(d.Head), CodeSpan(d.Base))
		if len(d.Problems) > 0 {
			s += fmt.Sprintf(" %d problems stopped workloads from running.", len(d.Problems))
		}
	}
	if len(v.Changed) > 0 {
		return s + fmt.Sprintf(" Changed: %s.", list(v.Changed))
	}
	return s + " No workload's results changed."
}

// verdictItems are the failures under the verdict, one line each: the
// problems that stopped workloads, then each workload's.
func verdictItems(d *Diff) []string {
	var out []string
	for _, p := range d.Problems {
		out = append(out, "**problem**: "+text(ClipLine(p, 400)))
	}
	for _, w := range d.Workloads {
		out = append(out, workloadItems(w)...)
	}
	return out
}

// workloadItems are a workload's failures: its compare fail-on findings,
// and at head a run that did not complete, mismatches and failing gates.
func workloadItems(w *DiffWorkload) []string {
	var out []string
	if w.Statistics != nil {
		for _, f := range w.Statistics.Failures {
			out = append(out, fmt.Sprintf("**%s**: compare fail-on %s: %s", text(w.Name), w.Statistics.FailOn, f))
		}
	}
	if w.Head == nil || w.Head.Passed {
		return out
	}
	if w.Head.Status != "complete" {
		out = append(out, fmt.Sprintf("**%s**: the run ended %s", text(w.Name), text(w.Head.Status)))
	}
	if !w.Head.Verified && len(w.Mismatches) == 0 {
		out = append(out, fmt.Sprintf("**%s**: not verified", text(w.Name)))
	}
	if !w.Head.Verified {
		for _, m := range w.Mismatches {
			out = append(out, fmt.Sprintf("**%s**: not verified: %s", text(w.Name), text(ClipLine(m, 400))))
		}
	}
	for _, g := range w.FailedGates {
		out = append(out, fmt.Sprintf("**%s**: gate *%s* fails: %s", text(w.Name), text(g.Name), text(sentences(g.Message, 400, seeSection(w)))))
	}
	return out
}

// seeSection names the section that shows a workload in full.
func seeSection(w *DiffWorkload) string {
	if w.Kind == KindFoundry {
		return TitlePromotions
	}
	return TitlePareto
}

// sentences keeps the leading whole sentences of s that fit in maxRunes
// and says where the rest is, so a long gate message is shortened without
// ending mid-sentence. A sentence ends at ". " before a capital letter
// (not "1. organism" in a ranking). A first sentence longer than the
// limit is kept whole.
func sentences(s string, maxRunes int, rest string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len([]rune(s)) <= maxRunes {
		return s
	}
	cut := -1
	for i := 0; i+2 < len(s); i++ {
		if s[i] == '.' && s[i+1] == ' ' && s[i+2] >= 'A' && s[i+2] <= 'Z' {
			if len([]rune(s[:i+1])) > maxRunes-40 {
				break
			}
			cut = i + 1
		}
	}
	if cut < 0 {
		if i := strings.Index(s, ". "); i > 0 {
			cut = i + 1
		} else {
			return s
		}
	}
	return s[:cut] + " (More under " + rest + ".)"
}
