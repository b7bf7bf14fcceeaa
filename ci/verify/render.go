package verify

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// Text renders one line per result, "ok   PATH  KIND  DIGEST" or
// "FAIL PATH  KIND  FIRST MISMATCH", then a count line.
func (r *Report) Text() string {
	var b strings.Builder
	for _, x := range r.Results {
		status := "ok"
		if !x.OK {
			status = "FAIL"
		}
		fmt.Fprintf(&b, "%-4s %s  %s  %s\n", status, linePath(x.Path), x.Kind, oneLine(x.Detail()))
	}
	for _, l := range r.Leftovers {
		fmt.Fprintf(&b, "note %s  %s  %s\n", linePath(l.Path), l.Kind, l.Description())
	}
	b.WriteString(r.Summary() + "\n")
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

// Summary is the one-sentence outcome.
func (r *Report) Summary() string {
	n := len(r.Results)
	var s string
	switch f := r.Failed(); {
	case n == 0:
		s = "no receipts, reports, budget accounts or run directories found under " + strings.Join(r.Roots, ", ")
	case f > 0:
		s = fmt.Sprintf("%d of %d %s failed to verify", f, n, plural(n, "file"))
	default:
		s = fmt.Sprintf("all %d %s verified", n, plural(n, "file"))
	}
	if k := len(r.Leftovers); k > 0 {
		s += fmt.Sprintf("; %d %s of interrupted writes listed", k, plural(k, "leftover"))
	}
	return s
}

func plural(n int, s string) string {
	if n == 1 {
		return s
	}
	return s + "s"
}

// Value is the JSON form: {"ok","store","roots","checked","failed","files":[...]}.
func (r *Report) Value() map[string]any {
	roots := make([]any, len(r.Roots))
	for i, x := range r.Roots {
		roots[i] = x
	}
	files := make([]any, len(r.Results))
	for i, x := range r.Results {
		ms := make([]any, len(x.Mismatches))
		for j, m := range x.Mismatches {
			ms[j] = m
		}
		f := map[string]any{"path": x.Path, "kind": x.Kind, "ok": x.OK, "mismatches": ms}
		if x.Digest != "" {
			f["digest"] = x.Digest
		}
		if x.Status != "" {
			f["status"] = x.Status
		}
		files[i] = f
	}
	left := make([]any, len(r.Leftovers))
	for i, l := range r.Leftovers {
		m := map[string]any{"path": l.Path, "kind": l.Kind}
		if l.Status != "" {
			m["status"] = l.Status
		}
		left[i] = m
	}
	return map[string]any{"ok": r.OK(), "store": r.Store, "roots": roots,
		"checked": float64(len(r.Results)), "failed": float64(r.Failed()), "files": files, "leftovers": left}
}

// Annotations renders a GitHub Actions "::error file=...::..." workflow
// command per failure, and a "::notice" per leftover. Paths under workspace (GITHUB_WORKSPACE, "" for
// none) are made relative to it, as annotations want repository paths.
func (r *Report) Annotations(workspace string) []string {
	var out []string
	for _, x := range r.Results {
		if x.OK {
			continue
		}
		msg := fmt.Sprintf("%s does not verify: %s", x.Kind, x.Detail())
		out = append(out, "::error file="+escapeProperty(repoPath(x.Path, workspace))+"::"+escapeData(msg))
	}
	for _, l := range r.Leftovers {
		out = append(out, "::notice file="+escapeProperty(repoPath(l.Path, workspace))+"::"+escapeData(l.Kind+": "+l.Description()))
	}
	return out
}

func repoPath(path, workspace string) string {
	if workspace != "" {
		if abs, err := filepath.Abs(path); err == nil {
			if rel, err := filepath.Rel(workspace, abs); err == nil && !strings.HasPrefix(rel, "..") {
				return filepath.ToSlash(rel)
			}
		}
	}
	return filepath.ToSlash(path)
}

// escapeData and escapeProperty follow the workflow-command encoding, so
// a path or message can neither end the command nor inject another.
func escapeData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

func escapeProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}

// Bounds of the job-summary table (GitHub caps a step summary at 1 MiB).
const (
	maxSummaryRows   = 500
	maxSummaryDetail = 300
)

// Markdown renders the job-summary section: the outcome sentence and a
// table with failures first.
func (r *Report) Markdown() string {
	var b strings.Builder
	r.table(&b)
	if len(r.Leftovers) > 0 {
		b.WriteString("\nLeft by interrupted writes (not evidence):\n\n")
		for i, l := range r.Leftovers {
			if i == maxSummaryRows {
				fmt.Fprintf(&b, "- %d more\n", len(r.Leftovers)-i)
				break
			}
			fmt.Fprintf(&b, "- %s %s: %s\n", code(l.Path), l.Kind, cell(l.Description()))
		}
	}
	return b.String()
}

func (r *Report) table(b *strings.Builder) {
	b.WriteString("### Evidence verification\n\n")
	if len(r.Results) == 0 {
		b.WriteString(cell(r.Summary()) + "\n")
		return
	}
	if r.Failed() > 0 {
		b.WriteString("❌ **" + cell(r.Summary()) + "**\n\n")
	} else {
		b.WriteString("✅ " + cell(r.Summary()) + "\n\n")
	}
	b.WriteString("| Result | File | Kind | Digest or first mismatch |\n| --- | --- | --- | --- |\n")
	rows := 0
	for _, pass := range []bool{false, true} {
		for _, x := range r.Results {
			if x.OK != pass {
				continue
			}
			if rows == maxSummaryRows {
				fmt.Fprintf(b, "\n%d more rows left out.\n", len(r.Results)-rows)
				return
			}
			rows++
			status, detail := "❌ FAIL", cell(x.Detail())
			if x.OK {
				status, detail = "ok", code(x.Detail())
			}
			fmt.Fprintf(b, "| %s | %s | %s | %s |\n", status, code(x.Path), x.Kind, detail)
		}
	}
}

// cell makes text safe inside a table cell: one line, no pipe, no HTML,
// bounded.
func cell(s string) string {
	s = oneLine(s)
	if r := []rune(s); len(r) > maxSummaryDetail {
		s = string(r[:maxSummaryDetail]) + "…"
	}
	return strings.NewReplacer("|", `\|`, "<", "&lt;", ">", "&gt;", "&", "&amp;").Replace(s)
}

func code(s string) string {
	return "`" + strings.ReplaceAll(strings.ReplaceAll(oneLine(s), "`", "'"), "|", `\|`) + "`"
}
