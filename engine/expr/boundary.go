package expr

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
)

// The boundary of a program given as text (`assay expr eval` and `check`
// arguments): raw-text bounds checked before anything is parsed, so that
// a huge argument costs neither the parse nor its tree, and the budget
// given as text.

// TextBound is the raw-text bound of a JSON argument and the EXPR_BOUNDS
// error that reports it. The contract bounds canonical bytes (16 KiB of
// program, 256 KiB of env), which only parsing can measure; 64 times that
// in raw text leaves room for any indentation a person writes, and past
// it the argument is refused with the contract's own bound.
type TextBound struct {
	Max      int
	what     string // the contract bound it stands for; "" a parse error
	contract int    // that bound's maximum
}

// The bounds of the program, env and names arguments.
var (
	ProgramText = TextBound{64 * MaxProgramBytes, "program-bytes", MaxProgramBytes} // 1 MiB
	EnvText     = TextBound{64 * MaxEnvBytes, "env-bytes", MaxEnvBytes}             // 16 MiB
	NamesText   = TextBound{64 * MaxProgramBytes, "", 0}
)

// ParseArgument parses the JSON text of argument flag (data, as read with
// readErr), refusing text over its bound before parsing it.
func ParseArgument(flag string, data []byte, readErr error, b TextBound) (any, error) {
	if len(data) > b.Max || fault.CodeOf(readErr) == fault.BudgetExhausted {
		if b.what == "" {
			return nil, NewError(CodeParse, map[string]any{"what": fmt.Sprintf("--%s is over %d bytes", flag, b.Max)})
		}
		return nil, NewError(CodeBounds, map[string]any{"what": b.what, "max": b.contract})
	}
	v, err := any(nil), readErr
	if err == nil {
		v, err = canon.Parse(data, b.Max)
	}
	if err != nil {
		return nil, NewError(CodeParse, map[string]any{"what": fmt.Sprintf("--%s is not valid JSON: %v", flag, err)})
	}
	return v, nil
}

// ParseFuel follows upstream's boundary: only an unsigned integer literal
// is a budget; anything else is an immediate EXPR_BOUNDS. Integers beyond
// the ceiling are passed on (saturated) so the pipeline reports them after
// the env and static checks.
func ParseFuel(s string) (int, bool) {
	if s == "" || strings.Trim(s, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil || n > math.MaxInt32 {
		return MaxFuel + 1, true
	}
	return int(n), true
}

// ErrorCode is an expression error's code; EXPR_PARSE when it carries
// none.
func ErrorCode(err error) string {
	if c := fault.CodeOf(err); c != "" {
		return c
	}
	return CodeParse
}
