package manifest

import (
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/algal-assay/assay/engine/canon"
)

// JSON schema declarations: the bounded subset ports and json outputs may
// carry. Without schemaVersion (version 1) type, required and properties
// are checked and any other keyword is a provider hint; version 2 is a
// closed vocabulary adding items, enum, minimum, maximum; version 3 adds
// minLength, maxLength, format, uniqueItems and additionalProperties.

var schemaTypes = []string{"object", "array", "string", "number", "integer", "boolean", "null"}

var schemaV2Keywords = []string{"type", "required", "properties", "items", "enum", "minimum", "maximum"}

var schemaV3Keywords = append(append([]string{}, schemaV2Keywords...),
	"minLength", "maxLength", "format", "uniqueItems", "additionalProperties")

var schemaFormats = []string{"digest", "name", "slug", "uri"}

const (
	maxSchemaProperties  = 64
	maxSchemaRequired    = 64
	maxSchemaEnum        = 32
	maxSchemaEnumBytes   = 256
	maxSchemaTextLength  = 1_000_000
	maxSchemaFormatName  = 32
	schemaIntegerMaximum = 9_007_199_254_740_991.0
)

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// schemaVersionOf reads "schemaVersion" beside a "schema" in decl.
func schemaVersionOf(decl map[string]any, loc string) (int, error) {
	v, ok := decl["schemaVersion"]
	if !ok {
		return 1, nil
	}
	f, isNum := v.(float64)
	if !isNum || (f != 2 && f != 3) {
		return 0, invalid(join(loc, "schemaVersion"), "must be 2 or 3")
	}
	if _, ok := decl["schema"]; !ok {
		return 0, invalid(join(loc, "schemaVersion"), "requires a schema")
	}
	return int(f), nil
}

// checkSchema admits a schema declaration of the given version.
func checkSchema(schema any, version int, loc string) error {
	if _, err := asObject(schema, loc); err != nil {
		return err
	}
	if version >= 2 {
		return checkSchemaStrict(schema, 1, version == 3, loc)
	}
	if err := schemaDepth(schema, 0, loc); err != nil {
		return err
	}
	return checkSchemaV1(schema, loc)
}

func schemaDepth(v any, depth int, loc string) error {
	if depth > MaxSchemaDepthV1 {
		return invalid(loc, "schema depth exceeds %d", MaxSchemaDepthV1)
	}
	switch x := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(x)) {
			if err := schemaDepth(x[k], depth+1, loc); err != nil {
				return err
			}
		}
	case []any:
		for _, e := range x {
			if err := schemaDepth(e, depth+1, loc); err != nil {
				return err
			}
		}
	}
	return nil
}

// schemaTypeList returns the declared type names (union or single).
func schemaTypeList(s map[string]any, loc string) ([]string, error) {
	t, ok := s["type"]
	if !ok {
		return nil, nil
	}
	var entries []any
	if l, isList := t.([]any); isList {
		entries = l
	} else {
		entries = []any{t}
	}
	if len(entries) == 0 || len(entries) > len(schemaTypes) {
		return nil, invalid(join(loc, "type"), "must name a supported JSON type or a nonempty unique union")
	}
	var names []string
	for _, e := range entries {
		name, isText := e.(string)
		if !isText || !contains(schemaTypes, name) || contains(names, name) {
			return nil, invalid(join(loc, "type"), "must name a supported JSON type or a nonempty unique union")
		}
		names = append(names, name)
	}
	return names, nil
}

func checkSchemaV1(schema any, loc string) error {
	s, err := asObject(schema, loc)
	if err != nil {
		return err
	}
	if _, err := schemaTypeList(s, loc); err != nil {
		return err
	}
	if r, ok := s["required"]; ok {
		l, isList := r.([]any)
		if !isList {
			return invalid(join(loc, "required"), "must be an array")
		}
		for i, k := range l {
			if _, err := asText(k, fmt.Sprintf("%s[%d]", join(loc, "required"), i), 64); err != nil {
				return err
			}
		}
	}
	if p, ok := s["properties"]; ok {
		props, err := asObject(p, join(loc, "properties"))
		if err != nil {
			return err
		}
		for _, k := range slices.Sorted(maps.Keys(props)) {
			if err := checkSchemaV1(props[k], join(join(loc, "properties"), k)); err != nil {
				return err
			}
		}
	}
	return nil
}

func checkSchemaStrict(schema any, level int, v3 bool, loc string) error {
	if level > MaxSchemaLevels {
		return invalid(loc, "schema exceeds %d nested levels", MaxSchemaLevels)
	}
	s, err := asObject(schema, loc)
	if err != nil {
		return err
	}
	keywords := schemaV2Keywords
	if v3 {
		keywords = schemaV3Keywords
	}
	for _, k := range slices.Sorted(maps.Keys(s)) {
		if !contains(keywords, k) {
			return invalid(loc, "unknown schema keyword %q", k)
		}
	}
	types, err := schemaTypeList(s, loc)
	if err != nil {
		return err
	}
	if types == nil {
		types = []string{"object"}
	}
	if r, ok := s["required"]; ok {
		l, isList := r.([]any)
		valid := isList && len(l) <= maxSchemaRequired
		seen := map[string]bool{}
		for _, e := range l {
			name, isText := e.(string)
			if !isText || canon.UTF16Len(name) > 64 || seen[name] {
				valid = false
				break
			}
			seen[name] = true
		}
		if !valid {
			return invalid(join(loc, "required"), "must list at most %d distinct names of at most 64 UTF-16 code units", maxSchemaRequired)
		}
	}
	props, hasProps := s["properties"]
	var propMap map[string]any
	if hasProps {
		m, isObj := props.(map[string]any)
		valid := isObj && len(m) <= maxSchemaProperties
		for _, c := range m {
			if _, isObj := c.(map[string]any); !isObj {
				valid = false
			}
		}
		if !valid {
			return invalid(join(loc, "properties"), "must map at most %d names to schemas", maxSchemaProperties)
		}
		propMap = m
	}
	items, hasItems := s["items"]
	if hasItems {
		if _, isObj := items.(map[string]any); !isObj {
			return invalid(join(loc, "items"), "must be a schema")
		}
		if !contains(types, "array") {
			return invalid(join(loc, "items"), "requires type array")
		}
	}
	if e, ok := s["enum"]; ok {
		l, isList := e.([]any)
		if !isList || len(l) < 1 || len(l) > maxSchemaEnum {
			return invalid(join(loc, "enum"), "must list 1 to %d distinct values", maxSchemaEnum)
		}
		seen := map[string]bool{}
		for _, v := range l {
			switch v.(type) {
			case nil, bool, float64, string:
			default:
				return invalid(join(loc, "enum"), "values must be strings, finite numbers, booleans, or null of at most %d canonical JSON bytes", maxSchemaEnumBytes)
			}
			b, err := canon.Encode(v)
			if err != nil || len(b) > maxSchemaEnumBytes {
				return invalid(join(loc, "enum"), "values must be strings, finite numbers, booleans, or null of at most %d canonical JSON bytes", maxSchemaEnumBytes)
			}
			if seen[string(b)] {
				return invalid(join(loc, "enum"), "must list 1 to %d distinct values", maxSchemaEnum)
			}
			seen[string(b)] = true
			match := false
			for _, t := range types {
				if schemaTypeMatches(t, v, v3) {
					match = true
				}
			}
			if !match {
				return invalid(join(loc, "enum"), "values must match the schema type")
			}
		}
	}
	var minimum, maximum *float64
	for _, bound := range []string{"minimum", "maximum"} {
		if b, ok := s[bound]; ok {
			f, isNum := b.(float64)
			if !isNum {
				return invalid(join(loc, bound), "must be a finite number")
			}
			if bound == "minimum" {
				minimum = &f
			} else {
				maximum = &f
			}
		}
	}
	if (minimum != nil || maximum != nil) && !contains(types, "number") && !contains(types, "integer") {
		return invalid(loc, "minimum and maximum require type number or integer")
	}
	if minimum != nil && maximum != nil && *minimum > *maximum {
		return invalid(loc, "minimum exceeds maximum")
	}
	if v3 {
		textBound := func(name string) (float64, bool, error) {
			b, ok := s[name]
			if !ok {
				return 0, false, nil
			}
			f, isNum := b.(float64)
			if !isNum || f != math.Trunc(f) || f < 0 || f > maxSchemaTextLength {
				return 0, false, invalid(join(loc, name), "must be an integer from 0 to %d", maxSchemaTextLength)
			}
			return f, true, nil
		}
		minLen, hasMin, err := textBound("minLength")
		if err != nil {
			return err
		}
		maxLen, hasMax, err := textBound("maxLength")
		if err != nil {
			return err
		}
		if (hasMin || hasMax) && !contains(types, "string") {
			return invalid(loc, "minLength and maxLength require type string")
		}
		if hasMin && hasMax && minLen > maxLen {
			return invalid(loc, "minLength exceeds maxLength")
		}
		if f, ok := s["format"]; ok {
			name, isText := f.(string)
			if !isText || canon.UTF16Len(name) > maxSchemaFormatName {
				return invalid(join(loc, "format"), "must be a name of at most %d UTF-16 code units", maxSchemaFormatName)
			}
			if !contains(schemaFormats, name) {
				return invalid(join(loc, "format"), "must name digest, name, slug, or uri")
			}
			if !contains(types, "string") {
				return invalid(join(loc, "format"), "requires type string")
			}
		}
		if u, ok := s["uniqueItems"]; ok {
			if u != true {
				return invalid(join(loc, "uniqueItems"), "must be the boolean true")
			}
			if !contains(types, "array") {
				return invalid(join(loc, "uniqueItems"), "requires type array")
			}
		}
		if a, ok := s["additionalProperties"]; ok {
			if a != false {
				return invalid(join(loc, "additionalProperties"), "must be the boolean false")
			}
			if !contains(types, "object") {
				return invalid(join(loc, "additionalProperties"), "requires type object")
			}
			if !hasProps {
				return invalid(join(loc, "additionalProperties"), "requires a properties map")
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(propMap)) {
		if err := checkSchemaStrict(propMap[k], level+1, v3, join(join(loc, "properties"), k)); err != nil {
			return err
		}
	}
	if hasItems {
		return checkSchemaStrict(items, level+1, v3, join(loc, "items"))
	}
	return nil
}

func schemaTypeMatches(kind string, v any, v3 bool) bool {
	switch kind {
	case "string":
		_, ok := v.(string)
		return ok
	case "number":
		_, ok := v.(float64)
		return ok
	case "integer":
		f, ok := v.(float64)
		return ok && f == math.Trunc(f) && (!v3 || math.Abs(f) <= schemaIntegerMaximum)
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "null":
		return v == nil
	}
	return false
}
