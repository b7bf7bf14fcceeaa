// Package redact removes secrets (API keys, GitHub tokens) from text by
// value, not by spelling. A server that echoes what it received, a proxy's
// error page or a log line can carry a secret in another form than the one
// configured: upper- or lower-cased, without its vendor prefix (ghs_, ghp_,
// gho_, ghu_, ghr_, github_pat_, sk-, sk-proj-, sk-ant-), base64- or
// base64url-encoded (also inside a longer encoding, such as the Basic
// credentials "x-access-token:<token>"), or wrapped across lines. Each
// configured secret is expanded once into every such form; the text is
// searched for each with its line breaks (and the indentation after them)
// set aside, case-insensitively; half of any form, as a message cut to a
// width leaves it, is redacted too.
//
// Use New with every secret a command holds, then String or Bytes on any
// text before it is printed, Error on an error before it is returned, and
// Writer around an output stream (it holds back the tail of the stream
// until it can tell that no secret straddles it; call Flush at the end).
package redact

import (
	"encoding/base64"
	"errors"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/algal-assay/assay/engine/fault"
)

// Redacted is what every form of a secret is replaced with.
const Redacted = "[REDACTED]"

// MinSecret is the shortest secret redacted: shorter values are not
// credentials and replacing them would garble ordinary text.
const MinSecret = 6

// minForm is the shortest derived form matched (a secret's body without
// its prefix, a fragment of an encoding): shorter ones would match by
// chance.
const minForm = 8

// Prefixes are the vendor prefixes a secret may be echoed without,
// longest first so the longest one is stripped.
var Prefixes = []string{"github_pat_", "sk-proj-", "sk-ant-", "ghs_", "ghp_", "gho_", "ghu_", "ghr_", "sk-"}

// maxIndent is how much indentation after a line break is skipped
// when a secret is wrapped across lines.
const maxIndent = 8

// Redactor replaces every form of its secrets. The zero value and nil
// redact nothing.
type Redactor struct {
	// forms are the lower-cased forms, longest first.
	forms []string
	// maxMatch bounds how long one match can be in the text (every
	// character of the longest form followed by a line break and
	// indentation), for Writer's hold-back.
	maxMatch int
}

// New returns a redactor for secrets; empty and short (< MinSecret) ones
// are ignored.
func New(secrets ...string) *Redactor {
	r := &Redactor{}
	for _, s := range secrets {
		if len(s) < MinSecret {
			continue
		}
		for _, f := range Forms(s) {
			if f = lowerASCII(f); !slices.Contains(r.forms, f) {
				r.forms = append(r.forms, f)
			}
		}
	}
	slices.SortStableFunc(r.forms, func(a, b string) int { return len(b) - len(a) })
	if len(r.forms) > 0 {
		r.maxMatch = len(r.forms[0]) * (1 + maxBreak + maxIndent)
	}
	return r
}

func lowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// maxEscapes is how many backslashes may escape a line break: one in a
// JSON string or a Go-quoted message, two in a quoted message inside a
// JSON string (a JSON summary quoting an error that quotes the text),
// and so on.
const maxEscapes = 4

// maxBreak is the longest line break breakLen takes: \r\n escaped
// maxEscapes times.
const maxBreak = 2 * (maxEscapes + 1)

// breakLen is the length of the line break (raw, escaped as in a JSON
// string or a quoted message, as often as maxEscapes, or as in a
// workflow command's %0A) and indentation at s[i:], 0 when there is none.
func breakLen(s []byte, i int) int {
	n := lineBreak(s, i)
	if n == 0 {
		return 0
	}
	for k := 0; k < maxIndent && i+n < len(s) && isIndent(s[i+n]); k++ {
		n++
	}
	return n
}

// lineBreak is the length of the line break alone at s[i:], 0 when there
// is none.
func lineBreak(s []byte, i int) int {
	switch {
	case s[i] == '\n':
		return 1
	case s[i] == '\r' && i+1 < len(s) && s[i+1] == '\n':
		return 2
	case s[i] == '\\':
		return escapedBreak(s, i)
	case hasAt(s, i, "%0A"):
		return 3
	case hasAt(s, i, "%0D%0A"):
		return 6
	}
	return 0
}

// isIndent reports whether c may indent a continued line (a quote's '>'
// included).
func isIndent(c byte) bool { return c == ' ' || c == '\t' || c == '>' }

// escapedBreak is the length of an escaped \n or \r\n at s[i:] (each
// escaped by the same one to maxEscapes backslashes), 0 when there is
// none.
func escapedBreak(s []byte, i int) int {
	k := 0
	for i+k < len(s) && s[i+k] == '\\' && k < maxEscapes {
		k++
	}
	esc := strings.Repeat("\\", k)
	switch {
	case hasAt(s, i, esc+"n"):
		return k + 1
	case hasAt(s, i, esc+"r"+esc+"n"):
		return 2*k + 2
	}
	return 0
}

func hasAt(s []byte, i int, what string) bool {
	return len(s)-i >= len(what) && string(s[i:i+len(what)]) == what
}

// spans finds every form in text, case-insensitively and across line
// breaks, as merged [start, end) ranges of text.
func (r *Redactor) spans(text []byte) [][2]int {
	if r == nil || len(r.forms) == 0 {
		return nil
	}
	sk := skeletonOf(text)
	var out [][2]int
	for _, f := range r.forms {
		eachIndex(sk.s, f, func(a int) { out = append(out, sk.span(a, a+len(f))) })
	}
	// A form cut short (a message truncated to a width, "ghs_S3cr3..."
	// or "...3cr3tT0ken") still gives half the secret away: a half of a
	// form, at least minForm long, is redacted with as much of the form
	// as follows it (a first half) or leads up to it (a last half).
	for _, f := range r.forms {
		if len(f) >= 2*minForm {
			out = sk.halfForms(f, out)
		}
	}
	return mergeSpans(out)
}

// skeleton is text without line breaks, lower-cased byte for byte; at
// maps each of its bytes back to text.
type skeleton struct {
	s  string
	at []int
}

func skeletonOf(text []byte) skeleton {
	skel := make([]byte, 0, len(text))
	at := make([]int, 0, len(text))
	for i := 0; i < len(text); {
		if n := breakLen(text, i); n > 0 {
			i += n
			continue
		}
		c := text[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		skel = append(skel, c)
		at = append(at, i)
		i++
	}
	return skeleton{string(skel), at}
}

// span is the range of text the skeleton's bytes [a, b) come from.
func (sk skeleton) span(a, b int) [2]int { return [2]int{sk.at[a], sk.at[b-1] + 1} }

// halfForms appends the spans of f's first half with as much of f as
// follows it, then of f's last half with as much of f as leads up to it.
func (sk skeleton) halfForms(f string, out [][2]int) [][2]int {
	h := (len(f) + 1) / 2
	eachIndex(sk.s, f[:h], func(a int) {
		m := h
		for a+m < len(sk.s) && m < len(f) && sk.s[a+m] == f[m] {
			m++
		}
		out = append(out, sk.span(a, a+m))
	})
	eachIndex(sk.s, f[len(f)-h:], func(b int) {
		s, j := b, len(f)-h
		for s > 0 && j > 0 && sk.s[s-1] == f[j-1] {
			s--
			j--
		}
		out = append(out, sk.span(s, b+h))
	})
	return out
}

// eachIndex calls found with the start of every occurrence of sub in s,
// overlapping ones included, in order.
func eachIndex(s, sub string, found func(int)) {
	for from := 0; ; {
		k := strings.Index(s[from:], sub)
		if k < 0 {
			return
		}
		found(from + k)
		from += k + 1
	}
}

// mergeSpans sorts spans by start and merges those that overlap or touch.
func mergeSpans(out [][2]int) [][2]int {
	slices.SortFunc(out, func(x, y [2]int) int { return x[0] - y[0] })
	merged := out[:0]
	for _, sp := range out {
		if n := len(merged); n > 0 && sp[0] <= merged[n-1][1] {
			merged[n-1][1] = max(merged[n-1][1], sp[1])
			continue
		}
		merged = append(merged, sp)
	}
	return merged
}

func replace(text []byte, spans [][2]int) []byte {
	if len(spans) == 0 {
		return text
	}
	out := make([]byte, 0, len(text))
	last := 0
	for _, sp := range spans {
		out = append(out, text[last:sp[0]]...)
		out = append(out, Redacted...)
		last = sp[1]
	}
	return append(out, text[last:]...)
}

// Forms lists what secret s is matched as: itself, its body without a
// known prefix, and the base64 and base64url encodings of each (and of
// their upper- and lower-cased spellings), whole and as the part that
// stays the same wherever the value sits inside a longer encoding.
func Forms(s string) []string {
	plain := plainForms(s)
	forms := slices.Clone(plain)
	for _, p := range plain {
		for _, v := range []string{p, strings.ToUpper(p), strings.ToLower(p)} {
			for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
				forms = append(forms, encodedForms(enc, v)...)
			}
		}
	}
	out := []string{s}
	for _, f := range forms {
		if len(f) >= minForm && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

// plainForms is s, and its body without the first known prefix it
// starts with (any case) when that body is at least minForm long.
func plainForms(s string) []string {
	for _, p := range Prefixes {
		if len(s) > len(p) && strings.EqualFold(s[:len(p)], p) {
			if body := s[len(p):]; len(body) >= minForm {
				return []string{s, body}
			}
			break
		}
	}
	return []string{s}
}

// encodedForms are the stable parts of v's encoding at each of the three
// byte alignments it can have inside a longer encoded value: the
// characters that depend only on v's bytes.
func encodedForms(enc *base64.Encoding, v string) []string {
	var out []string
	for lead := range 3 {
		e := enc.EncodeToString([]byte(strings.Repeat("\x00", lead) + v))
		// Characters 0..ceil(lead*8/6)-1 mix in the leading bytes; the
		// last group may mix in whatever follows v.
		start := (lead*8 + 5) / 6
		end := (lead + len(v)) * 8 / 6
		if lead == 0 {
			out = append(out, strings.TrimRight(e, "="))
		}
		if end > start {
			out = append(out, e[start:end])
		}
	}
	return out
}

// String returns s with every form of every secret replaced by Redacted.
func (r *Redactor) String(s string) string {
	if r == nil || len(r.forms) == 0 {
		return s
	}
	return string(r.Bytes([]byte(s)))
}

// Bytes is String for a byte slice.
func (r *Redactor) Bytes(b []byte) []byte {
	return replace(b, r.spans(b))
}

// Contains reports whether s holds any form of a secret.
func (r *Redactor) Contains(s string) bool {
	return len(r.spans([]byte(s))) > 0
}

// Error returns err with its message redacted. A coded error keeps its
// code and status; any other error becomes a coded error with code. The
// cause is dropped when the message changed: its text is the unredacted
// message. nil stays nil.
func (r *Redactor) Error(err error, code string) error {
	if err == nil || r == nil || len(r.forms) == 0 {
		return err
	}
	msg := err.Error()
	clean := r.String(msg)
	if clean == msg {
		return err
	}
	status := 0
	var e *fault.Error
	if errors.As(err, &e) {
		code, status = e.Code, e.Status
	}
	return &fault.Error{Code: code, Status: status, Message: clean}
}

// Writer redacts what passes through it. It holds back the end of what
// was written until later writes show that no secret straddles it (a
// secret split across two writes, or two lines, is still caught); Flush
// writes the rest.
type Writer struct {
	r       *Redactor
	w       io.Writer
	mu      sync.Mutex
	pending []byte
}

// Writer returns a redacting writer around w.
func (r *Redactor) Writer(w io.Writer) *Writer { return &Writer{r: r, w: w} }

// Write implements io.Writer.
func (rw *Writer) Write(b []byte) (int, error) {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if rw.r == nil || len(rw.r.forms) == 0 {
		return rw.w.Write(b)
	}
	rw.pending = append(rw.pending, b...)
	safe := len(rw.pending) - rw.r.maxMatch
	if safe <= 0 {
		return len(b), nil
	}
	// Cut before any match that reaches past the safe point, so it is
	// redacted whole once the rest has arrived.
	for _, m := range rw.r.spans(rw.pending) {
		if m[0] < safe && m[1] > safe {
			safe = m[0]
			break
		}
	}
	if err := rw.emit(safe); err != nil {
		return 0, err
	}
	return len(b), nil
}

func (rw *Writer) emit(n int) error {
	if n <= 0 {
		return nil
	}
	_, err := rw.w.Write(rw.r.Bytes(rw.pending[:n]))
	rw.pending = append(rw.pending[:0], rw.pending[n:]...)
	return err
}

// Flush writes everything held back.
func (rw *Writer) Flush() error {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	return rw.emit(len(rw.pending))
}
