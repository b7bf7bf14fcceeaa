package redact

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/fault"
)

const token = "ghs_S3cr3tT0kenValue0123456789"

// echoes are the forms a server or a log can give a secret back in.
func echoes(secret string) map[string]string {
	body := secret[strings.Index(secret, "_")+1:]
	if strings.HasPrefix(secret, "sk-") {
		body = strings.TrimPrefix(secret, "sk-")
	}
	half := len(secret) / 2
	b64 := base64.StdEncoding.EncodeToString([]byte(secret))
	return map[string]string{
		"exact":              secret,
		"upper":              strings.ToUpper(secret),
		"lower":              strings.ToLower(secret),
		"no prefix":          body,
		"no prefix upper":    strings.ToUpper(body),
		"base64":             base64.StdEncoding.EncodeToString([]byte(secret)),
		"base64 raw":         base64.RawStdEncoding.EncodeToString([]byte(secret)),
		"base64url":          base64.URLEncoding.EncodeToString([]byte(secret)),
		"base64 upper":       base64.StdEncoding.EncodeToString([]byte(strings.ToUpper(secret))),
		"base64 no prefix":   base64.StdEncoding.EncodeToString([]byte(body)),
		"basic credentials":  "Basic " + base64.StdEncoding.EncodeToString([]byte("x-access-token:"+secret)),
		"basic url":          base64.URLEncoding.EncodeToString([]byte("user:" + secret + ":tail")),
		"split lf":           secret[:half] + "\n" + secret[half:],
		"split crlf indent":  secret[:half] + "\r\n    " + secret[half:],
		"split json escape":  secret[:half] + `\n` + secret[half:],
		"split workflow %0A": secret[:half] + "%0A" + secret[half:],
		// A message cut to a width.
		"truncated end":    secret[:len(secret)*2/3+1] + "...",
		"truncated start":  "…" + secret[len(secret)/3:],
		"truncated base64": b64[:len(b64)*3/4] + "...",
		// A JSON summary quoting an error that quoted the text.
		"split escaped twice":      secret[:half] + `\\n` + secret[half:],
		"split crlf escaped twice": secret[:half] + `\\r\\n  ` + secret[half:],
		"split base64":             wrap(base64.StdEncoding.EncodeToString([]byte(secret)), 7),
		"split upper":              strings.ToUpper(secret[:3]) + "\n" + strings.ToUpper(secret[3:]),
	}
}

func wrap(s string, n int) string {
	var b strings.Builder
	for i := 0; i < len(s); i += n {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(s[i:min(i+n, len(s))])
	}
	return b.String()
}

// Every echo form of every kind of secret is gone from the text, and the
// text around it stays.
func TestRedactsEveryForm(t *testing.T) {
	t.Parallel()
	for _, secret := range []string{token, "ghp_AbCdEfGhIjKlMnOpQrStUvWxYz012345", "github_pat_11ABCDEFG0123456789_abcdefghijklmnop", "sk-proj-Zx9Yw8Vu7Ts6Rq5Po4", "sk-AbCdEf0123456789xyz", "plainsecretvalue42"} {
		r := New(secret)
		for name, form := range echoes(secret) {
			text := "before " + form + " after"
			got := r.String(text)
			if !strings.HasPrefix(got, "before ") || !strings.HasSuffix(got, " after") || !strings.Contains(got, Redacted) {
				t.Errorf("%s / %s: %q -> %q", secret, name, text, got)
			}
			if leaked(got, secret) {
				t.Errorf("%s / %s: the secret survives in %q", secret, name, got)
			}
		}
	}
}

// leaked says whether any recognisable part of secret is left.
func leaked(text, secret string) bool {
	flat := strings.ToLower(strings.NewReplacer("\n", "", "\r", "", " ", "", `\\`, "", `\n`, "", `\r`, "", "%0A", "").Replace(text))
	return strings.Contains(flat, strings.ToLower(secret[len(secret)/3:2*len(secret)/3]))
}

// Text without the secret is left alone, short secrets are ignored, and
// nil redacts nothing.
func TestLeavesOtherTextAlone(t *testing.T) {
	t.Parallel()
	r := New(token, "short", "")
	text := "short text with ghs_ prefix and base64 Z2hzXw== and a\nline break"
	if got := r.String(text); got != text {
		t.Fatalf("%q -> %q", text, got)
	}
	var none *Redactor
	if none.String(token) != token || New().String(token) != token {
		t.Fatal("an empty redactor changed text")
	}
}

// The writer catches a secret split across writes (byte by byte, and
// across lines), and Flush writes the rest.
func TestWriterAcrossWrites(t *testing.T) {
	t.Parallel()
	r := New(token)
	for name, form := range echoes(token) {
		var out bytes.Buffer
		w := r.Writer(&out)
		text := strings.Repeat("x", 300) + " " + form + " " + strings.Repeat("y", 300) + "\n"
		for i := range len(text) {
			if _, err := w.Write([]byte{text[i]}); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if leaked(out.String(), token) || !strings.HasSuffix(out.String(), strings.Repeat("y", 300)+"\n") || !strings.Contains(out.String(), Redacted) {
			t.Errorf("%s: %q", name, out.String())
		}
	}
}

// Error keeps a coded error's code and status and gives others the code
// asked for.
func TestErrorKeepsCode(t *testing.T) {
	t.Parallel()
	r := New(token)
	err := r.Error(&fault.Error{Code: "GITHUB_API", Status: 500, Message: "echo " + strings.ToUpper(token)}, "X")
	var e *fault.Error
	if !errors.As(err, &e) || e.Code != "GITHUB_API" || e.Status != 500 || strings.Contains(strings.ToLower(err.Error()), "s3cr3t") {
		t.Fatalf("%#v", err)
	}
	err = r.Error(errors.New("plain "+token), "CODE")
	if !errors.As(err, &e) || e.Code != "CODE" || leaked(err.Error(), token) {
		t.Fatalf("%#v", err)
	}
	clean := errors.New("nothing here")
	if r.Error(clean, "CODE") != clean {
		t.Fatal("an error without a secret was replaced")
	}
}

func BenchmarkRedactComment(b *testing.B) {
	r := New(token, "sk-AbCdEf0123456789xyz")
	text := []byte(strings.Repeat("| system | 4/6 | 1234 | 8 | yes |\n", 1800)) // about 64 KiB
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		r.Bytes(text)
	}
}

// Text without a secret passes through the writer unchanged, however it
// is cut into writes.
func TestWriterPassesOtherText(t *testing.T) {
	t.Parallel()
	var text strings.Builder
	for i := range 400 {
		fmt.Fprintf(&text, "line %d of the log, ghs_ and sk- mentioned\n", i)
	}
	for _, chunk := range []int{1, 7, 64, 4096} {
		var out bytes.Buffer
		w := New(token).Writer(&out)
		s := text.String()
		for i := 0; i < len(s); i += chunk {
			if _, err := w.Write([]byte(s[i:min(i+chunk, len(s))])); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if out.String() != s {
			t.Fatalf("chunk %d: the text changed", chunk)
		}
	}
}
