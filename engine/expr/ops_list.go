package expr

import (
	"slices"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
)

var listOps = []*opDef{
	{
		name: "list", min: 0, max: variadic, cheap: true,
		summary: "The evaluated arguments as a list.", example: `["list", 1, ["add", 1, 1], "three"]`,
		evalArgs: func(m *machine, n *node, args []any, deep int) (any, *fault.Error) {
			if len(args) > MaxListLen {
				return nil, errBounds("list-len", MaxListLen)
			}
			// The result's own walk: the arguments sit one level deeper than
			// they did as arguments; its size equals the evalArgs total.
			if deep+1 > MaxValueDepth {
				return nil, errBounds("value-depth", MaxValueDepth)
			}
			return slices.Clone(args), nil
		},
	},
	{
		name: "len", min: 1, max: 1,
		summary: "Number of elements of a list.", example: `["len", ["list", 1, 2, 3]]`,
		eval: func(m *machine, n *node) (any, *fault.Error) {
			l, err := m.list(n.args[0], n.opName, 0)
			if err != nil {
				return nil, err
			}
			return box(float64(len(l))), nil
		},
	},
	{
		name: "nth", min: 2, max: 2,
		summary: "[nth, list, i]: the element at index i; past the end fails EXPR_PATH.", example: `["nth", ["list", "a", "b"], 1]`,
		eval: func(m *machine, n *node) (any, *fault.Error) {
			l, err := m.list(n.args[0], n.opName, 0)
			if err != nil {
				return nil, err
			}
			i, err := m.nonnegInt(n.args[1], n.opName)
			if err != nil {
				return nil, err
			}
			if i >= float64(len(l)) {
				what := "index " + string(canon.FormatNumber(nil, i)) + " out of range " +
					string(canon.FormatNumber(nil, float64(len(l))))
				return nil, errPath(n.opName, what)
			}
			return l[int(i)], nil
		},
	},
	{
		name: "concat", min: 1, max: variadic, cost: "+ the total element count",
		summary: "The lists joined end to end.", example: `["concat", ["list", 1], ["list", 2, 3]]`,
		evalArgs: func(m *machine, n *node, args []any, _ int) (any, *fault.Error) {
			return m.joinLists(n, args)
		},
	},
	{
		name: "map", min: 3, max: 3, binders: []int{1}, cost: "+1 per element",
		summary: "[map, list, name, body]: body for each element bound to name.",
		example: `["map", ["list", 1, 2, 3], "x", ["mul", ["get", "x"], 10]]`,
		eval: func(m *machine, n *node) (any, *fault.Error) {
			items, err := m.list(n.args[0], n.opName, 0)
			if err != nil {
				return nil, err
			}
			out := make([]any, 0, len(items))
			total := 2
			for i, it := range items {
				if err := m.charge(1); err != nil {
					return nil, err
				}
				m.vars[n.slot], m.names[n.slot] = it, n.name
				v, err := m.eval(n.args[1])
				if err != nil {
					return nil, err
				}
				if i > 0 {
					total++
				}
				if total, err = m.walkInto(total, v, 1); err != nil {
					return nil, err
				}
				if out = append(out, v); len(out) > MaxListLen {
					return nil, errBounds("list-len", MaxListLen)
				}
			}
			return out, nil
		},
	},
	{
		name: "filter", min: 3, max: 3, binders: []int{1}, cost: "+1 per element",
		summary: "[filter, list, name, body]: the elements whose body is true.",
		example: `["filter", ["list", 1, 5, 2, 8], "x", ["gt", ["get", "x"], 2]]`,
		eval: func(m *machine, n *node) (any, *fault.Error) {
			items, err := m.list(n.args[0], n.opName, 0)
			if err != nil {
				return nil, err
			}
			out := make([]any, 0, len(items))
			for i, it := range items {
				if err := m.charge(1); err != nil {
					return nil, err
				}
				m.vars[n.slot], m.names[n.slot] = it, n.name
				v, err := m.eval(n.args[1])
				if err != nil {
					return nil, err
				}
				keep, ok := v.(bool)
				if !ok {
					return nil, errType(n.opName, i, "bool", kindOf(v))
				}
				// A kept element already sat at depth 1 of the input list,
				// so its walk cannot fail.
				if keep {
					if out = append(out, it); len(out) > MaxListLen {
						return nil, errBounds("list-len", MaxListLen)
					}
				}
			}
			return out, nil
		},
	},
	{
		name: "fold", min: 5, max: 5, binders: []int{2, 3}, cost: "+1 per element",
		summary: "[fold, list, init, acc, item, body]: body for each element, its result the next acc.",
		example: `["fold", ["list", 1, 2, 3], 0, "acc", "it", ["add", ["get", "acc"], ["get", "it"]]]`,
		eval: func(m *machine, n *node) (any, *fault.Error) {
			items, err := m.list(n.args[0], n.opName, 0)
			if err != nil {
				return nil, err
			}
			acc, err := m.eval(n.args[1])
			if err != nil {
				return nil, err
			}
			for _, it := range items {
				if err := m.charge(1); err != nil {
					return nil, err
				}
				m.vars[n.slot], m.names[n.slot] = acc, n.name
				m.vars[n.slot+1], m.names[n.slot+1] = it, n.name2
				if acc, err = m.eval(n.args[2]); err != nil {
					return nil, err
				}
			}
			return acc, nil
		},
	},
	{
		name: "contains", min: 2, max: 2, cost: "+1 per element compared",
		summary: "[contains, list, v]: whether some element eq v.", example: `["contains", ["list", 1, 2, 3], 2]`,
		eval: func(m *machine, n *node) (any, *fault.Error) {
			l, err := m.list(n.args[0], n.opName, 0)
			if err != nil {
				return nil, err
			}
			v, err := m.eval(n.args[1])
			if err != nil {
				return nil, err
			}
			for _, it := range l {
				if err := m.charge(1); err != nil {
					return nil, err
				}
				if m.equal(it, v) {
					return true, nil
				}
			}
			return false, nil
		},
	},
	{
		name: "reverse", min: 1, max: 1,
		summary: "The list in reverse order.", example: `["reverse", ["list", 1, 2, 3]]`,
		eval: func(m *machine, n *node) (any, *fault.Error) {
			l, err := m.list(n.args[0], n.opName, 0)
			if err != nil {
				return nil, err
			}
			out := slices.Clone(l)
			slices.Reverse(out)
			if out == nil {
				out = []any{}
			}
			return out, nil
		},
	},
	{
		name: "take", min: 2, max: 2,
		summary: "[take, list, n]: the first n elements (all of a shorter list).", example: `["take", ["list", 1, 2, 3], 2]`,
		eval: func(m *machine, n *node) (any, *fault.Error) {
			l, k, err := m.listCount(n)
			if err != nil {
				return nil, err
			}
			return slices.Clip(l[:k]), nil
		},
	},
	{
		name: "drop", min: 2, max: 2,
		summary: "[drop, list, n]: the list without its first n elements.", example: `["drop", ["list", 1, 2, 3], 2]`,
		eval: func(m *machine, n *node) (any, *fault.Error) {
			l, k, err := m.listCount(n)
			if err != nil {
				return nil, err
			}
			return l[k:], nil
		},
	},
	{
		name: "flat", min: 1, max: 1, cost: "+ the total element count of the inner lists",
		summary: "A list of lists flattened by one level.", example: `["flat", ["quote", [[1, 2], [], [3]]]]`,
		eval: func(m *machine, n *node) (any, *fault.Error) {
			l, err := m.list(n.args[0], n.opName, 0)
			if err != nil {
				return nil, err
			}
			return m.joinLists(n, l)
		},
	},
	{
		name: "unique", min: 1, max: 1, cost: "+1 per comparison with an element already kept",
		summary: "The list without repeats (eq), in first-seen order.", example: `["unique", ["list", 1, 1, 2, "x", "x"]]`,
		eval: func(m *machine, n *node) (any, *fault.Error) {
			l, err := m.list(n.args[0], n.opName, 0)
			if err != nil {
				return nil, err
			}
			out := make([]any, 0, len(l))
		items:
			for _, it := range l {
				for _, kept := range out {
					if err := m.charge(1); err != nil {
						return nil, err
					}
					if m.equal(kept, it) {
						continue items
					}
				}
				out = append(out, it)
			}
			return out, nil
		},
	},
	{
		name: "sort", min: 1, max: 1, cost: "+ the element count",
		summary: "Stable sort: null < bool < number < text < list < map; text by UTF-16 code units.",
		example: `["sort", ["list", "b", 3, null, "a", 1]]`,
		eval: func(m *machine, n *node) (any, *fault.Error) {
			l, err := m.list(n.args[0], n.opName, 0)
			if err != nil {
				return nil, err
			}
			if err := m.charge(len(l)); err != nil {
				return nil, err
			}
			return m.sortValues(l), nil
		},
	},
}

// joinLists is concat (of its arguments) and flat (of its list's
// elements): each of lists must be a list, named by its position in a
// type error; the charge is the total element count.
func (m *machine) joinLists(n *node, lists []any) (any, *fault.Error) {
	total := 0
	for i, v := range lists {
		l, ok := v.([]any)
		if !ok {
			return nil, errType(n.opName, i, "list", kindOf(v))
		}
		total += len(l)
	}
	if err := m.charge(total); err != nil {
		return nil, err
	}
	if total > MaxListLen {
		return nil, errBounds("list-len", MaxListLen)
	}
	out := make([]any, 0, total)
	for _, v := range lists {
		out = append(out, v.([]any)...)
	}
	return out, nil
}

// listCount reads take/drop's list and count, the count clamped to the
// list's length.
func (m *machine) listCount(n *node) ([]any, int, *fault.Error) {
	l, err := m.list(n.args[0], n.opName, 0)
	if err != nil {
		return nil, 0, err
	}
	c, err := m.nonnegInt(n.args[1], n.opName)
	if err != nil {
		return nil, 0, err
	}
	k := len(l)
	if c < float64(k) {
		k = int(c)
	}
	return l, k, nil
}
