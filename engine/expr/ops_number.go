package expr

import (
	"math"

	"github.com/algal-assay/assay/engine/fault"
)

var numberOps = []*opDef{
	{
		name: "add", min: 1, max: variadic,
		summary: "Sum of the numbers.", example: `["add", 1, 2, 3.5]`,
		evalArgs: func(_ *machine, n *node, args []any, _ int) (any, *fault.Error) {
			return foldNumbers(n, args, func(acc, x float64) float64 { return acc + x })
		},
	},
	{
		name: "mul", min: 1, max: variadic,
		summary: "Product of the numbers.", example: `["mul", 2, 3, 4]`,
		evalArgs: func(_ *machine, n *node, args []any, _ int) (any, *fault.Error) {
			return foldNumbers(n, args, func(acc, x float64) float64 { return acc * x })
		},
	},
	{
		name: "min", min: 1, max: variadic,
		summary: "Smallest of the numbers.", example: `["min", 3, -1, 2]`,
		evalArgs: func(_ *machine, n *node, args []any, _ int) (any, *fault.Error) {
			// Not the builtin min: a tie keeps the earlier number, so min(0, -0) is 0.
			return foldNumbers(n, args, func(acc, x float64) float64 {
				if x < acc {
					return x
				}
				return acc
			})
		},
	},
	{
		name: "max", min: 1, max: variadic,
		summary: "Largest of the numbers.", example: `["max", 3, -1, 2]`,
		evalArgs: func(_ *machine, n *node, args []any, _ int) (any, *fault.Error) {
			return foldNumbers(n, args, func(acc, x float64) float64 {
				if x > acc {
					return x
				}
				return acc
			})
		},
	},
	{
		name: "sub", min: 2, max: 2,
		summary: "First number minus the second.", example: `["sub", 10, 4]`,
		eval: func(m *machine, n *node) (any, *fault.Error) {
			a, b, err := m.twoNumbers(n)
			if err != nil {
				return nil, err
			}
			return finite(n.opName, a-b)
		},
	},
	{
		name: "div", min: 2, max: 2,
		summary: "Float division; a zero divisor (also -0) fails EXPR_DIV_ZERO.", example: `["div", 7, 2]`,
		eval: func(m *machine, n *node) (any, *fault.Error) {
			return m.divide(n, func(a, b float64) float64 { return a / b })
		},
	},
	{
		name: "mod", min: 2, max: 2,
		summary: "Truncated remainder, with the dividend's sign (like JavaScript %).", example: `["mod", -7, 3]`,
		eval: func(m *machine, n *node) (any, *fault.Error) { return m.divide(n, math.Mod) },
	},
	{
		name: "neg", min: 1, max: 1,
		summary: "The number negated.", example: `["neg", 5]`,
		eval: func(m *machine, n *node) (any, *fault.Error) {
			return m.unaryNumber(n, func(x float64) float64 { return -x })
		},
	},
	{
		name: "abs", min: 1, max: 1,
		summary: "Absolute value.", example: `["abs", -2.5]`,
		eval: func(m *machine, n *node) (any, *fault.Error) { return m.unaryNumber(n, math.Abs) },
	},
	{
		name: "floor", min: 1, max: 1,
		summary: "Largest integer not above the number.", example: `["floor", -1.5]`,
		eval: func(m *machine, n *node) (any, *fault.Error) { return m.unaryNumber(n, math.Floor) },
	},
	{
		name: "ceil", min: 1, max: 1,
		summary: "Smallest integer not below the number.", example: `["ceil", 1.2]`,
		eval: func(m *machine, n *node) (any, *fault.Error) { return m.unaryNumber(n, math.Ceil) },
	},
	{
		name: "round", min: 1, max: 1,
		summary: "Nearest integer, ties toward +infinity (JavaScript Math.round).", example: `["round", 2.5]`,
		eval: func(m *machine, n *node) (any, *fault.Error) {
			return m.unaryNumber(n, func(x float64) float64 {
				// Decided on x - floor(x) so that adding 0.5 cannot round
				// 0.49999999999999994 up.
				f := math.Floor(x)
				if x-f < 0.5 {
					return f
				}
				return f + 1
			})
		},
	},
	{
		name: "clamp", min: 3, max: 3,
		summary: "[clamp, x, lo, hi]: x limited to [lo, hi]; lo > hi fails EXPR_ARG.", example: `["clamp", 12, 0, 10]`,
		eval: func(m *machine, n *node) (any, *fault.Error) {
			x, err := m.num(n.args[0], n.opName, 0)
			if err != nil {
				return nil, err
			}
			lo, err := m.num(n.args[1], n.opName, 1)
			if err != nil {
				return nil, err
			}
			hi, err := m.num(n.args[2], n.opName, 2)
			if err != nil {
				return nil, err
			}
			if lo > hi {
				return nil, newErr(CodeArg, "op", n.opName, "what", "clamp lo must be <= hi")
			}
			return box(min(max(x, lo), hi)), nil
		},
	},
}

// foldNumbers is add, mul, min and max: every evaluated argument must be
// a number, folded left to right by step from the first.
func foldNumbers(n *node, args []any, step func(acc, x float64) float64) (any, *fault.Error) {
	acc, ok := args[0].(float64)
	if !ok {
		return nil, errType(n.opName, 0, "number", kindOf(args[0]))
	}
	for i, v := range args[1:] {
		x, ok := v.(float64)
		if !ok {
			return nil, errType(n.opName, i+1, "number", kindOf(v))
		}
		acc = step(acc, x)
	}
	return finite(n.opName, acc)
}

// twoNumbers reads sub, div and mod's operands: argument 0 is evaluated
// and checked before argument 1 runs.
func (m *machine) twoNumbers(n *node) (a, b float64, err *fault.Error) {
	if a, err = m.num(n.args[0], n.opName, 0); err != nil {
		return 0, 0, err
	}
	if b, err = m.num(n.args[1], n.opName, 1); err != nil {
		return 0, 0, err
	}
	return a, b, nil
}

// divide is div and mod: two numbers, a zero divisor (also -0) refused.
func (m *machine) divide(n *node, f func(a, b float64) float64) (any, *fault.Error) {
	a, b, err := m.twoNumbers(n)
	if err != nil {
		return nil, err
	}
	if b == 0 {
		return nil, newErr(CodeDivZero, "op", n.opName)
	}
	return finite(n.opName, f(a, b))
}

func (m *machine) unaryNumber(n *node, f func(float64) float64) (any, *fault.Error) {
	x, err := m.num(n.args[0], n.opName, 0)
	if err != nil {
		return nil, err
	}
	return finite(n.opName, f(x))
}
