package report

import (
	"fmt"
	"strconv"
	"strings"
)

// EvidenceText renders `assay ci verify`'s lines: one per file, "ok   PATH
// KIND  DIGEST" or "FAIL PATH  KIND  FIRST MISMATCH", a note per
// leftover, then the outcome sentence.
func EvidenceText(e *Evidence) string {
	var b strings.Builder
	for _, f := range e.Files {
		status := "ok"
		if !f.OK {
			status = "FAIL"
		}
		fmt.Fprintf(&b, "%-4s %s  %s  %s\n", status, linePath(f.Path), f.Kind, oneLine(f.Detail))
	}
	for _, l := range e.Leftovers {
		fmt.Fprintf(&b, "note %s  %s  %s\n", linePath(l.Path), l.Kind, l.Description)
	}
	b.WriteString(e.Sentence() + "\n")
	return b.String()
}

// linePath prints a path as is unless it holds a control character, a
// space at either end or a quote, which it then Go-quotes: a line break in
// a file name must not start a line of its own (under GitHub Actions one
// starting with "::" is a workflow command).
func linePath(p string) string {
	if strings.TrimSpace(p) != p || strings.ContainsFunc(p, func(r rune) bool {
		return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == '"' || r == '\u2028' || r == '\u2029'
	}) {
		return strconv.Quote(p)
	}
	return p
}
