package expr

import (
	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
)

var recordOps = []*opDef{
	{
		name: "get", min: 1, max: variadic, perArg: true,
		summary: "[get, name, step...]: a binder or env value, then one key or index per step; a miss is null.",
		example: `["let", "r", {"a": ["quote", [10, 20]]}, ["get", "r", "a", 1]]`,
		eval:    (*machine).get,
		compile: func(c *compiler, n *node, call []any) (bool, *fault.Error) {
			name, ok := call[1].(string)
			if !ok {
				return false, nil // a computed name is checked at run time
			}
			n.litName, n.name, n.slot = true, name, c.lookup(name)
			if n.slot < 0 && !c.declared[name] {
				return false, errUnbound(name)
			}
			return false, nil
		},
		compiled: func(n *node) {
			if n.litName {
				n.path = literalPath(n.args[1:])
			}
		},
	},
	{
		name: "has", min: 2, max: 2,
		summary: "[has, map, key]: whether the map holds the key.", example: `["has", {"a": 1}, "a"]`,
		eval: func(m *machine, n *node) (any, *fault.Error) {
			o, err := m.obj(n.args[0], n.opName, 0)
			if err != nil {
				return nil, err
			}
			k, err := m.str(n.args[1], n.opName, 1)
			if err != nil {
				return nil, err
			}
			_, ok := o[k]
			return ok, nil
		},
	},
	{
		name: "keys", min: 1, max: 1,
		summary: "The map's keys in canonical order (array indexes first, then UTF-16 order).",
		example: `["keys", {"b": 1, "a": 2, "10": 3}]`,
		eval: func(m *machine, n *node) (any, *fault.Error) {
			return m.sortedMap(n, func(_ map[string]any, k string) any { return k })
		},
	},
	{
		name: "values", min: 1, max: 1,
		summary: "The map's values in the canonical order of their keys.", example: `["values", {"b": 1, "a": 2}]`,
		eval: func(m *machine, n *node) (any, *fault.Error) {
			return m.sortedMap(n, func(o map[string]any, k string) any { return o[k] })
		},
	},
	{
		name: "merge", min: 1, max: variadic, cost: "+ the key count of each map, as it is merged",
		summary: "Maps merged left to right; later keys win.", example: `["merge", {"a": 1}, {"a": 9, "b": 2}]`,
		evalArgs: func(m *machine, n *node, args []any, _ int) (any, *fault.Error) {
			out := map[string]any{}
			for i, v := range args {
				o, ok := v.(map[string]any)
				if !ok {
					return nil, errType(n.opName, i, "map", kindOf(v))
				}
				if err := m.charge(len(o)); err != nil {
					return nil, err
				}
				for k, w := range o {
					out[k] = w
				}
				if len(out) > MaxObjectKeys {
					return nil, errBounds("object-keys", MaxObjectKeys)
				}
			}
			return out, nil
		},
	},
	{
		name: "quote", min: 1, max: 1, cheap: true,
		summary: "Its argument as data, unevaluated (how to write a literal list).", example: `["quote", [1, ["add", 1, 2]]]`,
		eval: func(_ *machine, n *node) (any, *fault.Error) {
			if n.litErr != nil {
				return nil, n.litErr
			}
			return n.lit, nil
		},
		compile: func(_ *compiler, n *node, call []any) (bool, *fault.Error) {
			n.lit = canon.Clone(call[1])
			if err := (&walker{}).walk(n.lit, 0); err != nil {
				n.litErr = err
			}
			return true, nil
		},
	},
}

// sortedMap is keys and values: the map argument's entries in the
// canonical order of their keys, each entry given by pick.
func (m *machine) sortedMap(n *node, pick func(o map[string]any, k string) any) (any, *fault.Error) {
	o, err := m.obj(n.args[0], n.opName, 0)
	if err != nil {
		return nil, err
	}
	keys := canon.SortedKeys(o)
	out := make([]any, len(keys))
	for i, k := range keys {
		out[i] = pick(o, k)
	}
	return out, nil
}
