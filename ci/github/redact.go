package github

import (
	"io"

	"github.com/algal-assay/assay/engine/redact"
)

// Redactor removes secrets (the GitHub token) from text before it is
// printed, in every form engine/redact knows (case, prefix, base64,
// line breaks). Anything the API sends back can echo what it received,
// Authorization header included (a proxy's error page, a misconfigured
// server), and that text reaches errors, logs, the comment and the job
// summary.
type Redactor struct{ *redact.Redactor }

// Redacted is what a secret is replaced with.
const Redacted = redact.Redacted

// NewRedactor redacts each secret of at least redact.MinSecret bytes.
func NewRedactor(secrets ...string) *Redactor { return &Redactor{redact.New(secrets...)} }

// Error returns err with its message redacted, keeping its code (a coded
// error's Code; CodeAPI otherwise) so callers still see which failure it
// was. nil stays nil.
func (r *Redactor) Error(err error) error {
	if r == nil {
		return err
	}
	return r.Redactor.Error(err, CodeAPI)
}

// String returns s with every secret replaced.
func (r *Redactor) String(s string) string {
	if r == nil {
		return s
	}
	return r.Redactor.String(s)
}

// Writer returns a writer that redacts what passes through it, holding
// back a tail until Flush so a secret split across writes is caught.
func (r *Redactor) Writer(w io.Writer) *redact.Writer { return r.Redactor.Writer(w) }
