package manifest

import "testing"

// The expected reasons are the native runtime's: they are receipt data
// (effect errors and failure records), so wording and check order matter.
func TestValidateValue(t *testing.T) {
	t.Parallel()
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
		{"wrong type", obj("type", "string"), 1.0, 1, "expected string"},
		{"union names joined", obj("type", []any{"string", "null"}), 1.0, 1, "expected string|null"},
		{"integer", obj("type", "integer"), 1.5, 1, "expected integer"},
		{"omitted type means object", obj("properties", obj("a", obj("type", "string"))), "x", 1, "expected object"},
		{"omitted type means object v2", obj("required", []any{"a"}), []any{}, 2, "expected object"},
		{"required", person, obj("age", 3.0), 1, "missing required field"},
		{"required on a non-object value", obj("type", []any{"object", "null"}, "required", []any{"a"}), nil, 1, "missing required field"},
		{"nested property, sorted, unprefixed", person, obj("name", 1.0, "age", "x"), 1, "expected integer"},
		{"v1 ignores items", obj("type", "array", "items", obj("type", "string")), []any{1.0}, 1, ""},
		{"v1 ignores enum", obj("type", "string", "enum", []any{"a"}), "b", 1, ""},
		{"v2 items", obj("type", "array", "items", obj("type", "string")), []any{"a", 1.0}, 2, "item 1: expected string"},
		{"v2 enum", obj("type", "string", "enum", []any{"a", "b"}), "c", 2, "expected an allowed value"},
		{"v2 enum numeric identity", obj("type", "number", "enum", []any{1.0}), 1.0, 2, ""},
		{"v2 minimum", obj("type", "number", "minimum", 0.0), -1.0, 2, "number below minimum"},
		{"v2 maximum", obj("type", "number", "maximum", 0.0), 1.0, 2, "number above maximum"},
		{"v2 enum before required", obj("type", "object", "enum", []any{"x"}, "required", []any{"a"}), obj(), 2, "expected an allowed value"},
		{"v2 ignores v3 text bounds at runtime", obj("type", "string"), "abc", 2, ""},
		{"v2 integer unbounded", obj("type", "integer"), 1e300, 2, ""},
		{"v3 integer bounded", obj("type", "integer"), 1e300, 3, "expected integer"},
		{"v3 unique", obj("type", "array", "uniqueItems", true), []any{1.0, 1.0}, 3, "repeated item"},
		{"v3 unique before items", obj("type", "array", "uniqueItems", true, "items", obj("type", "string")), []any{1.0, 1.0}, 3, "repeated item"},
		{"v3 closed", obj("type", "object", "properties", obj("a", obj("type", "string")), "additionalProperties", false), obj("a", "x", "b", "y"), 3, "undeclared field"},
		{"v3 closed before properties", obj("type", "object", "properties", obj("a", obj("type", "string")), "additionalProperties", false), obj("a", 1.0, "b", "y"), 3, "undeclared field"},
		{"v3 digest format", obj("type", "string", "format", "digest"), "sha256:00", 3, "text is not a digest"},
		{"v3 slug format", obj("type", "string", "format", "slug"), "a--b", 3, "text is not a slug"},
		{"v3 slug ok", obj("type", "string", "format", "slug"), "0a-b", 3, ""},
		{"v3 name format", obj("type", "string", "format", "name"), "0a", 3, "text is not a name"},
		{"v3 uri ok", obj("type", "string", "format", "uri"), "https://x.y/a?b=c#d", 3, ""},
		{"v3 uri empty rest", obj("type", "string", "format", "uri"), "mailto:", 3, "text is not a uri"},
		{"v3 uri space", obj("type", "string", "format", "uri"), "a:b c", 3, "text is not a uri"},
		{"v3 uri quote", obj("type", "string", "format", "uri"), `a:"b"`, 3, "text is not a uri"},
		{"v3 minLength", obj("type", "string", "minLength", 2.0), "é", 3, "text shorter than minLength"},
		{"v3 maxLength counts characters", obj("type", "string", "maxLength", 2.0), "éé", 3, ""},
		{"v3 maxLength", obj("type", "string", "maxLength", 1.0), "ab", 3, "text longer than maxLength"},
	} {
		if got := ValidateValue(tc.schema, tc.v, tc.version); got != tc.want {
			t.Errorf("%s: got %q want %q", tc.name, got, tc.want)
		}
	}
}
