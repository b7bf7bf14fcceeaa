package report

import (
	"fmt"
	"strings"
)

// Bounds of the job-summary table (GitHub caps a step summary at 1 MiB).
const (
	maxSummaryRows   = 500
	maxSummaryDetail = 300
)

// JobSummary renders the evidence check's job-summary section: the
// outcome sentence and a table with failures first, then the leftovers.
func JobSummary(e *Evidence) string {
	var b strings.Builder
	evidenceTable(&b, e)
	if len(e.Leftovers) > 0 {
		b.WriteString("\nLeft by interrupted writes (not evidence):\n\n")
		for i, l := range e.Leftovers {
			if i == maxSummaryRows {
				fmt.Fprintf(&b, "- %d more\n", len(e.Leftovers)-i)
				break
			}
			fmt.Fprintf(&b, "- %s %s: %s\n", summaryCode(l.Path), l.Kind, summaryCell(l.Description))
		}
	}
	return b.String()
}

func evidenceTable(b *strings.Builder, e *Evidence) {
	b.WriteString("### Evidence verification\n\n")
	if len(e.Files) == 0 {
		b.WriteString(summaryCell(e.Sentence()) + "\n")
		return
	}
	if e.Failed() > 0 {
		b.WriteString("❌ **" + summaryCell(e.Sentence()) + "**\n\n")
	} else {
		b.WriteString("✅ " + summaryCell(e.Sentence()) + "\n\n")
	}
	b.WriteString("| Result | File | Kind | Digest or first mismatch |\n| --- | --- | --- | --- |\n")
	rows := 0
	for _, pass := range []bool{false, true} {
		for _, x := range e.Files {
			if x.OK != pass {
				continue
			}
			if rows == maxSummaryRows {
				fmt.Fprintf(b, "\n%d more rows left out.\n", len(e.Files)-rows)
				return
			}
			rows++
			status, detail := "❌ FAIL", summaryCell(x.Detail)
			if x.OK {
				status, detail = "ok", summaryCode(x.Detail)
			}
			fmt.Fprintf(b, "| %s | %s | %s | %s |\n", status, summaryCode(x.Path), x.Kind, detail)
		}
	}
}

// summaryCell makes text safe inside a table cell: one line, no pipe, no
// HTML, bounded.
func summaryCell(s string) string {
	s = oneLine(s)
	if r := []rune(s); len(r) > maxSummaryDetail {
		s = string(r[:maxSummaryDetail]) + "…"
	}
	return strings.NewReplacer("|", `\|`, "<", "&lt;", ">", "&gt;", "&", "&amp;").Replace(s)
}

func summaryCode(s string) string {
	return "`" + strings.ReplaceAll(strings.ReplaceAll(oneLine(s), "`", "'"), "|", `\|`) + "`"
}
