package receipt

import (
	"reflect"
	"testing"
)

// Compare reads two recorded runs as upstream's `algal diff` does: an
// absent field equals null, and lines come in upstream's order.
func TestCompareListsDifferencesInOrder(t *testing.T) {
	t.Parallel()
	a := map[string]any{
		"manifestDigest": "sha256:a", "outcome": "complete",
		"cells":   map[string]any{"x": map[string]any{"status": "committed", "outputs": map[string]any{"v": 1.0}, "via": "remote"}},
		"effects": []any{map[string]any{"requestDigest": "sha256:r", "executor": "scripted"}},
		"work":    map[string]any{"steps": 1.0},
	}
	b := map[string]any{
		"manifestDigest": "sha256:b", "outcome": "failed",
		"cells":   map[string]any{"x": map[string]any{"status": "failed", "toolCalls": []any{1.0}}},
		"effects": []any{map[string]any{"requestDigest": "sha256:r", "executor": "other"}},
		"work":    map[string]any{"steps": 2.0},
		"failure": map[string]any{"code": "X"},
	}
	want := []string{
		"manifestDigest: sha256:a vs sha256:b",
		"outcome: complete vs failed",
		"cell x: status committed vs failed",
		"cell x: outputs differ",
		"cell x: toolCalls differ",
		"cell x: via remote vs local",
		"effect 0: executor scripted vs other",
		"work.steps: 1 vs 2",
		"failure presence differs",
	}
	if got := Compare(a, b); !reflect.DeepEqual(got, want) {
		t.Errorf("Compare:\n got %q\nwant %q", got, want)
	}
	if got := Compare(a, a); len(got) != 0 {
		t.Errorf("a receipt differs from itself: %q", got)
	}
}

// An absent field and null are the same to Compare, unlike to Diff.
func TestCompareAbsentEqualsNull(t *testing.T) {
	t.Parallel()
	a := map[string]any{"outcome": "complete", "events": nil}
	b := map[string]any{"outcome": "complete"}
	if got := Compare(a, b); len(got) != 0 {
		t.Errorf("absent vs null: %q", got)
	}
	if got := Compare(map[string]any{"effects": []any{1.0}}, map[string]any{}); !reflect.DeepEqual(got, []string{"effects: 1 vs 0"}) {
		t.Errorf("effects: %q", got)
	}
}

// Summary keeps per cell only what a person needs, and counts effects
// and tool calls.
func TestSummary(t *testing.T) {
	t.Parallel()
	rec := map[string]any{
		"contract": "algal.run.v1", "outcome": "complete", "digest": "sha256:d",
		"cells": map[string]any{
			"a": map[string]any{"status": "committed", "work": 0.0, "outputs": map[string]any{"v": 1.0}},
			"b": map[string]any{"status": "committed", "work": 3.0, "via": "remote", "toolCalls": []any{1.0, 2.0}, "slot": nil},
		},
		"effects": []any{1.0, 2.0},
	}
	got := Summary(rec)
	want := map[string]any{
		"contract": "algal.run.v1", "manifestKey": nil, "outcome": "complete", "work": nil, "failure": nil, "digest": "sha256:d",
		"effects": 2.0,
		"cells": map[string]any{
			"a": map[string]any{"status": "committed"},
			"b": map[string]any{"status": "committed", "work": 3.0, "via": "remote", "toolCalls": 2.0},
		},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Summary:\n got %#v\nwant %#v", got, want)
	}
}
