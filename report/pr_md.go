package report

import (
	"fmt"
	"maps"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/algal-assay/assay/engine/bench"
	"github.com/algal-assay/assay/engine/vm"
)

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

// CodeSpan renders s as an inline code span, inside which nothing is markup:
// one line (a line break would end a table row or start a block), no
// backtick (it would end the span early). A string with "<" or ">" is
// rendered with text instead: harmless in a span, but the comment's
// composer tracks <details> by its tags and must not see one in a name.
func CodeSpan(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if s == "" {
		return "—"
	}
	if strings.ContainsAny(s, "<>") {
		return text(s)
	}
	return "`" + strings.ReplaceAll(stripControls(s), "`", "'") + "`"
}

// tcode is code for a table cell: GitHub splits rows at "|" even inside
// code spans, and renders an escaped one as "|".
func tcode(s string) string {
	c := CodeSpan(s)
	if !strings.HasPrefix(c, "`") {
		return c // text already escaped it
	}
	return strings.ReplaceAll(c, "|", "\\|")
}

// text makes a string from the pull request (a workload name, system id,
// case id, gate message, file name) inert in Markdown, in prose and in
// table cells: one line, and no character that could start HTML (a tag, a
// comment hiding the rest of the report, a </details> closing the block
// around it), emphasis, a link, a code span, a table cell or an
// @-mention. Backslash escapes and entities render as the original
// characters; a zero-width space after "@" keeps a mention from pinging.
func text(s string) string {
	s = stripControls(strings.Join(strings.Fields(s), " "))
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '&':
			b.WriteString("&amp;")
		case '\\', '`', '*', '_', '[', ']', '|', '~':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '@':
			b.WriteString("@\u200b")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// cell is text for a table cell.
func cell(s string) string { return text(s) }

// stripControls drops C0 and C1 control characters that whitespace
// folding leaves (NUL, ESC, ...).
func stripControls(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || (r >= 0x7f && r < 0xa0) {
			return -1
		}
		return r
	}, s)
}

// ClipLine folds s onto one line and cuts it to maxRunes, ending a cut
// one with "...".
func ClipLine(s string, maxRunes int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > maxRunes {
		s = string(r[:maxRunes-3]) + "..."
	}
	return s
}

func texts(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = text(n)
	}
	return out
}

func list(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(texts(names), ", ")
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

func delta(b, h int64) string {
	switch {
	case h > b:
		return fmt.Sprintf("+%d", h-b)
	case h < b:
		return fmt.Sprintf("−%d", b-h)
	}
	return "±0"
}

func fdelta(b, h float64) string {
	switch {
	case h > b:
		return "+" + bench.FormatDollars(h-b)
	case h < b:
		return "−" + bench.FormatDollars(b-h)
	}
	return "±0"
}

// tokensText is a side's token total, or unknown (with the note under
// the table) when a call's counts are.
func tokensText(s *SystemStats) string {
	if s.TokensUnknown > 0 {
		return Unknown
	}
	return fmt.Sprint(s.Tokens)
}

// amountText is a side's cost in dollars, or unknown when a call's cost
// is: never the 0.000000 a sum without those calls would show.
func amountText(s *SystemStats) string {
	if s.CostUnknown > 0 {
		return Unknown
	}
	return bench.FormatDollars(s.Cost)
}

// unknownOr is the change d, or n/a when either side is unknown.
func unknownOr(unknownCalls int64, d string) string {
	if unknownCalls > 0 {
		return "n/a"
	}
	return d
}

// changeText renders "b → h (Δ)" or just the value when equal.
func changeText(b, h string, d string) string {
	if b == h {
		return b
	}
	return fmt.Sprintf("%s → %s (%s)", b, h, d)
}

func paretoMD(d *Diff) string {
	var b strings.Builder
	var unchanged []string
	n := 0
	for _, w := range d.Workloads {
		if w.Bench == nil {
			continue
		}
		n++
		bn := w.Bench
		if w.Status == StatusUnchanged {
			unchanged = append(unchanged, fmt.Sprintf("%s (Pareto set: %s%s)", text(w.Name), list(bn.ParetoHead), flipsShort(w.Statistics)))
			continue
		}
		fmt.Fprintf(&b, "### %s (%s)\n\n", text(w.Name), w.Status)
		paretoChange(&b, w)
		systemsMD(&b, bn, w.Statistics)
		if revised := revisedSystems(bn); len(revised) > 0 {
			fmt.Fprintf(&b, "\nRevised organisms: %s.\n", strings.Join(revised, "; "))
		}
		if k := len(bn.Flips); k > 0 {
			fmt.Fprintf(&b, "\n%s flipped (see %s).\n", howMany(k, "case outcome"), TitleFlips)
		}
		if w.Status == StatusChanged {
			b.WriteString("\n" + flipsNeeded(w.Statistics) + "\n")
		}
		b.WriteString("\n")
	}
	return closeSection(&b, n, "bench", unchanged)
}

// paretoChange says how the Pareto set moved, and why each system that
// left or joined it did.
func paretoChange(b *strings.Builder, w *DiffWorkload) {
	bn := w.Bench
	switch {
	case w.Status == StatusAdded:
		fmt.Fprintf(b, "Pareto set: %s\n\n", list(bn.ParetoHead))
	case w.Status == StatusRemoved:
		fmt.Fprintf(b, "Pareto set at base: %s; the workload no longer runs at head.\n\n", list(bn.ParetoBase))
	case len(bn.Joined)+len(bn.Left) == 0:
		fmt.Fprintf(b, "Pareto set unchanged: %s\n\n", list(bn.ParetoHead))
	default:
		fmt.Fprintf(b, "Pareto set: %s → %s · joined: %s · left: %s\n\n", list(bn.ParetoBase), list(bn.ParetoHead), list(bn.Joined), list(bn.Left))
		crit := criteriaNames(w)
		for _, s := range bn.Systems {
			if s.Pareto == "left" {
				fmt.Fprintf(b, "- **%s** left the Pareto set: %s.%s\n", text(s.ID), dominatedText(s.DominatedBy, crit), passVerdict(s, w.Statistics))
			}
		}
		for _, id := range bn.Joined {
			fmt.Fprintf(b, "- **%s** joined the Pareto set: no system is as good on every criterion (%s) and better on one.%s\n", text(id), strings.Join(crit, ", "), passVerdict(bn.system(id), w.Statistics))
		}
		b.WriteString("\n")
	}
}

// systemsMD is the table of every system on both sides (a cost column
// when the bench prices its calls), with a note when a cell is unknown.
func systemsMD(b *strings.Builder, bn *DiffBench, st *Statistics) {
	b.WriteString("| system | passed | change | tokens | ")
	if bn.HasCost {
		b.WriteString("cost $ | ")
	}
	b.WriteString("calls | Pareto |\n| --- | --- | --- | --- | ")
	if bn.HasCost {
		b.WriteString("--- | ")
	}
	b.WriteString("--- | --- |\n")
	unknown := false
	for _, s := range bn.Systems {
		unknown = unknown || hasUnknown(s, bn.HasCost)
		r := commentSystemCells(s, st)
		fmt.Fprintf(b, "| %s | %s | %s | %s | ", cell(s.ID), r.passed, r.verdict, r.tokens)
		if bn.HasCost {
			fmt.Fprintf(b, "%s | ", r.cost)
		}
		fmt.Fprintf(b, "%s | %s |\n", r.calls, r.pareto)
	}
	if unknown {
		b.WriteString("\n" + UnknownNote + "\n")
	}
}

// hasUnknown reports whether a side of s has calls without usage (or
// unpriced ones, when the bench prices its calls).
func hasUnknown(s *DiffSystem, hasCost bool) bool {
	for _, st := range []*SystemStats{s.Base, s.Head} {
		if st != nil && (st.TokensUnknown > 0 || hasCost && st.CostUnknown > 0) {
			return true
		}
	}
	return false
}

// systemCells are one system's cells in the Pareto table.
type systemCells struct {
	passed, verdict, tokens, cost, calls, pareto string
}

// commentSystemCells words a system's cells: the change from base to head, or the
// one side's values marked new or removed.
func commentSystemCells(s *DiffSystem, st *Statistics) systemCells {
	switch {
	case s.Base == nil:
		h := s.Head
		return systemCells{passed: fmt.Sprintf("%d/%d (new)", h.Passed, h.Total), verdict: "—",
			tokens: tokensText(h), cost: amountText(h), calls: fmt.Sprint(h.Calls), pareto: yesNo(h.OnPareto)}
	case s.Head == nil:
		b := s.Base
		return systemCells{passed: fmt.Sprintf("%d/%d (removed)", b.Passed, b.Total), verdict: "—",
			tokens: tokensText(b), cost: amountText(b), calls: fmt.Sprint(b.Calls), pareto: "—"}
	}
	b, h := s.Base, s.Head
	return systemCells{
		passed:  changeText(fmt.Sprintf("%d/%d", b.Passed, b.Total), fmt.Sprintf("%d/%d", h.Passed, h.Total), delta(b.Passed, h.Passed)),
		verdict: changeCell(s.Change, st, b.Passed != h.Passed || b.Total != h.Total),
		tokens:  changeText(tokensText(b), tokensText(h), unknownOr(b.TokensUnknown+h.TokensUnknown, delta(b.Tokens, h.Tokens))),
		cost:    changeText(amountText(b), amountText(h), unknownOr(b.CostUnknown+h.CostUnknown, fdelta(b.Cost, h.Cost))),
		calls:   changeText(fmt.Sprint(b.Calls), fmt.Sprint(h.Calls), delta(b.Calls, h.Calls)),
		pareto:  paretoCell(s),
	}
}

// paretoCell is the Pareto column of a system on both sides.
func paretoCell(s *DiffSystem) string {
	switch s.Pareto {
	case "joined":
		return "**joined**"
	case "left":
		if len(s.DominatedBy) > 0 {
			return "**left**: dominated by " + dominatorNames(s.DominatedBy)
		}
		return "**left**"
	case "stays":
		return "yes"
	}
	return "no"
}

// revisedSystems names each system whose organism differs between the
// sides, with both digests.
func revisedSystems(bn *DiffBench) []string {
	var revised []string
	for _, s := range bn.Systems {
		if s.Base != nil && s.Head != nil && s.Base.ManifestDigest != s.Head.ManifestDigest {
			revised = append(revised, fmt.Sprintf("%s runs %s (%s → %s)", text(s.ID), CodeSpan(s.Head.ManifestKey), CodeSpan(short(s.Base.ManifestDigest)), CodeSpan(short(s.Head.ManifestDigest))))
		}
	}
	return revised
}

// closeSection ends the Pareto or the promotion section, which held n
// workloads of its kind: a section without any says so instead, and the
// unchanged ones are named together on its last line.
func closeSection(b *strings.Builder, n int, kind string, unchanged []string) string {
	if n == 0 {
		return "No " + kind + " workloads.\n"
	}
	if len(unchanged) > 0 {
		fmt.Fprintf(b, "Unchanged: %s.\n", strings.Join(unchanged, "; "))
	}
	return b.String()
}

// criteriaNames are the Pareto criteria of a bench workload at head (else
// base), in report order.
func criteriaNames(w *DiffWorkload) []string {
	var names []string
	if r := benchAtHead(w); r != nil {
		for _, c := range r.Criteria() {
			names = append(names, c.Name)
		}
	}
	return names
}

// benchAtHead is the workload's bench report at head, else at base (nil
// when neither side left one).
func benchAtHead(w *DiffWorkload) *bench.Report {
	if w.HeadBench != nil {
		return w.HeadBench
	}
	return w.BaseBench
}

func dominatorNames(ds []Dominator) string {
	names := make([]string, len(ds))
	for i, d := range ds {
		names[i] = d.By
	}
	return list(names)
}

// dominatedText says who dominates a system and where: "cheap-single
// dominates it (better on passed and cost, as good on calls)".
func dominatedText(ds []Dominator, crit []string) string {
	if len(ds) == 0 {
		return "it is off the Pareto set at head"
	}
	var parts []string
	for _, d := range ds {
		var same []string
		for _, c := range crit {
			if !slices.Contains(d.Better, c) {
				same = append(same, c)
			}
		}
		p := fmt.Sprintf("%s dominates it (better on %s", text(d.By), and(texts(d.Better)))
		if len(same) > 0 {
			p += ", as good on " + and(texts(same))
		}
		parts = append(parts, p+")")
	}
	return strings.Join(parts, "; ")
}

// and joins words as prose: "a", "a and b", "a, b and c".
func and(words []string) string {
	switch len(words) {
	case 0:
		return ""
	case 1:
		return words[0]
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

func howMany(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func yesNo(v bool) string {
	if v {
		return "yes"
	}
	return "no"
}

func pct(r Rate) string {
	if r.Total == 0 {
		return "0/0"
	}
	return fmt.Sprintf("%d/%d (%s%%)", r.Passed, r.Total, trimFloat(100*r.Value()))
}

func trimFloat(f float64) string {
	s := fmt.Sprintf("%.1f", f)
	return strings.TrimSuffix(s, ".0")
}

func ppDelta(b, h Rate) string {
	d := 100 * (h.Value() - b.Value())
	switch {
	case d > 0.05:
		return "+" + trimFloat(d) + " pp"
	case d < -0.05:
		return "−" + trimFloat(-d) + " pp"
	}
	return "±0 pp"
}

func promoted(p *Promotion) string {
	if p == nil {
		return "—"
	}
	if p.Exhausted {
		return "nothing (habitat budget exhausted)"
	}
	return CodeSpan(p.Key) + " (" + CodeSpan(short(p.Digest)) + ")"
}

func promotionsMD(d *Diff) string {
	var b strings.Builder
	var unchanged []string
	n := 0
	for _, w := range d.Workloads {
		f := w.Foundry
		if f == nil {
			continue
		}
		n++
		if w.Status == StatusUnchanged {
			unchanged = append(unchanged, fmt.Sprintf("%s (promotes %s%s)", text(w.Name), promoted(f.Head), flipsShort(w.Statistics)))
			continue
		}
		fmt.Fprintf(&b, "### %s (%s)\n\n", text(w.Name), w.Status)
		promotionLine(&b, f, w.Statistics)
		if f.Base != nil && f.Head != nil && !f.Base.Exhausted && !f.Head.Exhausted {
			promotedMD(&b, f, w.Statistics)
		}
		if m := marginText(promotionMargin(f.Head), w.Statistics); m != "" {
			b.WriteString(m + "\n\n")
		}
		if f.PromotedChanged || rankingChanged(f) {
			rankingsMD(&b, f)
		}
		candidatesMD(&b, f.Candidates, w.Statistics)
		candidateList(&b, "added", f.Added)
		candidateList(&b, "removed", f.Removed)
		candidateList(&b, "revised", f.Revised)
		if k := len(f.Flips); k > 0 {
			fmt.Fprintf(&b, "- %s flipped (see %s)\n", howMany(k, "case outcome"), TitleFlips)
		}
		if w.Status == StatusChanged {
			b.WriteString("\n" + flipsNeeded(w.Statistics) + "\n")
		}
		b.WriteString("\n")
	}
	return closeSection(&b, n, "foundry", unchanged)
}

// promotionLine says what each side promotes and, when the promoted
// candidate changed, how the two compare on validation.
func promotionLine(b *strings.Builder, f *DiffFoundry, st *Statistics) {
	switch {
	case f.PromotedChanged:
		fmt.Fprintf(b, "**Promoted candidate changed**: %s → %s\n\n", promoted(f.Base), promoted(f.Head))
		if f.PromotedChange != nil {
			fmt.Fprintf(b, "Validation, the base's promoted against the head's on the cases both ran: %s.\n\n", ChangeVerdict(f.PromotedChange, st))
		}
	case f.Base != nil && f.Head != nil:
		fmt.Fprintf(b, "Promoted candidate unchanged: %s\n\n", promoted(f.Head))
	case f.Head != nil:
		fmt.Fprintf(b, "Promotes %s\n\n", promoted(f.Head))
	default:
		fmt.Fprintf(b, "Promoted %s at base; the workload no longer runs at head.\n\n", promoted(f.Base))
	}
}

// promotedMD compares the promoted candidates of both sides: their rates
// per split, the candidate count, the validation change of one promoted
// on both sides and the holdout cases it fails at head.
func promotedMD(b *strings.Builder, f *DiffFoundry, st *Statistics) {
	b.WriteString("| promoted | base | head | Δ |\n| --- | --- | --- | --- |\n")
	for _, r := range []struct {
		name string
		b, h Rate
	}{{"validation", f.Base.Validation, f.Head.Validation}, {"train", f.Base.Train, f.Head.Train}, {"holdout", f.Base.Holdout, f.Head.Holdout}} {
		fmt.Fprintf(b, "| %s | %s | %s | %s |\n", r.name, pct(r.b), pct(r.h), ppDelta(r.b, r.h))
	}
	fmt.Fprintf(b, "| candidates | %d | %d | %s |\n\n", f.Base.Candidates, f.Head.Candidates, delta(int64(f.Base.Candidates), int64(f.Head.Candidates)))
	if ch := f.PromotedChange; ch != nil && !f.PromotedChanged && (ch.Fixed+ch.Broken > 0 || f.Base.Validation.Passed != f.Head.Validation.Passed) {
		fmt.Fprintf(b, "Validation change of the promoted candidate: %s.\n\n", ChangeVerdict(ch, st))
	}
	if len(f.Head.HoldoutFailing) > 0 {
		fmt.Fprintf(b, "Holdout cases the promoted candidate fails at head: %s.\n\n", list(f.Head.HoldoutFailing))
	}
}

// rankingsMD shows the promotion order at head, and at base folded away.
func rankingsMD(b *strings.Builder, f *DiffFoundry) {
	b.WriteString(rankingMD("Ranking at head", f.HeadRanking))
	if len(f.BaseRanking) > 0 {
		b.WriteString("<details><summary>Ranking at base</summary>\n\n")
		b.WriteString(rankingMD("", f.BaseRanking))
		b.WriteString("</details>\n\n")
	}
}

// candidatesMD is the table of every candidate's validation and train
// rates on both sides (nothing when no candidate is listed).
func candidatesMD(b *strings.Builder, cs []*CandidatePair, st *Statistics) {
	if len(cs) == 0 {
		return
	}
	b.WriteString("| candidate | validation | validation change | train |\n| --- | --- | --- | --- |\n")
	for _, c := range cs {
		name := tcode(c.Key)
		if c.Head != nil && c.Head.Promoted {
			name += " (promoted)"
		}
		val, tr := candidateRates(c)
		vc := "—"
		if c.Base != nil && c.Head != nil {
			vc = changeCell(c.Change, st, c.Base.Validation.Passed != c.Head.Validation.Passed || c.Base.Validation.Total != c.Head.Validation.Total)
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s |\n", name, val, vc, tr)
	}
	b.WriteString("\n")
}

// candidateRates are a candidate's validation and train cells: the change
// from base to head, or the one side's rate marked new or removed.
func candidateRates(c *CandidatePair) (val, tr string) {
	switch {
	case c.Base == nil:
		return c.Head.Validation.Ratio() + " (new)", c.Head.Train.Ratio()
	case c.Head == nil:
		return c.Base.Validation.Ratio() + " (removed)", c.Base.Train.Ratio()
	}
	return changeText(c.Base.Validation.Ratio(), c.Head.Validation.Ratio(), ppDelta(c.Base.Validation, c.Head.Validation)),
		changeText(c.Base.Train.Ratio(), c.Head.Train.Ratio(), ppDelta(c.Base.Train, c.Head.Train))
}

// candidateList names the candidates added, removed or revised, with
// their digests (nothing when there are none).
func candidateList(b *strings.Builder, label string, cs []Candidate) {
	if len(cs) == 0 {
		return
	}
	var parts []string
	for _, c := range cs {
		if c.Was != "" {
			parts = append(parts, fmt.Sprintf("%s (%s → %s)", CodeSpan(c.Key), CodeSpan(short(c.Was)), CodeSpan(short(c.Digest))))
		} else {
			parts = append(parts, fmt.Sprintf("%s (%s)", CodeSpan(c.Key), CodeSpan(short(c.Digest))))
		}
	}
	fmt.Fprintf(b, "- candidates %s: %s\n", label, strings.Join(parts, ", "))
}

// rankingChanged reports whether the promotion order or a deciding
// column differs between the sides.
func rankingChanged(f *DiffFoundry) bool {
	if len(f.BaseRanking) != len(f.HeadRanking) {
		return len(f.BaseRanking) > 0 && len(f.HeadRanking) > 0
	}
	for i := range f.HeadRanking {
		b, h := f.BaseRanking[i], f.HeadRanking[i]
		if b.Key != h.Key || b.DecidedBy != h.DecidedBy {
			return true
		}
	}
	return false
}

// rankingMD renders a promotion order with every value of the deciding
// column in bold, so a tie broken by one work unit shows as plainly as a
// validation rate.
func rankingMD(title string, places []RankPlace) string {
	if len(places) == 0 {
		return ""
	}
	var b strings.Builder
	if title != "" {
		fmt.Fprintf(&b, "%s (the **bold** value decided each place: validation, then train, then fewer agent calls, then fewer work units, then digest):\n\n", title)
	}
	b.WriteString("| # | candidate | validation | train | agent calls | work units | decided by |\n| --- | --- | --- | --- | --- | --- | --- |\n")
	for _, p := range places {
		cells := []string{p.Validation.Ratio(), p.Train.Ratio(), fmt.Sprint(p.AgentCalls), fmt.Sprint(p.Units)}
		for i, col := range []string{"validation", "train", "agent calls", "work units"} {
			if col == p.DecidedBy {
				cells[i] = "**" + cells[i] + "**"
			}
		}
		name := tcode(p.Key)
		if p.Promoted {
			name += " (promoted)"
		}
		why := p.Why
		if why == "" {
			why = "—"
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %s |\n", p.Place, name, strings.Join(cells, " | "), cell(why))
	}
	b.WriteString("\n")
	return b.String()
}

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
