package expr

import (
	"github.com/algal-assay/assay/engine/canon"
)

// The closed set of error codes an expression can fail with.
const (
	CodeParse   = "EXPR_PARSE"
	CodeOp      = "EXPR_OP"
	CodeArity   = "EXPR_ARITY"
	CodeType    = "EXPR_TYPE"
	CodePath    = "EXPR_PATH"
	CodeArg     = "EXPR_ARG"
	CodeNum     = "EXPR_NUM"
	CodeDivZero = "EXPR_DIV_ZERO"
	CodeBounds  = "EXPR_BOUNDS"
	CodeFuel    = "EXPR_FUEL"
)

// Error is an expression failure: a code from the closed EXPR_* set and the
// detail fields upstream attaches to it ({op,arg,want,got} for EXPR_TYPE,
// {what,max} for EXPR_BOUNDS, ...). Message is the canonical JSON rendering
// of {code, ...details}, the exact text receipts embed after "expr " or
// "guard expr ".
type Error struct {
	Code    string
	Message string
	// Details holds the detail fields (never "code"); values are strings
	// or float64 integers so the error is identical data on every host.
	Details map[string]any
}

func (e *Error) Error() string { return e.Message }

// ErrorCode returns the EXPR_* code.
func (e *Error) ErrorCode() string { return e.Code }

// JSON returns the error as the upstream boundary serializes it: an object
// holding "code" and every detail field.
func (e *Error) JSON() map[string]any {
	m := make(map[string]any, len(e.Details)+1)
	for k, v := range e.Details {
		m[k] = v
	}
	m["code"] = e.Code
	return m
}

// Canonical renders err as the canonical JSON text of {code, ...details} when
// it is an *Error, and as err.Error() otherwise.
func Canonical(err error) string {
	if e, ok := err.(*Error); ok {
		return e.Message
	}
	if err == nil {
		return ""
	}
	return err.Error()
}

// newErr builds an Error from alternating detail keys and values.
func newErr(code string, kv ...any) *Error {
	d := make(map[string]any, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		k := kv[i].(string)
		switch v := kv[i+1].(type) {
		case int:
			d[k] = float64(v)
		default:
			d[k] = v
		}
	}
	e := &Error{Code: code, Details: d}
	b, err := canon.Encode(e.JSON())
	if err != nil { // details are strings and small integers; cannot happen
		b = []byte(`{"code":"` + code + `"}`)
	}
	e.Message = string(b)
	return e
}

func errType(op string, arg int, want, got string) *Error {
	return newErr(CodeType, "op", op, "arg", arg, "want", want, "got", got)
}

func errBounds(what string, max int) *Error {
	return newErr(CodeBounds, "what", what, "max", max)
}

func errPath(op, what string) *Error { return newErr(CodePath, "op", op, "what", what) }

func errUnbound(name string) *Error {
	// The name is wrapped in quotes verbatim, without escaping, as upstream does.
	return errPath("get", "unbound name \""+name+"\"")
}

func errFuel(cost, left int) *Error { return newErr(CodeFuel, "cost", cost, "left", left) }

// NewError builds an Error with the given detail fields (strings, bools or
// numbers) and its canonical message. Boundaries such as the CLI use it
// for request-level failures (EXPR_PARSE {what}).
func NewError(code string, details map[string]any) *Error {
	kv := make([]any, 0, 2*len(details))
	for k, v := range details {
		kv = append(kv, k, v)
	}
	return newErr(code, kv...)
}

// BudgetError is the EXPR_BOUNDS failure of a fuel budget outside
// [0, MaxFuel].
func BudgetError() *Error { return errBounds(fuelWhat, MaxFuel) }
