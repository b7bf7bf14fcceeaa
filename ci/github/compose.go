package github

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// MaxCommentChars is GitHub's limit on an issue or pull-request comment body.
const MaxCommentChars = 65536

// DefaultKey names the marker of the PR-check comment.
const DefaultKey = "pr-check"

// Section is one part of the report. Title, when not empty, is rendered as a
// level-2 heading above Markdown and names the section in the truncation
// notice. Sections are given in priority order: the first (the verdict) is
// the one always kept.
type Section struct {
	Title    string
	Markdown string
}

var keyPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)

// Marker returns the hidden first line that identifies the comment owned by
// key, e.g. "<!-- assay:pr-check -->". Keys are 1-64 characters of a-z, 0-9,
// '.', '_' and '-', starting with a letter or digit, so a key can never
// close the HTML comment early or match another key's marker.
func Marker(key string) (string, error) {
	if !keyPattern.MatchString(key) {
		return "", errorf(CodeInput, "comment key %q: want 1-64 characters of a-z 0-9 . _ -, starting with a letter or digit", key)
	}
	return "<!-- assay:" + key + " -->", nil
}

// Length is the size of s as GitHub's limit sees it, counted in UTF-16 code
// units: a character outside the Basic Multilingual Plane counts twice, so
// the count is an upper bound whether GitHub counts code points or units.
func Length(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}

// Compose renders the comment body: marker on the first line, then the
// sections in order. If the whole body exceeds limit (in [Length] units), it
// keeps the leading sections that fit whole, cuts the first that does not at
// a line boundary (closing an open code fence, <summary> or <details>),
// omits the rest, and ends with a notice that names what is missing and
// carries pointer (where to find the full report, e.g. the job summary and
// the artifact). The result never exceeds limit; only when limit cannot even
// hold the marker and the notice is the output a plain prefix.
func Compose(marker string, sections []Section, limit int, pointer string) string {
	head := ""
	if marker != "" {
		head = marker + "\n"
	}
	rendered := make([]string, len(sections))
	var full strings.Builder
	full.WriteString(head)
	for i, s := range sections {
		rendered[i] = renderSection(s)
		if i > 0 {
			full.WriteByte('\n')
		}
		full.WriteString(rendered[i])
	}
	if Length(full.String()) <= limit {
		return full.String()
	}

	titles := make([]string, len(sections))
	for i, s := range sections {
		titles[i] = noticeTitle(s.Title, i)
	}
	out := head
	for i, r := range rendered {
		sep := ""
		if i > 0 {
			sep = "\n"
		}
		// Reserve room for the worst notice that can still follow: every
		// later section listed, the first of them marked as cut.
		if Length(out)+Length(sep)+Length(r)+noticeReserve(titles[i+1:], pointer) <= limit {
			out += sep + r
			continue
		}
		n := notice(titles[i:], true, pointer)
		if part := cutSection(r, limit-Length(out)-Length(sep)-Length(n)); part != "" {
			return fit(out+sep+part+n, limit)
		}
		return fit(out+notice(titles[i:], false, pointer), limit)
	}
	// Unreachable when the whole body did not fit, but keep the bound.
	return fit(out, limit)
}

func renderSection(s Section) string {
	body := strings.TrimRight(strings.TrimLeft(s.Markdown, "\n"), "\n \t")
	var b strings.Builder
	if s.Title != "" {
		b.WriteString("## ")
		b.WriteString(oneLine(s.Title))
		b.WriteString("\n")
		if body != "" {
			b.WriteString("\n")
		}
	}
	if body != "" {
		b.WriteString(body)
		b.WriteString("\n")
	}
	return b.String()
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// noticeTitle bounds a title for the notice so a pathological title cannot
// eat the budget.
func noticeTitle(title string, i int) string {
	t := oneLine(title)
	if t == "" {
		return "section " + itoa(i+1)
	}
	if utf8.RuneCountInString(t) > 60 {
		r := []rune(t)
		t = string(r[:57]) + "..."
	}
	return t
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}

// maxNoticeList caps the list of missing sections; longer lists are left out.
const maxNoticeList = 1000

func noticeList(titles []string, cutFirst bool) string {
	var b strings.Builder
	for i, t := range titles {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(t)
		if i == 0 && cutFirst {
			b.WriteString(" (cut)")
		}
	}
	return b.String()
}

func notice(titles []string, cutFirst bool, pointer string) string {
	var b strings.Builder
	b.WriteString("\n---\n> **Report truncated** to fit in one comment")
	if l := noticeList(titles, cutFirst); l != "" && Length(l) <= maxNoticeList {
		b.WriteString("; not shown in full: ")
		b.WriteString(l)
	}
	b.WriteString(".")
	if p := oneLine(pointer); p != "" {
		b.WriteString(" ")
		b.WriteString(p)
	}
	b.WriteString("\n")
	return b.String()
}

// noticeReserve is an upper bound on the length of any notice built from a
// suffix of titles, with or without the cut mark: lists only shrink as more
// sections are kept, and a list over the cap is replaced by nothing.
func noticeReserve(titles []string, pointer string) int {
	base := Length(notice(nil, false, pointer))
	list := Length(noticeList(titles, true)) + Length("; not shown in full: ")
	return base + min(list, maxNoticeList+Length("; not shown in full: "))
}

// fit is the last-resort bound: a plain prefix cut at a character boundary.
func fit(s string, limit int) string {
	if Length(s) <= limit {
		return s
	}
	n := 0
	for i, r := range s {
		w := 1
		if r >= 0x10000 {
			w = 2
		}
		if n+w > limit {
			return s[:i]
		}
		n += w
	}
	return s
}

// cutSection returns the longest line-aligned prefix of r that, with the
// closers for whatever it leaves open, fits in budget; "" if none does.
func cutSection(r string, budget int) string {
	if budget <= 0 {
		return ""
	}
	var st blockState
	bestEnd, bestClosers := -1, ""
	used, end := 0, 0
	for line := range strings.Lines(r) {
		end += len(line)
		st.feed(line)
		used += Length(line)
		if used > budget {
			break
		}
		if c := st.closers(); used+Length(c) <= budget {
			bestEnd, bestClosers = end, c
		}
	}
	if bestEnd < 0 {
		return ""
	}
	// Trailing blank lines carry nothing; the notice starts with one.
	return strings.TrimRight(r[:bestEnd], "\n") + "\n" + bestClosers
}

// blockState tracks the Markdown/HTML constructs a cut must close: a fenced
// code block, and <details>/<summary> elements outside code.
type blockState struct {
	fence     string // the opening fence run (e.g. "```"), "" outside code
	details   int
	inSummary bool
}

var tagPattern = regexp.MustCompile(`(?i)<(/?)(details|summary)(?:\s[^>]*)?>`)

func (st *blockState) feed(line string) {
	t := strings.TrimRight(line, "\r\n")
	trimmed := strings.TrimLeft(t, " ")
	indented := len(t)-len(trimmed) > 3
	if st.fence != "" {
		if !indented && strings.HasPrefix(trimmed, st.fence) &&
			strings.Trim(trimmed, st.fence[:1]+" \t") == "" {
			st.fence = ""
		}
		return
	}
	if !indented {
		for _, ch := range []string{"`", "~"} {
			if strings.HasPrefix(trimmed, ch+ch+ch) {
				n := len(trimmed) - len(strings.TrimLeft(trimmed, ch))
				st.fence = strings.Repeat(ch, n)
				return
			}
		}
	}
	for _, m := range tagPattern.FindAllStringSubmatch(t, -1) {
		closing := m[1] == "/"
		switch strings.ToLower(m[2]) {
		case "details":
			if closing {
				if st.details > 0 {
					st.details--
				}
			} else {
				st.details++
			}
		case "summary":
			st.inSummary = !closing
		}
	}
}

func (st *blockState) closers() string {
	var b strings.Builder
	if st.fence != "" {
		b.WriteString(st.fence)
		b.WriteString("\n")
	}
	if st.inSummary {
		b.WriteString("</summary>\n")
	}
	for range st.details {
		b.WriteString("</details>\n")
	}
	return b.String()
}

// open reports whether a construct is still open after the lines fed so far.
func (st *blockState) open() bool { return st.fence != "" || st.details > 0 || st.inSummary }

// SplitSections turns one Markdown report into sections at its level-2
// headings ("## Title"), ignoring headings inside code fences and <details>
// blocks. Text before the first heading becomes an untitled first section.
// Compose(marker, SplitSections(md), ...) reproduces md up to blank lines
// around headings.
func SplitSections(md string) []Section {
	var out []Section
	var cur *Section
	var body strings.Builder
	flush := func() {
		if cur != nil {
			cur.Markdown = body.String()
			out = append(out, *cur)
		} else if strings.TrimSpace(body.String()) != "" {
			out = append(out, Section{Markdown: body.String()})
		}
		body.Reset()
	}
	var st blockState
	for line := range strings.Lines(md) {
		if !st.open() && strings.HasPrefix(line, "## ") {
			flush()
			title := strings.TrimSpace(strings.TrimRight(strings.TrimSpace(line[3:]), "#"))
			cur = &Section{Title: title}
			continue
		}
		st.feed(line)
		body.WriteString(line)
	}
	flush()
	return out
}
