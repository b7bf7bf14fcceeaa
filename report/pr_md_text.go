package report

import (
	"fmt"
	"strings"

	"github.com/algal-assay/assay/engine/bench"
)

// The comment's words: strings from the pull request made inert in
// Markdown, and the numbers, rates and deltas as the tables write them.

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

// changeText renders "b → h (Δ)" or just the value when equal.
func changeText(b, h string, d string) string {
	if b == h {
		return b
	}
	return fmt.Sprintf("%s → %s (%s)", b, h, d)
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
