package manifest

import "testing"

func TestValidateValue(t *testing.T) {
	obj := func(kv ...any) map[string]any {
		m := map[string]any{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	person := obj("type", "object", "required", []any{"name"},
		"properties", obj("name", obj("type", "string"), "age", obj("type", "integer")))
	for _, tc := range []struct {
		name    string
		schema  any
		v       any
		version int
		want    string
	}{
		{"type ok", obj("type", "string"), "x", 1, ""},
		{"type union", obj("type", []any{"string", "null"}), nil, 1, ""},
		{"wrong type", obj("type", "string"), 1.0, 1, "expected string, got number"},
		{"integer", obj("type", "integer"), 1.5, 1, "expected integer, got number"},
		{"required", person, obj("age", 3.0), 1, `missing required property "name"`},
		{"nested property, sorted", person, obj("name", 1.0, "age", "x"), 1, `property "age": expected integer, got string`},
		{"v1 ignores items", obj("type", "array", "items", obj("type", "string")), []any{1.0}, 1, ""},
		{"v2 items", obj("type", "array", "items", obj("type", "string")), []any{"a", 1.0}, 2, "item 1: expected string, got number"},
		{"v2 enum", obj("enum", []any{"a", "b"}), "c", 2, "value is not in enum"},
		{"v2 minimum", obj("type", "number", "minimum", 0.0), -1.0, 2, "-1 is below minimum"},
		{"v3 unique", obj("type", "array", "uniqueItems", true), []any{1.0, 1.0}, 3, "items are not unique"},
		{"v3 closed", obj("type", "object", "properties", obj("a", obj("type", "string")), "additionalProperties", false), obj("a", "x", "b", "y"), 3, `unexpected property "b"`},
		{"v3 digest format", obj("type", "string", "format", "digest"), "sha256:00", 3, "text is not a valid digest"},
		{"v3 maxLength counts characters", obj("type", "string", "maxLength", 2.0), "éé", 3, ""},
	} {
		if got := ValidateValue(tc.schema, tc.v, tc.version); got != tc.want {
			t.Errorf("%s: got %q want %q", tc.name, got, tc.want)
		}
	}
}
