package manifest

import (
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/algal-assay/assay/engine/canon"
)

// Helpers that read one JSON value (as decoded by canon) and reject it with
// a located PARSE_FAILED/BUDGET_EXHAUSTED error.

// portKinds names JSON types in the organism type vocabulary.
var portKinds = canon.Names{"null", "boolean", "number", "text", "array", "object", ""}

func describe(v any) string {
	if canon.KindOf(v) == canon.KindOther {
		return fmt.Sprintf("%T", v)
	}
	return portKinds.Of(v)
}

func asObject(v any, loc string) (map[string]any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		if v == nil {
			return nil, invalid(loc, "required object is missing")
		}
		return nil, invalid(loc, "expected object, got %s", describe(v))
	}
	return m, nil
}

// asText checks a string of at most max UTF-16 code units.
func asText(v any, loc string, max int) (string, error) {
	s, ok := v.(string)
	if !ok {
		if v == nil {
			return "", invalid(loc, "required text is missing")
		}
		return "", invalid(loc, "expected text, got %s", describe(v))
	}
	if len(s) > max && canon.UTF16Len(s) > max {
		return "", invalid(loc, "text exceeds %d UTF-16 code units", max)
	}
	return s, nil
}

func asID(v any, loc string) (string, error) {
	s, err := asText(v, loc, MaxIDLen)
	if err != nil {
		return "", err
	}
	if !canon.IsID(s) {
		return "", invalid(loc, "%q is not a lowercase kebab-case id", s)
	}
	return s, nil
}

// nameID checks an object key used as an id (port names, interface names).
func nameID(s, loc string) error {
	if !canon.IsID(s) {
		return invalid(loc, "%q is not a lowercase kebab-case id", s)
	}
	return nil
}

// onlyKeys rejects any key outside allowed, reporting the first unknown key
// in byte order so the message is deterministic.
func onlyKeys(m map[string]any, loc string, allowed ...string) error {
	if k, bad := canon.UnknownKey(m, allowed...); bad {
		return hinted(invalid(loc, "unknown key %q", k), k, allowed)
	}
	return nil
}

func asList(v any, loc string, max int) ([]any, error) {
	l, ok := v.([]any)
	if !ok {
		if v == nil {
			return nil, invalid(loc, "required array is missing")
		}
		return nil, invalid(loc, "expected array, got %s", describe(v))
	}
	if len(l) > max {
		return nil, limit(loc, "%d entries exceed the bound of %d", len(l), max)
	}
	return l, nil
}

// asInt checks a non-negative integer in [min, max].
func asInt(v any, loc string, min, max int) (int, error) {
	f, ok := v.(float64)
	if !ok {
		if v == nil {
			return 0, invalid(loc, "required integer is missing")
		}
		return 0, invalid(loc, "expected non-negative integer, got %s", describe(v))
	}
	if f < 0 || f != math.Trunc(f) || f > 1<<53 {
		return 0, invalid(loc, "expected non-negative integer, got %v", f)
	}
	if f < float64(min) || f > float64(max) {
		return 0, invalid(loc, "integer %v out of bounds %d..%d", f, min, max)
	}
	return int(f), nil
}

// intField is one integer field of a closed object of bounds (the
// manifest's budgets, a cell's budget): its key, range and destination.
type intField struct {
	key    string
	lo, hi int
	dst    *int
}

// parseInts reads m, whose keys must be among fields (named in the order
// given when one is unknown), into the fields' destinations, key by key
// in sorted order so that the first bad key named is stable.
func parseInts(m map[string]any, loc string, fields []intField) error {
	keys := make([]string, len(fields))
	for i, f := range fields {
		keys[i] = f.key
	}
	if err := onlyKeys(m, loc, keys...); err != nil {
		return err
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		f := fields[slices.Index(keys, k)]
		n, err := asInt(m[k], loc+"."+k, f.lo, f.hi)
		if err != nil {
			return err
		}
		*f.dst = n
	}
	return nil
}

func asBool(v any, loc string) (bool, error) {
	b, ok := v.(bool)
	if !ok {
		return false, invalid(loc, "expected boolean, got %s", describe(v))
	}
	return b, nil
}

// copyObject returns a shallow copy of m.
func copyObject(m map[string]any) map[string]any {
	c := make(map[string]any, len(m)+2)
	for k, v := range m {
		c[k] = v
	}
	return c
}
