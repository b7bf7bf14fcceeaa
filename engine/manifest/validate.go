package manifest

import (
	"fmt"
	"regexp"
	"sort"
	"unicode/utf8"

	"github.com/algal-assay/assay/engine/canon"
)

var (
	slugRE = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
	nameRE = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)
	uriRE  = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:[^\s]*$`)
)

// ValidateValue checks v against a port or output schema declaration (the
// bounded subset this package admits, under schemaVersion 1, 2 or 3) and
// returns "" or a message naming the first violation; properties are
// checked in sorted key order, as upstream's runtimes now do, so the
// message is the same on every run.
func ValidateValue(schema any, v any, version int) string {
	s, ok := schema.(map[string]any)
	if !ok {
		return ""
	}
	v3 := version >= 3
	if t, ok := s["type"]; ok {
		var types []string
		switch x := t.(type) {
		case string:
			types = []string{x}
		case []any:
			for _, e := range x {
				if n, ok := e.(string); ok {
					types = append(types, n)
				}
			}
		}
		match := false
		for _, tn := range types {
			if schemaTypeMatches(tn, v, v3) {
				match = true
				break
			}
		}
		if !match {
			return fmt.Sprintf("expected %s, got %s", joinTypes(types), valueKind(v))
		}
	}
	if obj, isObj := v.(map[string]any); isObj {
		if req, ok := s["required"].([]any); ok {
			for _, k := range req {
				name, _ := k.(string)
				if _, ok := obj[name]; !ok {
					return fmt.Sprintf("missing required property %q", name)
				}
			}
		}
		props, _ := s["properties"].(map[string]any)
		keys := make([]string, 0, len(props))
		for k := range props {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			pv, ok := obj[k]
			if !ok {
				continue
			}
			if msg := ValidateValue(props[k], pv, version); msg != "" {
				return fmt.Sprintf("property %q: %s", k, msg)
			}
		}
		if version >= 3 && s["additionalProperties"] == false {
			for _, k := range canon.SortedKeys(obj) {
				if _, ok := props[k]; !ok {
					return fmt.Sprintf("unexpected property %q", k)
				}
			}
		}
	}
	if version < 2 {
		return ""
	}
	if list, isList := v.([]any); isList {
		if items, ok := s["items"]; ok {
			for i, e := range list {
				if msg := ValidateValue(items, e, version); msg != "" {
					return fmt.Sprintf("item %d: %s", i, msg)
				}
			}
		}
		if v3 && s["uniqueItems"] == true {
			seen := map[string]bool{}
			for _, e := range list {
				b, _ := canon.Encode(e)
				if seen[string(b)] {
					return "items are not unique"
				}
				seen[string(b)] = true
			}
		}
	}
	if enum, ok := s["enum"].([]any); ok {
		b, _ := canon.Encode(v)
		found := false
		for _, e := range enum {
			eb, _ := canon.Encode(e)
			if string(eb) == string(b) {
				found = true
				break
			}
		}
		if !found {
			return "value is not in enum"
		}
	}
	if f, isNum := v.(float64); isNum {
		if m, ok := s["minimum"].(float64); ok && f < m {
			return fmt.Sprintf("%s is below minimum", canon.FormatNumber(nil, f))
		}
		if m, ok := s["maximum"].(float64); ok && f > m {
			return fmt.Sprintf("%s is above maximum", canon.FormatNumber(nil, f))
		}
	}
	if str, isText := v.(string); isText && v3 {
		n := float64(utf8.RuneCountInString(str))
		if m, ok := s["minLength"].(float64); ok && n < m {
			return "text is shorter than minLength"
		}
		if m, ok := s["maxLength"].(float64); ok && n > m {
			return "text is longer than maxLength"
		}
		if format, ok := s["format"].(string); ok {
			good := true
			switch format {
			case "digest":
				good = canon.IsDigest(str)
			case "name":
				good = nameRE.MatchString(str) && len(str) <= 64
			case "slug":
				good = slugRE.MatchString(str)
			case "uri":
				good = uriRE.MatchString(str)
			}
			if !good {
				return fmt.Sprintf("text is not a valid %s", format)
			}
		}
	}
	return ""
}

func joinTypes(ts []string) string {
	out := ""
	for i, t := range ts {
		if i > 0 {
			out += "|"
		}
		out += t
	}
	return out
}

// valueKind names a value's JSON kind in schema failure messages.
func valueKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "bool"
	case float64:
		return "number"
	case string:
		return "string"
	case []any:
		return "list"
	}
	return "object"
}
