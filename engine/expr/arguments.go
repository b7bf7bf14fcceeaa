package expr

import (
	"io"
	"strings"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/internal/suggest"
)

// The arguments of `assay expr eval` and `check` as text: read inline,
// from @FILE or from @- (stdin), bounded before they are parsed, and the
// result and error objects printed for them.

// ReadArgument reads the JSON argument of flag, given inline or as @FILE
// (@- for stdin), refusing text over its bound before parsing it.
func ReadArgument(flag, arg string, bound TextBound, stdin io.Reader) (any, error) {
	var data []byte
	var err error
	rest, fromFile := strings.CutPrefix(arg, "@")
	switch {
	case fromFile && rest == "-":
		data, err = io.ReadAll(io.LimitReader(stdin, int64(bound.Max)+1))
	case fromFile:
		data, err = canon.ReadBounded(rest, bound.Max)
	default:
		data = []byte(arg)
	}
	return ParseArgument(flag, data, err, bound)
}

// EvalArguments runs a program given as text through the run pipeline
// (Run): env admission, the static check, the budget check, evaluation
// and the output checks. env "" is {}; fuel is the budget as text
// (ParseFuel).
func EvalArguments(program, env, fuel string, stdin io.Reader) (v any, burn int, err error) {
	prog, err := ReadArgument("program", program, ProgramText, stdin)
	if err != nil {
		return nil, 0, err
	}
	vars := map[string]any{}
	if env != "" {
		v, err := ReadArgument("env", env, EnvText, stdin)
		if err != nil {
			return nil, 0, err
		}
		m, ok := v.(map[string]any)
		if !ok {
			// Upstream's boundary silently treats a non-object env as {};
			// the CLI rejects it so a typo cannot pass unnoticed.
			return nil, 0, NewError(CodeParse, map[string]any{"what": "--env must be a JSON object"})
		}
		vars = m
	}
	budget, ok := ParseFuel(fuel)
	if !ok {
		return nil, 0, BudgetError()
	}
	return Run(prog, vars, budget)
}

// ResultValue is what eval prints: {"burn","value"}, or {"burn","error"}
// when err (ErrorValue).
func ResultValue(v any, burn int, err error) map[string]any {
	out := map[string]any{"burn": float64(burn)}
	if err != nil {
		out["error"] = ErrorValue(err)
	} else {
		out["value"] = v
	}
	return out
}

// ErrorValue is upstream's error object {"code","message"}, the
// canonical expression error as its message, with the suggestion a
// person needs beside it ("hint": `did you mean "eq"?`) when there is
// one.
func ErrorValue(err error) map[string]any {
	out := map[string]any{"code": ErrorCode(err), "message": Canonical(err)}
	if _, hint, ok := suggest.SplitHint(Describe(err)); ok {
		out["hint"] = hint
	}
	return out
}
