package github

import (
	"io"
	"strings"

	"github.com/algal-assay/assay/engine/fault"
)

// Redactor removes a secret (the GitHub token) from text before it is
// printed. Anything the API sends back can echo what it received,
// Authorization header included (a proxy's error page, a misconfigured
// server), and that text reaches errors, logs and the job summary.
type Redactor struct{ secrets []string }

// Redacted is what a secret is replaced with.
const Redacted = "[REDACTED]"

// NewRedactor redacts each non-empty secret. Secrets shorter than four
// bytes are ignored: replacing them would garble ordinary text and they are
// not credentials anyway.
func NewRedactor(secrets ...string) *Redactor {
	r := &Redactor{}
	for _, s := range secrets {
		if len(s) >= 4 {
			r.secrets = append(r.secrets, s)
		}
	}
	return r
}

// String returns s with every secret replaced.
func (r *Redactor) String(s string) string {
	if r == nil {
		return s
	}
	for _, sec := range r.secrets {
		s = strings.ReplaceAll(s, sec, Redacted)
	}
	return s
}

// Error returns err with its message redacted, keeping its code (a
// coded error's Code) so callers still see
// which failure it was. nil stays nil.
func (r *Redactor) Error(err error) error {
	if err == nil || r == nil {
		return err
	}
	msg := err.Error()
	clean := r.String(msg)
	if clean == msg {
		return err
	}
	code := CodeAPI
	status := 0
	if e, ok := fault.As(err); ok {
		code, status = e.Code, e.Status
	}
	// The cause is dropped: its text is the unredacted message.
	return &fault.Error{Code: code, Status: status, Message: clean}
}

// Writer returns a writer that redacts each write before passing it on.
// A secret split across two writes is not caught, so callers write whole
// lines or whole documents.
func (r *Redactor) Writer(w io.Writer) io.Writer { return redactingWriter{r, w} }

type redactingWriter struct {
	r *Redactor
	w io.Writer
}

func (rw redactingWriter) Write(b []byte) (int, error) {
	if _, err := io.WriteString(rw.w, rw.r.String(string(b))); err != nil {
		return 0, err
	}
	return len(b), nil
}
