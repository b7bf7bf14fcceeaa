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
		if err := checkRequiredV1(r, join(loc, "required")); err != nil {
			return err
		}
	}
	if p, ok := s["properties"]; ok {
		return checkPropertiesV1(p, join(loc, "properties"))
	}
	return nil
}

// checkRequiredV1 admits a version 1 "required": a list of short texts.
func checkRequiredV1(r any, loc string) error {
	l, isList := r.([]any)
	if !isList {
		return invalid(loc, "must be an array")
	}
	for i, k := range l {
		if _, err := asText(k, fmt.Sprintf("%s[%d]", loc, i), 64); err != nil {
			return err
		}
	}
	return nil
}

// checkPropertiesV1 admits a version 1 "properties": a map of schemas,
// checked in sorted order.
func checkPropertiesV1(p any, loc string) error {
	props, err := asObject(p, loc)
	if err != nil {
		return err
	}
	for _, k := range slices.Sorted(maps.Keys(props)) {
		if err := checkSchemaV1(props[k], join(loc, k)); err != nil {
			return err
		}
	}
	return nil
}

// strictSchema is one object of a version 2 or 3 schema under check: its
// keywords, where it sits, and its declared types ("object" when omitted).
type strictSchema struct {
	s     map[string]any
	loc   string
	v3    bool
	types []string
}

// at locates one of the schema's keywords.
func (sc *strictSchema) at(keyword string) string { return join(sc.loc, keyword) }

// declares reports whether the schema's types include t.
func (sc *strictSchema) declares(t string) bool { return contains(sc.types, t) }

// strictVocabulary is what one schema version admits: its keywords, and
// the rules that check them, in the order the first violation is reported.
type strictVocabulary struct {
	keywords []string
	rules    []func(*strictSchema) error
}

var strictV2Rules = []func(*strictSchema) error{
	checkRequiredNames, checkPropertyMap, checkItemsSchema, checkEnum, checkNumberBounds,
}

var (
	strictV2 = strictVocabulary{schemaV2Keywords, strictV2Rules}
	strictV3 = strictVocabulary{schemaV3Keywords, append(slices.Clip(strictV2Rules),
		checkTextLengths, checkFormat, checkUniqueItems, checkAdditionalProperties)}
)

// checkSchemaStrict admits a schema of version 2 or 3 at nesting level
// level: its own keywords by the version's rules, then its properties in
// sorted order, then its items.
func checkSchemaStrict(schema any, level int, v3 bool, loc string) error {
	if level > MaxSchemaLevels {
		return invalid(loc, "schema exceeds %d nested levels", MaxSchemaLevels)
	}
	vocab := strictV2
	if v3 {
		vocab = strictV3
	}
	sc, err := readStrictSchema(schema, v3, vocab.keywords, loc)
	if err != nil {
		return err
	}
	for _, rule := range vocab.rules {
		if err := rule(sc); err != nil {
			return err
		}
	}
	return sc.checkNested(level)
}

// readStrictSchema admits a schema object whose keywords are all known and
// whose type is well formed.
func readStrictSchema(schema any, v3 bool, keywords []string, loc string) (*strictSchema, error) {
	s, err := asObject(schema, loc)
	if err != nil {
		return nil, err
	}
	if k, bad := canon.UnknownKey(s, keywords...); bad {
		return nil, invalid(loc, "unknown schema keyword %q", k)
	}
	types, err := schemaTypeList(s, loc)
	if err != nil {
		return nil, err
	}
	if types == nil {
		types = []string{"object"}
	}
	return &strictSchema{s: s, loc: loc, v3: v3, types: types}, nil
}

// checkNested checks the schemas of the declared properties (sorted) and
// of the list items one level down.
func (sc *strictSchema) checkNested(level int) error {
	props, _ := sc.s["properties"].(map[string]any)
	for _, k := range slices.Sorted(maps.Keys(props)) {
		if err := checkSchemaStrict(props[k], level+1, sc.v3, join(sc.at("properties"), k)); err != nil {
			return err
		}
	}
	if items, ok := sc.s["items"]; ok {
		return checkSchemaStrict(items, level+1, sc.v3, sc.at("items"))
	}
	return nil
}

func checkRequiredNames(sc *strictSchema) error {
	if r, ok := sc.s["required"]; ok && !distinctFieldNames(r) {
		return invalid(sc.at("required"), "must list at most %d distinct names of at most 64 UTF-16 code units", maxSchemaRequired)
	}
	return nil
}

// distinctFieldNames reports whether r lists at most maxSchemaRequired
// distinct names of at most 64 UTF-16 code units.
func distinctFieldNames(r any) bool {
	l, isList := r.([]any)
	if !isList || len(l) > maxSchemaRequired {
		return false
	}
	seen := map[string]bool{}
	for _, e := range l {
		name, isText := e.(string)
		if !isText || canon.UTF16Len(name) > 64 || seen[name] {
			return false
		}
		seen[name] = true
	}
	return true
}

func checkPropertyMap(sc *strictSchema) error {
	p, ok := sc.s["properties"]
	if !ok {
		return nil
	}
	m, isObj := p.(map[string]any)
	if !isObj || len(m) > maxSchemaProperties || !allObjects(m) {
		return invalid(sc.at("properties"), "must map at most %d names to schemas", maxSchemaProperties)
	}
	return nil
}

func allObjects(m map[string]any) bool {
	for _, c := range m {
		if _, isObj := c.(map[string]any); !isObj {
			return false
		}
	}
	return true
}

func checkItemsSchema(sc *strictSchema) error {
	items, ok := sc.s["items"]
	if !ok {
		return nil
	}
	if _, isObj := items.(map[string]any); !isObj {
		return invalid(sc.at("items"), "must be a schema")
	}
	return sc.requireType("items", "array")
}

// requireType rejects keyword when the schema does not declare type t.
func (sc *strictSchema) requireType(keyword, t string) error {
	if !sc.declares(t) {
		return invalid(sc.at(keyword), "requires type %s", t)
	}
	return nil
}

func checkEnum(sc *strictSchema) error {
	e, ok := sc.s["enum"]
	if !ok {
		return nil
	}
	l, isList := e.([]any)
	if !isList || len(l) < 1 || len(l) > maxSchemaEnum {
		return invalid(sc.at("enum"), "must list 1 to %d distinct values", maxSchemaEnum)
	}
	seen := map[string]bool{}
	for _, v := range l {
		b, ok := enumValueBytes(v)
		if !ok {
			return invalid(sc.at("enum"), "values must be strings, finite numbers, booleans, or null of at most %d canonical JSON bytes", maxSchemaEnumBytes)
		}
		if seen[string(b)] {
			return invalid(sc.at("enum"), "must list 1 to %d distinct values", maxSchemaEnum)
		}
		seen[string(b)] = true
		if !sc.matches(v) {
			return invalid(sc.at("enum"), "values must match the schema type")
		}
	}
	return nil
}

// enumValueBytes returns the canonical bytes of a scalar enum value, or
// false when v is not a scalar or encodes over maxSchemaEnumBytes.
func enumValueBytes(v any) ([]byte, bool) {
	switch v.(type) {
	case nil, bool, float64, string:
	default:
		return nil, false
	}
	b, err := canon.Encode(v)
	return b, err == nil && len(b) <= maxSchemaEnumBytes
}

// matches reports whether v is of one of the schema's types.
func (sc *strictSchema) matches(v any) bool {
	for _, t := range sc.types {
		if schemaTypeMatches(t, v, sc.v3) {
			return true
		}
	}
	return false
}

func checkNumberBounds(sc *strictSchema) error {
	return sc.checkBoundPair("minimum", "maximum", (*strictSchema).finiteNumber, "type number or integer", "number", "integer")
}

func checkTextLengths(sc *strictSchema) error {
	return sc.checkBoundPair("minLength", "maxLength", (*strictSchema).textLength, "type string", "string")
}

// checkBoundPair checks an optional lower and upper bound read by read:
// either needs one of types (named by needs), and lower may not exceed upper.
func (sc *strictSchema) checkBoundPair(lower, upper string, read func(*strictSchema, string) (float64, bool, error), needs string, types ...string) error {
	lo, hasLo, err := read(sc, lower)
	if err != nil {
		return err
	}
	hi, hasHi, err := read(sc, upper)
	if err != nil {
		return err
	}
	if (hasLo || hasHi) && !slices.ContainsFunc(types, sc.declares) {
		return invalid(sc.loc, "%s and %s require %s", lower, upper, needs)
	}
	if hasLo && hasHi && lo > hi {
		return invalid(sc.loc, "%s exceeds %s", lower, upper)
	}
	return nil
}

// finiteNumber reads an optional numeric keyword.
func (sc *strictSchema) finiteNumber(keyword string) (float64, bool, error) {
	b, ok := sc.s[keyword]
	if !ok {
		return 0, false, nil
	}
	f, isNum := b.(float64)
	if !isNum {
		return 0, false, invalid(sc.at(keyword), "must be a finite number")
	}
	return f, true, nil
}

// textLength reads an optional text length keyword.
func (sc *strictSchema) textLength(keyword string) (float64, bool, error) {
	b, ok := sc.s[keyword]
	if !ok {
		return 0, false, nil
	}
	f, isNum := b.(float64)
	if !isNum || f != math.Trunc(f) || f < 0 || f > maxSchemaTextLength {
		return 0, false, invalid(sc.at(keyword), "must be an integer from 0 to %d", maxSchemaTextLength)
	}
	return f, true, nil
}

func checkFormat(sc *strictSchema) error {
	f, ok := sc.s["format"]
	if !ok {
		return nil
	}
	name, isText := f.(string)
	if !isText || canon.UTF16Len(name) > maxSchemaFormatName {
		return invalid(sc.at("format"), "must be a name of at most %d UTF-16 code units", maxSchemaFormatName)
	}
	if !contains(schemaFormats, name) {
		return invalid(sc.at("format"), "must name digest, name, slug, or uri")
	}
	return sc.requireType("format", "string")
}

func checkUniqueItems(sc *strictSchema) error {
	u, ok := sc.s["uniqueItems"]
	if !ok {
		return nil
	}
	if u != true {
		return invalid(sc.at("uniqueItems"), "must be the boolean true")
	}
	return sc.requireType("uniqueItems", "array")
}

func checkAdditionalProperties(sc *strictSchema) error {
	a, ok := sc.s["additionalProperties"]
	if !ok {
		return nil
	}
	if a != false {
		return invalid(sc.at("additionalProperties"), "must be the boolean false")
	}
	if err := sc.requireType("additionalProperties", "object"); err != nil {
		return err
	}
	if _, hasProps := sc.s["properties"]; !hasProps {
		return invalid(sc.at("additionalProperties"), "requires a properties map")
	}
	return nil
}

// schemaTypeTests are the JSON types a schema may name, each with its
// test of a decoded value (v3 bounds integers to the exactly representable).
var schemaTypeTests = map[string]func(v any, v3 bool) bool{
	"string":  func(v any, _ bool) bool { _, ok := v.(string); return ok },
	"number":  func(v any, _ bool) bool { _, ok := v.(float64); return ok },
	"integer": isSchemaInteger,
	"boolean": func(v any, _ bool) bool { _, ok := v.(bool); return ok },
	"array":   func(v any, _ bool) bool { _, ok := v.([]any); return ok },
	"object":  func(v any, _ bool) bool { _, ok := v.(map[string]any); return ok },
	"null":    func(v any, _ bool) bool { return v == nil },
}

func isSchemaInteger(v any, v3 bool) bool {
	f, ok := v.(float64)
	return ok && f == math.Trunc(f) && (!v3 || math.Abs(f) <= schemaIntegerMaximum)
}

func schemaTypeMatches(kind string, v any, v3 bool) bool {
	test, ok := schemaTypeTests[kind]
	return ok && test(v, v3)
}
