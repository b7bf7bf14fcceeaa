// Package live holds the rules every live model backend (openai:,
// anthropic:) follows, so that each backend is only the translation
// between an ALGAL effect request and its provider's wire format:
//
//   - what a failed request becomes (Failure): an HTTP status, a timeout, a
//     lost connection or a refused redirect is a failure, never an answer,
//     and its message names the status and the server's own message with
//     every configured secret redacted;
//   - what an answer may hold (Finish): configured secrets are redacted
//     from the output and the usage before anything is written, and an
//     answer larger than the cell's output budget or the backend's
//     max-answer-bytes is refused;
//   - which models reason (Reasoning): one table of the model families
//     that take max_completion_tokens and no sampling parameters;
//   - what a recorder learns beside the response (Report).
package live

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/effect"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/redact"
)

// DefaultMaxAnswerBytes bounds an answer when the backend sets no
// max-answer-bytes: 1 MiB.
const DefaultMaxAnswerBytes = 1 << 20

// MaxAnswerBytesBound is the largest max-answer-bytes a backend admits.
const MaxAnswerBytesBound = 64 << 20

// MaxServerMessage bounds the server's own message quoted in a failure.
const MaxServerMessage = 300

// Report is what a live backend tells the recorder in front of it about
// one request, beside the response that goes into the receipt.
type Report struct {
	// Redactions counts the secret values replaced in the answer (output
	// and usage) before it was returned.
	Redactions int
	// Status is the HTTP status of a failed request (0: none, as for a
	// lost connection or a timeout).
	Status int
	// Malformed says the server's body was not a response of the API at
	// all (not JSON, no choice, no message): recorded as
	// EFFECT_UNPARSEABLE, as upstream records it, but a failure of the
	// server, not an answer of the model, so it is never archived.
	Malformed bool
	// CacheRead and CacheWrite are the prompt tokens the server reported
	// reading from and writing to its prompt cache (-1: not reported).
	// Receipts have no field for them; tokensIn includes them.
	CacheRead, CacheWrite int64
}

// Failed reports whether a live request whose backend returned err and
// rep got no answer: it is never archived.
func Failed(err error, rep Report) bool { return IsFailure(err) || err != nil && rep.Malformed }

// Executor is a live backend: an effect executor that also reports.
type Executor interface {
	effect.Executor
	// ExecuteReport is Execute with the report.
	ExecuteReport(ctx context.Context, req effect.Request) (effect.Response, Report, error)
}

// IsFailure reports whether an error a live backend returned is a failed
// request (no answer from the model: an HTTP error status, a timeout, a
// lost connection, a refused redirect or answer, a cancellation) rather
// than an answer the model gave that cannot be read
// (EFFECT_UNPARSEABLE). Failures are never archived.
func IsFailure(err error) bool {
	return err != nil && fault.CodeOf(err) != fault.EffectUnparseable
}

// IsFailureCode is IsFailure for a recorded error code.
func IsFailureCode(code string) bool { return code != "" && code != fault.EffectUnparseable }

// Failure kinds for NewFailure.
const (
	// HTTPStatus: the server answered with an error status.
	HTTPStatus = iota
	// Timeout: an attempt ran past its timeout.
	Timeout
	// NoResponse: the connection was refused, reset or lost.
	NoResponse
	// Redirect: the server redirected to another origin.
	Redirect
	// TooLarge: the body or the answer is over its bound.
	TooLarge
)

// Failure describes one failed request.
type Failure struct {
	Kind int
	// Provider names the service in messages ("provider", "anthropic").
	Provider string
	// Status is the HTTP status (HTTPStatus).
	Status int
	// ServerMessage is the server's own error message, as sent: it is
	// redacted, flattened to one line and bounded here.
	ServerMessage string
	// Retryable says whether the status is one the client retries (it was
	// then retried up to the configured count).
	Retryable bool
	// Detail is added to the message (TooLarge: the sizes).
	Detail string
}

// Error builds the recorded failure, with every secret redacted.
func (f Failure) Error(red *redact.Redactor) *fault.Error {
	who := f.Provider
	if who == "" {
		who = "provider"
	}
	var msg string
	e := &fault.Error{Code: fault.EffectFailed}
	switch f.Kind {
	case HTTPStatus:
		switch {
		case f.Status == 429:
			msg = fmt.Sprintf("%s returned HTTP 429 (rate limited) after the configured retries", who)
		case f.Retryable:
			msg = fmt.Sprintf("%s returned HTTP %d after the configured retries", who, f.Status)
		case f.Status == 401 || f.Status == 403:
			msg = fmt.Sprintf("%s refused the credentials (HTTP %d)", who, f.Status)
			e.NotRetryable = true
		default:
			msg = fmt.Sprintf("%s rejected the request (HTTP %d)", who, f.Status)
			e.NotRetryable = true
		}
	case Timeout:
		e.Code = fault.BudgetExhausted
		e.Uncertain = true
		msg = who + " request timed out; external completion may be uncertain"
	case Redirect:
		e.NotRetryable = true
		msg = who + " redirected to another origin: refused (the key is never sent to another host)"
	case TooLarge:
		e.Code = fault.BudgetExhausted
		e.NotRetryable = true
		msg = who + " answer refused: " + f.Detail
	default:
		msg = who + " request failed: no response (connection refused, reset or lost)"
	}
	if s := ServerText(f.ServerMessage, red); s != "" {
		msg += ": " + s
	}
	e.Message, _ = red.Count(msg)
	return e
}

// ServerText is a server's error message as a failure quotes it: secrets
// redacted, control characters and line breaks folded to spaces, at most
// MaxServerMessage bytes.
func ServerText(s string, red *redact.Redactor) string {
	s, _ = red.Count(s)
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > MaxServerMessage {
		cut := MaxServerMessage
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// Finish is the last step of every answer: it redacts secrets from the
// output and the usage, then refuses an output whose canonical JSON is
// larger than the cell's budget.maxOutputBytes or than maxAnswer bytes
// (<= 0: DefaultMaxAnswerBytes). The returned count is the number of
// redactions made.
func Finish(req effect.Request, resp effect.Response, red *redact.Redactor, maxAnswer int, provider string) (effect.Response, int, error) {
	out, n := red.Value(resp.Output)
	resp.Output = out
	if resp.Usage != nil {
		u, un := red.Value(resp.Usage)
		resp.Usage, _ = u.(map[string]any)
		n += un
	}
	if err := Bound(req, resp.Output, maxAnswer, provider); err != nil {
		return effect.Response{Usage: resp.Usage}, n, err
	}
	return resp, n, nil
}

// Bound refuses an output over the cell's budget.maxOutputBytes or
// maxAnswer bytes (<= 0: DefaultMaxAnswerBytes).
func Bound(req effect.Request, output any, maxAnswer int, provider string) error {
	if maxAnswer <= 0 {
		maxAnswer = DefaultMaxAnswerBytes
	}
	limit, what := maxAnswer, "max-answer-bytes"
	budget, _ := req["budget"].(map[string]any)
	if b, ok := budget["maxOutputBytes"].(float64); ok && b > 0 && int(b) < limit {
		limit, what = int(b), "the cell's maxOutputBytes"
	}
	enc, err := canon.Encode(output)
	if err != nil {
		return &fault.Error{Code: fault.EffectUnparseable, Message: "answer is not canonical JSON"}
	}
	if len(enc) > limit {
		return Failure{Kind: TooLarge, Provider: provider, Detail: fmt.Sprintf("the answer is %d bytes, over %s (%d)", len(enc), what, limit)}.Error(nil)
	}
	return nil
}

// BodyLimit is the response body bound of a backend whose answers may be
// maxAnswer bytes (<= 0: DefaultMaxAnswerBytes): the answer plus room for
// the envelope and JSON escaping.
func BodyLimit(maxAnswer int) int64 {
	if maxAnswer <= 0 {
		maxAnswer = DefaultMaxAnswerBytes
	}
	return int64(maxAnswer)*2 + 64<<10
}
