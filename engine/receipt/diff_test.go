package receipt

import (
	"reflect"
	"testing"
)

// receipt.rs diff: per-effect comparisons run only when both lists have
// the same length, and "receipt records differ" is the catch-all reported
// only when no named check found a difference.
func TestDiffNativeShape(t *testing.T) {
	t.Parallel()
	a := sample(t)
	b := sample(t)
	b["effects"] = b["effects"].([]any)[:1]
	effectOf(b, 0)["executor"] = "other"
	if _, err := Seal(b); err != nil {
		t.Fatal(err)
	}
	got := Diff(a, b)
	if !reflect.DeepEqual(got, []string{"effects: 2 vs 1"}) {
		t.Fatalf("diff: %q", got)
	}

	// Only the args differ: the catch-all comes first, followed by the
	// named leaves.
	c := sample(t)
	c["args"] = map[string]any{"in": map[string]any{"t": "y"}}
	if _, err := Seal(c); err != nil {
		t.Fatal(err)
	}
	got = Diff(a, c)
	if len(got) < 2 || got[0] != "receipt records differ" || !contains(got, "args.in.t differs") {
		t.Fatalf("diff: %q", got)
	}
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}
