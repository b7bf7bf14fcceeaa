package expr

import "github.com/algal-assay/assay/engine/fault"

var kindOps = []*opDef{
	kindTest("isText", "a string", `["isText", "hi"]`, func(v any) bool { _, ok := v.(string); return ok }),
	kindTest("isNum", "a number", `["isNum", "1"]`, func(v any) bool { _, ok := v.(float64); return ok }),
	kindTest("isBool", "a bool", `["isBool", false]`, func(v any) bool { _, ok := v.(bool); return ok }),
	kindTest("isList", "a list", `["isList", ["list"]]`, func(v any) bool { _, ok := v.([]any); return ok }),
	kindTest("isMap", "a map", `["isMap", {}]`, func(v any) bool { _, ok := v.(map[string]any); return ok }),
	kindTest("isNull", "null", `["isNull", null]`, func(v any) bool { return v == nil }),
}

// kindTest builds one of the kind tests: cost 1, never an error.
func kindTest(name, kind, example string, is func(any) bool) *opDef {
	return &opDef{
		name: name, min: 1, max: 1, cheap: true,
		summary: "Whether the value is " + kind + ".", example: example,
		eval: func(m *machine, n *node) (any, *fault.Error) {
			v, err := m.eval(n.args[0])
			if err != nil {
				return nil, err
			}
			return is(v), nil
		},
	}
}
