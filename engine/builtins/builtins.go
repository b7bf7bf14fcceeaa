// Package builtins holds the bodies of ALGAL's builtin registry functions
// (echo.v1 ... push.v1, manifest.compile.v1, context.compact.v1,
// memory.query.v1). Their signatures (ports, cost) are contract data and
// live in the manifest package (manifest.Builtin); this package owns the
// behaviours, and its tests hold the two to the same set of names. The run
// engine (engine/vm) calls them for fn cells.
//
// A body's failure is a *fault.Error whose Message is receipt data: it
// follows the native registry's wording byte for byte.
package builtins

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
)

// Fn is a registry function body: it receives the delivered inputs (absent
// optional ports are absent) and returns its output ports. extra is work
// beyond the signature's cost that the function itself measured.
type Fn func(inputs map[string]any) (outputs map[string]any, extra int, err error)

// Funcs returns the builtin function bodies keyed by registry name, a fresh
// map each call.
func Funcs() map[string]Fn {
	return map[string]Fn{
		"echo.v1":      fnEcho,
		"coalesce.v1":  fnCoalesce,
		"format.v1":    fnFormat,
		"tag.v1":       fnTag,
		"pick.v1":      fnPick,
		"join.v1":      fnJoin,
		"assert.v1":    fnAssert,
		"inc.v1":       fnInc,
		"double.v1":    fnDouble,
		"not.v1":       fnNot,
		"uppercase.v1": fnUppercase,
		"label.v1":     fnLabel,
		"push.v1":      fnPush,

		"manifest.compile.v1": fnManifestCompile,
		"context.compact.v1":  fnContextCompact,
		"memory.query.v1":     fnMemoryQuery,
	}
}

// Names lists the implemented builtins in byte order.
func Names() []string { return slices.Sorted(maps.Keys(Funcs())) }

func fnFailed(format string, a ...any) error {
	return &fault.Error{Code: fault.FnFailed, Message: fmt.Sprintf(format, a...)}
}

func one(v any) map[string]any { return map[string]any{"value": v} }

func fnEcho(in map[string]any) (map[string]any, int, error) { return one(in["value"]), 0, nil }

func fnCoalesce(in map[string]any) (map[string]any, int, error) {
	for _, k := range []string{"a", "b", "c"} {
		if v, ok := in[k]; ok && v != nil {
			return one(v), 0, nil
		}
	}
	return nil, 0, fnFailed("coalesce.v1: all inputs empty")
}

// render writes a value the way format/tag/join show it: text as-is,
// anything else as canonical JSON.
func render(v any) (string, error) {
	if s, ok := v.(string); ok {
		return s, nil
	}
	b, err := canon.Encode(v)
	if err != nil {
		return "", fnFailed("value is not canonical JSON: %v", err)
	}
	return string(b), nil
}

func fnFormat(in map[string]any) (map[string]any, int, error) {
	prefix, _ := in["prefix"].(string)
	s, err := render(in["value"])
	if err != nil {
		return nil, 0, err
	}
	return one(prefix + s), 0, nil
}

func fnTag(in map[string]any) (map[string]any, int, error) {
	tag, _ := in["tag"].(string)
	s, err := render(in["value"])
	if err != nil {
		return nil, 0, err
	}
	upper := []byte(tag)
	for i, c := range upper {
		if c >= 'a' && c <= 'z' {
			upper[i] = c - 'a' + 'A'
		}
	}
	return one(string(upper) + ": " + s), 0, nil
}

func fnPick(in map[string]any) (map[string]any, int, error) {
	rec, ok := in["record"].(map[string]any)
	if !ok {
		return nil, 0, fnFailed("pick.v1: record must be an object")
	}
	field, _ := in["field"].(string)
	v, ok := rec[field]
	if !ok {
		v = nil
	}
	return one(v), 0, nil
}

func fnJoin(in map[string]any) (map[string]any, int, error) {
	items, _ := in["items"].([]any)
	sep := "\n"
	if s, ok := in["sep"].(string); ok {
		sep = s
	}
	parts := make([]string, len(items))
	for i, it := range items {
		s, err := render(it)
		if err != nil {
			return nil, 0, err
		}
		parts[i] = s
	}
	return one(strings.Join(parts, sep)), 0, nil
}

func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n])
}

func fnAssert(in map[string]any) (map[string]any, int, error) {
	a, err1 := canon.Encode(in["value"])
	b, err2 := canon.Encode(in["expect"])
	if err1 != nil || err2 != nil {
		return nil, 0, fnFailed("assert.v1: value is not canonical JSON")
	}
	if string(a) != string(b) {
		return nil, 0, fnFailed("assert.v1: value %s != expect %s", truncate(string(a), 200), truncate(string(b), 200))
	}
	return one(in["value"]), 0, nil
}

// The FN_FAILED messages below are receipt data: they follow the native
// registry's wording byte for byte so failed runs replay across runtimes.

func fnInc(in map[string]any) (map[string]any, int, error) {
	f, ok := in["value"].(float64)
	if !ok {
		return nil, 0, fnFailed("inc.v1: value must be a finite number")
	}
	// A finite float64 plus one stays finite, so there is no overflow case.
	return one(f + 1), 0, nil
}

func fnDouble(in map[string]any) (map[string]any, int, error) {
	f, ok := in["value"].(float64)
	if !ok {
		return nil, 0, fnFailed("double.v1 requires a number")
	}
	if math.IsInf(f*2, 0) {
		return nil, 0, fnFailed("double.v1 overflow")
	}
	return one(f * 2), 0, nil
}

func fnNot(in map[string]any) (map[string]any, int, error) {
	b, ok := in["value"].(bool)
	if !ok {
		return nil, 0, fnFailed("not.v1 requires a boolean")
	}
	return one(!b), 0, nil
}

func fnUppercase(in map[string]any) (map[string]any, int, error) {
	s, _ := in["value"].(string)
	return one(strings.ToUpper(s)), 0, nil
}

func fnLabel(in map[string]any) (map[string]any, int, error) {
	if in["value"] == "a" {
		return one("a"), 0, nil
	}
	return one("b"), 0, nil
}

func fnPush(in map[string]any) (map[string]any, int, error) {
	l, ok := in["list"].([]any)
	if !ok {
		return nil, 0, fnFailed("push.v1: list must be an array")
	}
	out := make([]any, len(l), len(l)+1)
	copy(out, l)
	return one(append(out, in["item"])), 0, nil
}
