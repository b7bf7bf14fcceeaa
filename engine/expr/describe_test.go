package expr

import (
	"errors"
	"fmt"
	"testing"
)

// TestDescribe pins the sentence of every error code, through the real
// compile and run paths, and that the canonical text is untouched.
func TestDescribe(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		program any
		env     map[string]any
		fuel    int
		want    string
	}{
		{[]any{"eqq", 1.0, 1.0}, nil, DefaultFuel, `unknown op "eqq" (did you mean "eq"?)`},
		{[]any{"frobnicate", 1.0}, nil, DefaultFuel, `unknown op "frobnicate"`},
		{[]any{"if", true}, nil, DefaultFuel, `op "if" takes 3 arguments, got 1`},
		{[]any{"add"}, nil, DefaultFuel, `op "add" takes at least 1 argument, got 0`},
		{[]any{"add", 1.0, "x"}, nil, DefaultFuel, `op "add" argument 1 must be a number, got text`},
		{[]any{"lt", 1.0, "x"}, nil, DefaultFuel, `op "lt" compares two numbers or two strings, got number and text`},
		{[]any{"get", "scroe"}, map[string]any{"score": 1.0}, DefaultFuel, `unbound name "scroe" (did you mean "score"?)`},
		{[]any{"nth", []any{"list"}, 0.0}, nil, DefaultFuel, `op "nth": index 0 out of range 0`},
		{[]any{"clamp", 1.0, 3.0, 0.0}, nil, DefaultFuel, `op "clamp": clamp lo must be <= hi`},
		{[]any{"mul", 1e300, 1e300}, nil, DefaultFuel, `op "mul" gave a number that is not finite`},
		{[]any{"div", 1.0, 0.0}, nil, DefaultFuel, `op "div" divides by zero`},
		{[]any{"split", "abc", ""}, nil, DefaultFuel, `op "split": separator must be non-empty`},
		{[]any{"add", 1.0, 2.0}, nil, 3, `out of fuel: the next step costs 1 and 0 is left`},
		{1.0, nil, MaxFuel + 1, `fuel budget must be an integer in [0, 1000000]`},
		{[]any{"flat", []any{"get", "l"}}, map[string]any{"l": listOf(40, func(int) any { return listOf(40, func(int) any { return 0.0 }) })}, DefaultFuel, `a list has over 1024 elements`},
		{[]any{1.0}, nil, DefaultFuel, `op head must be a string`},
		{[]any{"let", "1x", 1.0, 2.0}, nil, DefaultFuel, `op "let": binder arg 0 must be an identifier <= 64 chars`},
	} {
		env := c.env
		if env == nil {
			env = map[string]any{}
		}
		_, _, err := Run(c.program, env, c.fuel)
		if err == nil {
			t.Errorf("%v: no error", c.program)
			continue
		}
		names := make([]string, 0, len(env))
		for k := range env {
			names = append(names, k)
		}
		if got := Describe(err, names...); got != c.want {
			t.Errorf("%v: Describe = %q, want %q (canonical %s)", c.program, got, c.want, Canonical(err))
		}
		if Canonical(err)[0] != '{' || err.Error() != Canonical(err) {
			t.Errorf("%v: canonical text changed: Error() %q, Canonical %q", c.program, err.Error(), Canonical(err))
		}
	}
}

func TestDescribeOtherErrors(t *testing.T) {
	t.Parallel()
	if got := Describe(errors.New("plain")); got != "plain" {
		t.Errorf("Describe(plain) = %q", got)
	}
	if got := Describe(nil); got != "" {
		t.Errorf("Describe(nil) = %q", got)
	}
	_, _, err := Run([]any{"eqq", 1.0, 1.0}, map[string]any{}, 10)
	if got, want := Describe(fmt.Errorf("scorer: %w", err)), `unknown op "eqq" (did you mean "eq"?)`; got != want {
		t.Errorf("Describe(wrapped) = %q, want %q", got, want)
	}
}

func TestHumanize(t *testing.T) {
	t.Parallel()
	_, _, op := Run([]any{"frobnicate", 1.0}, map[string]any{}, 10)
	_, _, typ := Run([]any{"add", 1.0, "x"}, map[string]any{}, 10)
	_, _, path := Run([]any{"get", "a", "b"}, map[string]any{}, 10)
	for _, c := range []struct{ in, want string }{
		{`cells[0] "rate": expr.program: ` + Canonical(op), `cells[0] "rate": expr.program: unknown op "frobnicate"`},
		{"expr " + Canonical(typ) + " and guard expr " + Canonical(path),
			`expr op "add" argument 1 must be a number, got text and guard expr unbound name "a"`},
		{`no error {"code":"OTHER"} here {"code":"EXPR_OP"`, `no error {"code":"OTHER"} here {"code":"EXPR_OP"`},
		{`{"op":"eqq","code":"EXPR_OP"}`, `{"op":"eqq","code":"EXPR_OP"}`}, // not canonical: left alone
		{"", ""},
	} {
		if got := Humanize(c.in); got != c.want {
			t.Errorf("Humanize(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
