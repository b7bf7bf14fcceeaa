package expr

import (
	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
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

// ErrorJSON returns an expression error as the upstream boundary serializes
// it: an object holding "code" and every detail field.
func ErrorJSON(e *fault.Error) map[string]any {
	m := make(map[string]any, len(e.Details)+1)
	for k, v := range e.Details {
		m[k] = v
	}
	m["code"] = e.Code
	return m
}

// Canonical renders err as the canonical JSON text of {code, ...details} when
// it is an expression error (one carrying Details), and as err.Error()
// otherwise.
func Canonical(err error) string {
	if e, ok := fault.As(err); ok && e.Details != nil {
		return e.Message
	}
	if err == nil {
		return ""
	}
	return err.Error()
}

// newErr builds an Error from alternating detail keys and values.
func newErr(code string, kv ...any) *fault.Error {
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
	e := &fault.Error{Code: code, Details: d}
	b, err := canon.Encode(ErrorJSON(e))
	if err != nil { // details are strings and small integers; cannot happen
		b = []byte(`{"code":"` + code + `"}`)
	}
	e.Message = string(b)
	return e
}

func errType(op string, arg int, want, got string) *fault.Error {
	return newErr(CodeType, "op", op, "arg", arg, "want", want, "got", got)
}

func errBounds(what string, max int) *fault.Error {
	return newErr(CodeBounds, "what", what, "max", max)
}

func errPath(op, what string) *fault.Error { return newErr(CodePath, "op", op, "what", what) }

func errUnbound(name string) *fault.Error {
	// The name is wrapped in quotes verbatim, without escaping, as upstream does.
	return errPath("get", "unbound name \""+name+"\"")
}

func errFuel(cost, left int) *fault.Error { return newErr(CodeFuel, "cost", cost, "left", left) }

// NewError builds an Error with the given detail fields (strings, bools or
// numbers) and its canonical message. Boundaries such as the CLI use it
// for request-level failures (EXPR_PARSE {what}).
func NewError(code string, details map[string]any) *fault.Error {
	kv := make([]any, 0, 2*len(details))
	for k, v := range details {
		kv = append(kv, k, v)
	}
	return newErr(code, kv...)
}

// BudgetError is the EXPR_BOUNDS failure of a fuel budget outside
// [0, MaxFuel].
func BudgetError() *fault.Error { return errBounds(fuelWhat, MaxFuel) }
