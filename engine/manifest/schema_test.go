package manifest

import (
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
)

// TestSchemaAdmission walks the declaration rules of each schemaVersion:
// version 1 checks type, required and properties (depth <= 4) and keeps
// other keywords as hints; versions 2 and 3 are closed vocabularies whose
// malformed declarations are rejected at parse (PARSE_FAILED).
func TestSchemaAdmission(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, schema string
		version      int
		want         string // "" admits
	}{
		{"v1 hint keywords", `{"type":"string","maxLength":"x","items":7,"enum":{}}`, 1, ""},
		{"v1 omitted type", `{"properties":{"a":{}}}`, 1, ""},
		{"v1 type union", `{"type":["string","null"]}`, 1, ""},
		{"v1 unknown type", `{"type":"objects"}`, 1, "type"},
		{"v1 duplicate union", `{"type":["string","string"]}`, 1, "type"},
		{"v1 empty union", `{"type":[]}`, 1, "type"},
		{"v1 non-text type", `{"type":[1]}`, 1, "type"},
		{"v1 required not array", `{"required":"a"}`, 1, "required"},
		{"v1 required entry not text", `{"required":[1]}`, 1, "required[0]"},
		{"v1 required entry too long", `{"required":["` + strings.Repeat("a", 65) + `"]}`, 1, "required[0]"},
		{"v1 properties not object", `{"properties":[]}`, 1, "properties"},
		{"v1 property not a schema", `{"properties":{"a":1}}`, 1, "properties.a"},
		{"v1 nested bad type", `{"properties":{"a":{"type":"str"}}}`, 1, "properties.a.type"},
		{"v1 depth 4 ok", `{"properties":{"a":{"type":"object"}}}`, 1, ""},
		{"v1 depth 5", `{"properties":{"a":{"properties":{"b":{"type":"object"}}}}}`, 1, "depth"},
		{"v1 depth counts hints", `{"x":[[[[1]]]]}`, 1, "depth"},
		{"v2 closed vocabulary", `{"type":"string","maxLength":3}`, 2, "unknown schema keyword \"maxLength\""},
		{"v2 items", `{"type":"array","items":{"type":"string"}}`, 2, ""},
		{"v2 items not schema", `{"type":"array","items":[]}`, 2, "items"},
		{"v2 items default object type", `{"items":{}}`, 2, "items: requires type array"},
		{"v2 enum empty", `{"type":"string","enum":[]}`, 2, "enum"},
		{"v2 enum duplicate by canonical identity", `{"type":"number","enum":[1,1.0]}`, 2, "distinct"},
		{"v2 enum non-scalar", `{"type":"object","enum":[{}]}`, 2, "enum"},
		{"v2 enum wrong type", `{"type":"string","enum":[1]}`, 2, "match the schema type"},
		{"v2 enum integer", `{"type":"integer","enum":[1,2]}`, 2, ""},
		{"v2 minimum text", `{"type":"number","minimum":"1"}`, 2, "minimum"},
		{"v2 minimum on string", `{"type":"string","minimum":1}`, 2, "require type number"},
		{"v2 min > max", `{"type":"number","minimum":2,"maximum":1}`, 2, "minimum exceeds maximum"},
		{"v2 required duplicate", `{"required":["a","a"]}`, 2, "distinct"},
		{"v2 properties child not object", `{"properties":{"a":true}}`, 2, "properties"},
		{"v2 nested unknown keyword", `{"properties":{"a":{"format":"uri"}}}`, 2, "properties.a"},
		{"v3 lengths", `{"type":"string","minLength":1,"maxLength":3,"format":"slug"}`, 3, ""},
		{"v3 minLength fraction", `{"type":"string","minLength":1.5}`, 3, "minLength"},
		{"v3 maxLength too big", `{"type":"string","maxLength":1000001}`, 3, "maxLength"},
		{"v3 lengths on number", `{"type":"number","maxLength":3}`, 3, "require type string"},
		{"v3 minLength > maxLength", `{"type":"string","minLength":3,"maxLength":1}`, 3, "minLength exceeds maxLength"},
		{"v3 unknown format", `{"type":"string","format":"email"}`, 3, "format"},
		{"v3 format on number", `{"type":"number","format":"uri"}`, 3, "format: requires type string"},
		{"v3 uniqueItems false", `{"type":"array","uniqueItems":false}`, 3, "uniqueItems"},
		{"v3 uniqueItems on object", `{"uniqueItems":true}`, 3, "uniqueItems: requires type array"},
		{"v3 additionalProperties true", `{"properties":{},"additionalProperties":true}`, 3, "additionalProperties"},
		{"v3 additionalProperties without properties", `{"type":"object","additionalProperties":false}`, 3, "properties map"},
		{"v3 integer enum beyond 2^53", `{"type":"integer","enum":[1e300]}`, 3, "match the schema type"},
		{"v2 integer enum beyond 2^53", `{"type":"integer","enum":[1e300]}`, 2, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			schema, err := canon.Parse([]byte(tc.schema), 0)
			if err != nil {
				t.Fatal(err)
			}
			err = checkSchema(schema, tc.version, "schema")
			if tc.want == "" {
				if err != nil {
					t.Fatalf("rejected: %v", err)
				}
				return
			}
			e, ok := err.(*fault.Error)
			if !ok || e.Code != fault.Parse || !strings.Contains(e.Message, tc.want) {
				t.Fatalf("got %v, want PARSE_FAILED containing %q", err, tc.want)
			}
		})
	}
}
