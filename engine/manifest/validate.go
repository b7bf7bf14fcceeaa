package manifest

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/algal-assay/assay/engine/canon"
)

// ValidateValue checks v against a port or output schema declaration (the
// bounded subset this package admits, under schemaVersion 1, 2 or 3) and
// returns "" or the reason for the first violation. Reasons, and the order
// in which checks run, follow the native runtime's because they end up in
// receipts (effect errors, failure records):
//
//   - every version: an omitted "type" means object; "required" fails any
//     value lacking the field (a non-object value lacks every field);
//     declared properties are checked in sorted key order and a nested
//     failure is reported as is, without a property prefix;
//   - version 1 checks only type, required and properties, the other
//     keywords being provider hints;
//   - versions 2 and 3 check type, enum, minimum/maximum, (v3) text length
//     and format, required, (v3) closed records, properties, (v3) unique
//     items, then list items, a failing item prefixed "item <i>: ".
func ValidateValue(schema any, v any, version int) string {
	s, ok := schema.(map[string]any)
	if !ok {
		return ""
	}
	if version >= 2 {
		return validateStrict(s, v, version >= 3)
	}
	return validateV1(s, v)
}

// declaredTypes lists the schema's type names, "object" when omitted.
func declaredTypes(s map[string]any) []string {
	switch t := s["type"].(type) {
	case string:
		return []string{t}
	case []any:
		names := make([]string, len(t))
		for i, e := range t {
			names[i], _ = e.(string)
		}
		return names
	}
	return []string{"object"}
}

func typeCheck(s map[string]any, v any, v3 bool) string {
	types := declaredTypes(s)
	for _, t := range types {
		if schemaTypeMatches(t, v, v3) {
			return ""
		}
	}
	return "expected " + strings.Join(types, "|")
}

func requiredCheck(s map[string]any, v any) string {
	req, _ := s["required"].([]any)
	obj, _ := v.(map[string]any)
	for _, k := range req {
		name, _ := k.(string)
		if _, ok := obj[name]; !ok {
			return "missing required field"
		}
	}
	return ""
}

// propertyNames returns the declared property names in byte order, or nil
// when either side is not an object.
func propertyNames(s map[string]any, v any) (map[string]any, map[string]any, []string) {
	props, ok1 := s["properties"].(map[string]any)
	obj, ok2 := v.(map[string]any)
	if !ok1 || !ok2 {
		return nil, nil, nil
	}
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return props, obj, keys
}

func validateV1(s map[string]any, v any) string {
	if msg := typeCheck(s, v, false); msg != "" {
		return msg
	}
	if msg := requiredCheck(s, v); msg != "" {
		return msg
	}
	return validateProperties(s, v, 1)
}

// valueRule checks one aspect of a value against a strict schema,
// returning "" or the reason.
type valueRule func(s map[string]any, v any, v3 bool) string

// The value rules of versions 2 and 3 in the order the native runtime
// runs them. A rule about objects and one about lists never both apply, so
// uniqueItems (a list rule) may run before the properties (an object rule)
// that validateNested checks after these.
var (
	strictValueRulesV2 = []valueRule{typeCheck, enumCheck, numberBoundsCheck, requiredRule}
	strictValueRulesV3 = []valueRule{typeCheck, enumCheck, numberBoundsCheck, textCheck, requiredRule, closedRecordCheck, uniqueItemsCheck}
)

func validateStrict(s map[string]any, v any, v3 bool) string {
	rules, version := strictValueRulesV2, 2
	if v3 {
		rules, version = strictValueRulesV3, 3
	}
	for _, rule := range rules {
		if msg := rule(s, v, v3); msg != "" {
			return msg
		}
	}
	if msg := validateProperties(s, v, version); msg != "" {
		return msg
	}
	return validateItems(s, v, version)
}

func enumCheck(s map[string]any, v any, _ bool) string {
	enum, ok := s["enum"].([]any)
	if !ok || enumHas(enum, v) {
		return ""
	}
	return "expected an allowed value"
}

// enumHas reports whether v is canonically equal to an entry of enum.
func enumHas(enum []any, v any) bool {
	b, _ := canon.Encode(v)
	for _, e := range enum {
		eb, _ := canon.Encode(e)
		if string(eb) == string(b) {
			return true
		}
	}
	return false
}

func numberBoundsCheck(s map[string]any, v any, _ bool) string {
	f, isNum := v.(float64)
	if !isNum {
		return ""
	}
	if m, ok := s["minimum"].(float64); ok && f < m {
		return "number below minimum"
	}
	if m, ok := s["maximum"].(float64); ok && f > m {
		return "number above maximum"
	}
	return ""
}

// textCheck is the v3 text rule: length in code points, then format.
func textCheck(s map[string]any, v any, _ bool) string {
	str, isText := v.(string)
	if !isText {
		return ""
	}
	n := float64(utf8.RuneCountInString(str))
	if m, ok := s["minLength"].(float64); ok && n < m {
		return "text shorter than minLength"
	}
	if m, ok := s["maxLength"].(float64); ok && n > m {
		return "text longer than maxLength"
	}
	if format, ok := s["format"].(string); ok && !formatMatches(format, str) {
		return "text is not a " + format
	}
	return ""
}

func requiredRule(s map[string]any, v any, _ bool) string { return requiredCheck(s, v) }

// closedRecordCheck is the v3 "additionalProperties": false rule.
func closedRecordCheck(s map[string]any, v any, _ bool) string {
	if s["additionalProperties"] != false {
		return ""
	}
	props, obj, _ := propertyNames(s, v)
	for k := range obj {
		if _, ok := props[k]; !ok {
			return "undeclared field"
		}
	}
	return ""
}

func uniqueItemsCheck(s map[string]any, v any, _ bool) string {
	list, isList := v.([]any)
	if !isList || s["uniqueItems"] != true {
		return ""
	}
	seen := make(map[string]bool, len(list))
	for _, e := range list {
		b, _ := canon.Encode(e)
		if seen[string(b)] {
			return "repeated item"
		}
		seen[string(b)] = true
	}
	return ""
}

// validateProperties checks the value's declared properties in byte order;
// a nested failure is reported as is.
func validateProperties(s map[string]any, v any, version int) string {
	props, obj, keys := propertyNames(s, v)
	for _, k := range keys {
		if pv, ok := obj[k]; ok {
			if msg := ValidateValue(props[k], pv, version); msg != "" {
				return msg
			}
		}
	}
	return ""
}

// validateItems checks each list item, a failure prefixed "item <i>: ".
func validateItems(s map[string]any, v any, version int) string {
	list, isList := v.([]any)
	items, ok := s["items"]
	if !ok || !isList {
		return ""
	}
	for i, e := range list {
		if msg := ValidateValue(items, e, version); msg != "" {
			return fmt.Sprintf("item %d: %s", i, msg)
		}
	}
	return ""
}

// formatTests are the fixed character tests of the v3 formats.
var formatTests = map[string]func(string) bool{
	"digest": canon.IsDigest,
	"name":   isNameFormat,
	"slug":   isSlugFormat,
	"uri":    isURIFormat,
}

// formatMatches is the fixed character test of a v3 "format".
func formatMatches(format, s string) bool {
	test, ok := formatTests[format]
	return ok && test(s)
}

func isNameFormat(s string) bool {
	return canon.UTF16Len(s) <= 64 && s != "" && s[0] >= 'a' && s[0] <= 'z' && allBytes(s, isSlugByte)
}

func isSlugFormat(s string) bool {
	return canon.UTF16Len(s) <= 128 && s != "" && s[0] != '-' && s[len(s)-1] != '-' &&
		!strings.Contains(s, "--") && allBytes(s, isSlugByte)
}

func isURIFormat(s string) bool {
	scheme, rest, ok := strings.Cut(s, ":")
	return ok && canon.UTF16Len(s) <= 2048 && rest != "" && scheme != "" && isAlpha(scheme[0]) &&
		allBytes(scheme, isSchemeByte) && allBytes(rest, isURIByte)
}

func isSchemeByte(b byte) bool { return isAlpha(b) || isDigit(b) || b == '+' || b == '-' || b == '.' }

func isURIByte(b byte) bool {
	return isAlpha(b) || isDigit(b) || strings.IndexByte("-._~!$&'()*+,;=:@/?#[]%", b) >= 0
}

func isAlpha(b byte) bool    { return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' }
func isDigit(b byte) bool    { return b >= '0' && b <= '9' }
func isSlugByte(b byte) bool { return b >= 'a' && b <= 'z' || isDigit(b) || b == '-' }

func allBytes(s string, ok func(byte) bool) bool {
	for i := 0; i < len(s); i++ {
		if !ok(s[i]) {
			return false
		}
	}
	return true
}
