package manifest

import (
	"fmt"

	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/internal/suggest"
)

// fail builds an error located at loc (may be empty).
func fail(code, loc, format string, a ...any) *fault.Error {
	msg := fmt.Sprintf(format, a...)
	if loc != "" {
		msg = loc + ": " + msg
	}
	return &fault.Error{Code: code, Message: msg}
}

// invalid is the PARSE_FAILED shape used for malformed declarations.
func invalid(loc, format string, a ...any) *fault.Error { return fail(fault.Parse, loc, format, a...) }

// limit is the BUDGET_EXHAUSTED shape used for count and byte bounds.
func limit(loc, format string, a ...any) *fault.Error {
	return fail(fault.BudgetExhausted, loc, format, a...)
}

// hinted adds a did-you-mean for name among known to e.
func hinted(e *fault.Error, name string, known []string) *fault.Error {
	e.Hint = suggest.DidYouMean(name, known)
	return e
}

// within prefixes an error's location with an outer location.
func within(loc string, err error) error {
	if err == nil || loc == "" {
		return err
	}
	// Only a bare rejection (code and message, as this package raises them)
	// is re-located; a located error (canon's byte offset, a store key) or
	// an expression error with its detail fields passes through unchanged.
	if e, ok := fault.As(err); ok && e == err && !e.Located() && e.Details == nil {
		return &fault.Error{Code: e.Code, Message: loc + ": " + e.Message, Hint: e.Hint}
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
