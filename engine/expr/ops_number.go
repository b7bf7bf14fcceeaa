package expr

import (
	"math"

	"github.com/algal-assay/assay/engine/fault"
)

var numberOps = []*opDef{
	{
		name: "add", min: 1, max: variadic,
		summary: "Sum of the numbers.", example: `["add", 1, 2, 3.5]`,
		evalArgs: func(m *machine, n *node, args []any, _ int) (any, *fault.Error) {
			acc, err := firstNumber(n, args)
			if err != nil {
				return nil, err
			}
			for i, v := range args[1:] {
				x, ok := v.(float64)
				if !ok {
					return nil, errType(n.opName, i+1, "number", kindOf(v))
				}
				acc += x
			}
			return finite(n.opName, acc)
		},
	},
	{
		name: "mul", min: 1, max: variadic,
		summary: "Product of the numbers.", example: `["mul", 2, 3, 4]`,
		evalArgs: func(m *machine, n *node, args []any, _ int) (any, *fault.Error) {
			acc, err := firstNumber(n, args)
			if err != nil {
				return nil, err
			}
			for i, v := range args[1:] {
				x, ok := v.(float64)
				if !ok {
					return nil, errType(n.opName, i+1, "number", kindOf(v))
				}
				acc *= x
			}
			return finite(n.opName, acc)
		},
	},
	{
		name: "min", min: 1, max: variadic,
		summary: "Smallest of the numbers.", example: `["min", 3, -1, 2]`,
		evalArgs: func(m *machine, n *node, args []any, _ int) (any, *fault.Error) {
			acc, err := firstNumber(n, args)
			if err != nil {
				return nil, err
			}
			for i, v := range args[1:] {
				x, ok := v.(float64)
				if !ok {
					return nil, errType(n.opName, i+1, "number", kindOf(v))
				}
				if x < acc {
					acc = x
				}
			}
			return finite(n.opName, acc)
		},
	},
	{
		name: "max", min: 1, max: variadic,
		summary: "Largest of the numbers.", example: `["max", 3, -1, 2]`,
		evalArgs: func(m *machine, n *node, args []any, _ int) (any, *fault.Error) {
			acc, err := firstNumber(n, args)
			if err != nil {
				return nil, err
			}
			for i, v := range args[1:] {
				x, ok := v.(float64)
				if !ok {
					return nil, errType(n.opName, i+1, "number", kindOf(v))
				}
				if x > acc {
					acc = x
				}
			}
			return finite(n.opName, acc)
		},
	},
	{
		name: "sub", min: 2, max: 2,
		summary: "First number minus the second.", example: `["sub", 10, 4]`,
		eval: func(m *machine, n *node) (any, *fault.Error) {
			// Argument 0 is evaluated and checked before argument 1 runs.
			a, err := m.num(n.args[0], n.opName, 0)
			if err != nil {
				return nil, err
			}
			b, err := m.num(n.args[1], n.opName, 1)
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
			// Argument 0 is evaluated and checked before argument 1 runs.
			a, err := m.num(n.args[0], n.opName, 0)
			if err != nil {
				return nil, err
			}
			b, err := m.num(n.args[1], n.opName, 1)
			if err != nil {
				return nil, err
			}
			if b == 0 {
				return nil, newErr(CodeDivZero, "op", n.opName)
			}
			return finite(n.opName, a/b)
		},
	},
	{
		name: "mod", min: 2, max: 2,
		summary: "Truncated remainder, with the dividend's sign (like JavaScript %).", example: `["mod", -7, 3]`,
		eval: func(m *machine, n *node) (any, *fault.Error) {
			// Argument 0 is evaluated and checked before argument 1 runs.
			a, err := m.num(n.args[0], n.opName, 0)
			if err != nil {
				return nil, err
			}
			b, err := m.num(n.args[1], n.opName, 1)
			if err != nil {
				return nil, err
			}
			if b == 0 {
				return nil, newErr(CodeDivZero, "op", n.opName)
			}
			return finite(n.opName, math.Mod(a, b))
		},
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

// firstNumber type-checks the first evaluated argument of add, mul, min
// and max, the start of their fold.
func firstNumber(n *node, args []any) (float64, *fault.Error) {
	x, ok := args[0].(float64)
	if !ok {
		return 0, errType(n.opName, 0, "number", kindOf(args[0]))
	}
	return x, nil
}

func (m *machine) unaryNumber(n *node, f func(float64) float64) (any, *fault.Error) {
	x, err := m.num(n.args[0], n.opName, 0)
	if err != nil {
		return nil, err
	}
	return finite(n.opName, f(x))
}
