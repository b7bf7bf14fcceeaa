package builtins

import (
	"fmt"
	"math"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
)

// The document builtins (manifest.compile.v1, context.compact.v1) check
// their JSON inputs with the native runtime's shape rules. Their failures
// are not FN_FAILED: the native registry passes the shape error through,
// so a malformed document fails PARSE_FAILED and an oversized one
// BUDGET_EXHAUSTED, each with the native message.

func shapeInvalid(format string, a ...any) *fault.Error {
	return &fault.Error{Code: fault.Parse, Message: fmt.Sprintf(format, a...)}
}

func shapeLimit(msg string) *fault.Error {
	return &fault.Error{Code: fault.BudgetExhausted, Message: msg}
}

func shapeObject(v any) (map[string]any, *fault.Error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, shapeInvalid("expected object")
	}
	return m, nil
}

func shapeText(v any, limit int) (string, *fault.Error) {
	s, ok := v.(string)
	if !ok {
		return "", shapeInvalid("expected text")
	}
	if canon.UTF16Len(s) > limit {
		return "", shapeInvalid("text exceeds bound")
	}
	return s, nil
}

// shapeID admits a lowercase kebab-case id of at most 64 code units.
func shapeID(v any) (string, *fault.Error) {
	s, f := shapeText(v, 64)
	if f != nil {
		return "", f
	}
	if !canon.IsID(s) {
		return "", shapeInvalid("expected lowercase kebab-case id")
	}
	return s, nil
}

// shapeKeys rejects an object key outside allowed. Keys are visited in
// byte order, the native map order, so the first unknown key reported is
// the same one.
func shapeKeys(v any, allowed ...string) *fault.Error {
	m, f := shapeObject(v)
	if f != nil {
		return f
	}
	if k, bad := canon.UnknownKey(m, allowed...); bad {
		return shapeInvalid("unknown key %s", k)
	}
	return nil
}

func shapeList(v any, limit int) ([]any, *fault.Error) {
	l, ok := v.([]any)
	if !ok {
		return nil, shapeInvalid("expected array")
	}
	if len(l) > limit {
		return nil, shapeLimit("array count")
	}
	return l, nil
}

// shapeInteger admits a non-negative integer in [lo, hi]. The native check
// reads the number as an unsigned 64-bit integer, so a fraction, a
// negative number or one past 2^64 is "expected non-negative integer".
func shapeInteger(v any, lo, hi int) (int, *fault.Error) {
	f, ok := v.(float64)
	if !ok || f < 0 || f != math.Trunc(f) || f >= 1<<64 {
		return 0, shapeInvalid("expected non-negative integer")
	}
	if f < float64(lo) || f > float64(hi) {
		return 0, shapeInvalid("integer out of bounds")
	}
	return int(f), nil
}

// canonLen is the canonical byte length of a delivered value. Delivered
// values are canonical JSON by construction; an encoding error can only
// come from a value built outside the port checks.
func canonLen(v any) (int, *fault.Error) {
	b, err := canon.Encode(v)
	if err != nil {
		return 0, coded(err)
	}
	return len(b), nil
}

func canonDigest(v any) (string, *fault.Error) {
	d, err := canon.Digest(v)
	if err != nil {
		return "", coded(err)
	}
	return d, nil
}

// coded keeps an error's contract code (INTERNAL when it has none) with
// its full text, as the run engine records any activation error.
func coded(err error) *fault.Error { return fault.Flat(err, fault.Internal) }
