// Package fault holds the codes of the ALGAL contracts and the one coded
// error type every Assay package returns.
//
// A code is the stable part of a failure: receipts record it, the CLI prints
// it in its JSON error shape, tests compare it. The codes a receipt may carry
// are upstream's closed table (receipt.rs CODES, listed in ReceiptCodes);
// host-only codes (VERIFY_FAILED, RECOVERY_BLOCKED and Assay's own, declared
// beside the package that raises them) never reach a receipt.
//
// Callers find the code of any error, however wrapped, with errors.As:
//
//	var f *fault.Error
//	if errors.As(err, &f) { ... f.Code ... }
//
// or with CodeOf. Error() prints one shape for every error:
//
//	[op ][file][:line:col][: byte N][: path]: message[: cause]
//
// where each bracketed part appears only when it is set.
package fault

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Receipt codes: every failure code an algal.run.v1 receipt may carry.
const (
	Parse             = "PARSE_FAILED"
	ManifestInvalid   = "MANIFEST_INVALID"
	GraphCycle        = "GRAPH_CYCLE"
	TypeMismatch      = "TYPE_MISMATCH"
	GuardInvalid      = "GUARD_INVALID"
	ScorerInvalid     = "SCORER_INVALID"
	AxisInvalid       = "AXIS_INVALID"
	InterfaceMismatch = "INTERFACE_MISMATCH"
	DepthExceeded     = "DEPTH_EXCEEDED"
	InputMissing      = "INPUT_MISSING"
	FnUnknown         = "FN_UNKNOWN"
	FnFailed          = "FN_FAILED"
	ExprFailed        = "EXPR_FAILED"
	ToolUnknown       = "TOOL_UNKNOWN"
	ToolFailed        = "TOOL_FAILED"
	EffectFailed      = "EFFECT_FAILED"
	EffectUnparseable = "EFFECT_UNPARSEABLE"
	EffectUnbound     = "EFFECT_UNBOUND"
	EffectSuspended   = "EFFECT_SUSPENDED"
	CapabilityDenied  = "CAPABILITY_DENIED"
	MailboxFull       = "MAILBOX_FULL"
	BudgetExhausted   = "BUDGET_EXHAUSTED"
	Stuck             = "STUCK"
	StoreMiss         = "STORE_MISS"
	DigestMismatch    = "DIGEST_MISMATCH"
	ReceiptMismatch   = "RECEIPT_MISMATCH"
	IOFailed          = "IO_FAILED"
	Internal          = "INTERNAL"
)

// Host-only codes of the contract: they never appear in a receipt.
const (
	VerifyFailed    = "VERIFY_FAILED"
	RecoveryBlocked = "RECOVERY_BLOCKED"
)

// ReceiptCodes returns the closed set of receipt failure codes, in
// upstream's order. The slice is a fresh copy.
func ReceiptCodes() []string {
	return []string{
		Parse, ManifestInvalid, GraphCycle, TypeMismatch, GuardInvalid,
		ScorerInvalid, AxisInvalid, InterfaceMismatch, DepthExceeded, InputMissing,
		FnUnknown, FnFailed, ExprFailed, ToolUnknown, ToolFailed, EffectFailed,
		EffectUnparseable, EffectUnbound, EffectSuspended, CapabilityDenied,
		MailboxFull, BudgetExhausted, Stuck, StoreMiss, DigestMismatch,
		ReceiptMismatch, IOFailed, Internal,
	}
}

// IsReceiptCode reports whether code is one a receipt may carry.
func IsReceiptCode(code string) bool {
	switch code {
	case Parse, ManifestInvalid, GraphCycle, TypeMismatch, GuardInvalid,
		ScorerInvalid, AxisInvalid, InterfaceMismatch, DepthExceeded, InputMissing,
		FnUnknown, FnFailed, ExprFailed, ToolUnknown, ToolFailed, EffectFailed,
		EffectUnparseable, EffectUnbound, EffectSuspended, CapabilityDenied,
		MailboxFull, BudgetExhausted, Stuck, StoreMiss, DigestMismatch,
		ReceiptMismatch, IOFailed, Internal:
		return true
	}
	return false
}

// Error is a coded failure. Code and Message are always set; the location
// fields and the cause are optional and only shape Error()'s prefix and
// suffix. The fields after Err are dispositions a few packages attach to a
// failure (an effect's retry policy, an expression's detail fields, an HTTP
// status); they never change what Error() prints.
type Error struct {
	Code    string
	Message string

	// Op names the operation that failed ("store get"); it is printed
	// before File, separated by a space.
	Op string
	// File is the file, directory or store key at fault.
	File string
	// Line and Column (1-based) point into File; printed when Line > 0.
	Line, Column int
	// Offset is a byte offset into the input; printed when HasOffset.
	Offset    int
	HasOffset bool
	// Path is the field path inside the document (`cells[0].kind`).
	Path string
	// Err is the underlying cause, printed after the message.
	Err error

	// Details holds contract detail fields (expr's {op,arg,want,got}).
	Details map[string]any
	// Status is the HTTP status of a remote answer, 0 otherwise.
	Status int
	// NotRetryable forbids re-issuing an effect request (retryable:false).
	NotRetryable bool
	// Uncertain says the world may have acted though no answer came back;
	// it implies NotRetryable.
	Uncertain bool
	// Wake lists the capability handles a suspended effect waits on.
	Wake []any
	// Host marks a host fault: routers return it instead of recording it.
	Host bool
	// Hint is advice for a person, such as ` (did you mean "prompt"?)`,
	// kept apart from Message because a message may be contract bytes (a
	// spawned manifest's rejection rides its receipt). Error() does not
	// print it; a reader of a file appends it where a person reads it.
	Hint string
}

// New builds an Error with a formatted message.
func New(code, format string, a ...any) *Error {
	if len(a) == 0 {
		return &Error{Code: code, Message: format}
	}
	return &Error{Code: code, Message: fmt.Sprintf(format, a...)}
}

// Wrap builds an Error whose cause is err; Error() prints
// "message: cause", or the cause alone when message is empty.
func Wrap(code string, err error, message string) *Error {
	return &Error{Code: code, Message: message, Err: err}
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.Op != "" {
		b.WriteString(e.Op)
		if e.File != "" {
			b.WriteByte(' ')
		}
	}
	b.WriteString(e.File)
	if e.Line > 0 {
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(e.Line))
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(e.Column))
	}
	sep := func() {
		if b.Len() > 0 {
			b.WriteString(": ")
		}
	}
	if e.HasOffset {
		sep()
		b.WriteString("byte ")
		b.WriteString(strconv.Itoa(e.Offset))
	}
	if e.Path != "" {
		sep()
		b.WriteString(e.Path)
	}
	if e.Message != "" {
		sep()
		b.WriteString(e.Message)
	}
	if e.Err != nil {
		sep()
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Located reports whether Error() says more than Message: a location or a
// cause is set.
func (e *Error) Located() bool {
	return e.Op != "" || e.File != "" || e.Line > 0 || e.HasOffset || e.Path != "" || e.Err != nil
}

// ErrorCode returns the code (for callers outside this module that expect
// the interface{ ErrorCode() string } convention).
func (e *Error) ErrorCode() string { return e.Code }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// As returns the first *Error in err's chain.
func As(err error) (*Error, bool) {
	var f *Error
	if errors.As(err, &f) {
		return f, true
	}
	return nil, false
}

// CodeOf returns the code of the first *Error in err's chain, or "" when
// there is none.
func CodeOf(err error) string {
	if f, ok := As(err); ok {
		return f.Code
	}
	return ""
}

// MessageOf returns the message of the first *Error in err's chain (without
// location or cause), or err.Error() when there is none.
func MessageOf(err error) string {
	if f, ok := As(err); ok {
		return f.Message
	}
	return err.Error()
}

// Advised is err's text for a person: Error() followed by the Hint of the
// first *Error in its chain, if any.
func Advised(err error) string {
	if f, ok := As(err); ok && f.Hint != "" {
		return err.Error() + f.Hint
	}
	return err.Error()
}

// Flat returns err as a bare coded error: the code of the first *Error in
// its chain (fallback when there is none) and err's whole text, location
// and cause included, as the message. It is how an error raised inside an
// activation becomes the code and message a receipt records.
func Flat(err error, fallback string) *Error {
	code := CodeOf(err)
	if code == "" {
		code = fallback
	}
	return &Error{Code: code, Message: err.Error()}
}
