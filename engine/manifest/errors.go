package manifest

import "fmt"

// Contract codes raised by this package.
const (
	CodeParse             = "PARSE_FAILED"
	CodeInvalid           = "MANIFEST_INVALID"
	CodeCycle             = "GRAPH_CYCLE"
	CodeTypeMismatch      = "TYPE_MISMATCH"
	CodeGuardInvalid      = "GUARD_INVALID"
	CodeInterfaceMismatch = "INTERFACE_MISMATCH"
	CodeFnUnknown         = "FN_UNKNOWN"
	CodeToolUnknown       = "TOOL_UNKNOWN"
	CodeStoreMiss         = "STORE_MISS"
	CodeDigestMismatch    = "DIGEST_MISMATCH"
	CodeBudget            = "BUDGET_EXHAUSTED"
	CodeDepth             = "DEPTH_EXCEEDED"
)

// Error is an admission rejection. Message names where the problem is
// (cell, field) and why, e.g.
//
//	cells[3] "route": output.labels: duplicate label "bug"
type Error struct {
	Code    string
	Message string
}

func (e *Error) Error() string { return e.Message }

// ErrorCode returns the contract code (PARSE_FAILED, MANIFEST_INVALID, ...).
func (e *Error) ErrorCode() string { return e.Code }

// fail builds an error located at loc (may be empty).
func fail(code, loc, format string, a ...any) *Error {
	msg := fmt.Sprintf(format, a...)
	if loc != "" {
		msg = loc + ": " + msg
	}
	return &Error{Code: code, Message: msg}
}

// invalid is the PARSE_FAILED shape used for malformed declarations.
func invalid(loc, format string, a ...any) *Error { return fail(CodeParse, loc, format, a...) }

// limit is the BUDGET_EXHAUSTED shape used for count and byte bounds.
func limit(loc, format string, a ...any) *Error { return fail(CodeBudget, loc, format, a...) }

// within prefixes an error's location with an outer location.
func within(loc string, err error) error {
	if err == nil || loc == "" {
		return err
	}
	if e, ok := err.(*Error); ok {
		return &Error{Code: e.Code, Message: loc + ": " + e.Message}
	}
	return err
}

// join builds a dotted field path.
func join(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	case b[0] == '[':
		return a + b
	}
	return a + "." + b
}
