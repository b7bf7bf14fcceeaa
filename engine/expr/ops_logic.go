package expr

import "github.com/algal-assay/assay/engine/fault"

var logicOps = []*opDef{
	{
		name: "lt", min: 2, max: 2,
		summary: "Less than: two numbers by value or two strings by UTF-16 code units.", example: `["lt", "apple", "banana"]`,
		eval2: func(m *machine, n *node, a, b any) (any, *fault.Error) {
			if x, ok := a.(float64); ok {
				if y, ok := b.(float64); ok {
					return x < y, nil
				}
			}
			c, err := m.order(n, a, b)
			if err != nil {
				return nil, err
			}
			return c < 0, nil
		},
	},
	{
		name: "lte", min: 2, max: 2,
		summary: "Less than or equal, ordered as lt.", example: `["lte", 2, 2]`,
		eval2: func(m *machine, n *node, a, b any) (any, *fault.Error) {
			if x, ok := a.(float64); ok {
				if y, ok := b.(float64); ok {
					return x <= y, nil
				}
			}
			c, err := m.order(n, a, b)
			if err != nil {
				return nil, err
			}
			return c <= 0, nil
		},
	},
	{
		name: "gt", min: 2, max: 2,
		summary: "Greater than, ordered as lt.", example: `["gt", 3, 2]`,
		eval2: func(m *machine, n *node, a, b any) (any, *fault.Error) {
			if x, ok := a.(float64); ok {
				if y, ok := b.(float64); ok {
					return x > y, nil
				}
			}
			c, err := m.order(n, a, b)
			if err != nil {
				return nil, err
			}
			return c > 0, nil
		},
	},
	{
		name: "gte", min: 2, max: 2,
		summary: "Greater than or equal, ordered as lt.", example: `["gte", "b", "a"]`,
		eval2: func(m *machine, n *node, a, b any) (any, *fault.Error) {
			if x, ok := a.(float64); ok {
				if y, ok := b.(float64); ok {
					return x >= y, nil
				}
			}
			c, err := m.order(n, a, b)
			if err != nil {
				return nil, err
			}
			return c >= 0, nil
		},
	},
	{
		name: "eq", min: 2, max: 2, cost: "+ the node count of both values",
		summary: "Structural equality of any two values (1 equals 1.0; key order is ignored).",
		example: `["eq", {"a": 1, "b": 2}, {"b": 2, "a": 1}]`,
		eval2: func(m *machine, n *node, a, b any) (any, *fault.Error) {
			if err := m.charge(countNodes(a) + countNodes(b)); err != nil {
				return nil, err
			}
			return m.equal(a, b), nil
		},
	},
	{
		name: "neq", min: 2, max: 2, cost: "+ the node count of both values",
		summary: "Not eq.", example: `["neq", 1, "1"]`,
		eval2: func(m *machine, n *node, a, b any) (any, *fault.Error) {
			if err := m.charge(countNodes(a) + countNodes(b)); err != nil {
				return nil, err
			}
			return !m.equal(a, b), nil
		},
	},
	{
		name: "and", min: 1, max: variadic, cheap: true,
		summary: "True when every bool is; stops at the first false.", example: `["and", true, ["lt", 1, 2]]`,
		eval: func(m *machine, n *node) (any, *fault.Error) { return m.shortCircuit(n, true) },
	},
	{
		name: "or", min: 1, max: variadic, cheap: true,
		summary: "True when some bool is; stops at the first true.", example: `["or", false, true]`,
		eval: func(m *machine, n *node) (any, *fault.Error) { return m.shortCircuit(n, false) },
	},
	{
		name: "not", min: 1, max: 1, cheap: true,
		summary: "The bool negated.", example: `["not", false]`,
		eval: func(m *machine, n *node) (any, *fault.Error) {
			b, err := m.boolean(n.args[0], n.opName, 0)
			if err != nil {
				return nil, err
			}
			return !b, nil
		},
	},
	{
		name: "if", min: 3, max: 3, cheap: true,
		summary: "[if, cond, then, else]: only the chosen branch runs.", example: `["if", ["gt", 2, 1], "yes", "no"]`,
		eval: func(m *machine, n *node) (any, *fault.Error) {
			c, err := m.boolean(n.args[0], n.opName, 0)
			if err != nil {
				return nil, err
			}
			if c {
				return m.eval(n.args[1])
			}
			return m.eval(n.args[2])
		},
	},
	{
		name: "let", min: 3, max: 3, binders: []int{0}, cheap: true,
		summary: "[let, name, value, body]: body with name bound to value.", example: `["let", "x", 20, ["add", ["get", "x"], 1]]`,
		eval: func(m *machine, n *node) (any, *fault.Error) {
			v, err := m.eval(n.args[0])
			if err != nil {
				return nil, err
			}
			m.vars[n.slot], m.names[n.slot] = v, n.name
			return m.eval(n.args[1])
		},
	},
}

// order compares two numbers or two strings for lt/lte/gt/gte.
func (m *machine) order(n *node, a, b any) (int, *fault.Error) {
	switch x := a.(type) {
	case float64:
		y, ok := b.(float64)
		if !ok {
			return 0, errCompare(n.opName, a, b)
		}
		switch {
		case x < y:
			return -1, nil
		case x > y:
			return 1, nil
		}
		return 0, nil
	case string:
		y, ok := b.(string)
		if !ok {
			return 0, errCompare(n.opName, a, b)
		}
		return m.compareText(x, y), nil
	}
	return 0, errCompare(n.opName, a, b)
}

func errCompare(op string, a, b any) *fault.Error {
	return errType(op, 0, "two numbers or two strings", kindOf(a)+","+kindOf(b))
}

// shortCircuit is and (want true) and or (want false): each argument must
// be a bool; the first that is not want decides.
func (m *machine) shortCircuit(n *node, want bool) (any, *fault.Error) {
	for i, a := range n.args {
		b, err := m.boolean(a, n.opName, i)
		if err != nil {
			return nil, err
		}
		if b != want {
			return !want, nil
		}
	}
	return want, nil
}
