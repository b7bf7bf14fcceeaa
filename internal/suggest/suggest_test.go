package suggest

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

var ops = []string{"add", "concat", "contains", "eq", "filter", "fold", "get", "gt", "lt", "neq", "sconcat", "upper"}

func TestClosest(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, want string
		ok         bool
	}{
		{"eqq", "eq", true},
		{"EQ", "eq", true},
		{"Upper", "upper", true},
		{"flod", "fold", true}, // a swap of neighbours is one edit
		{"fodl", "fold", true},
		{"lfdo", "", false},        // two swaps at length 4 are too far...
		{"filtre", "filter", true}, // ...but two edits are fine at length 6
		{"contans", "contains", true},
		{"uper", "upper", true},
		{"zzz", "", false},
		{"", "", false},
		{"mini", "", false},
		{"gte", "get", true}, // get (a swap) and gt are both one edit away; the first in order wins
	} {
		got, ok := Closest(c.name, ops)
		if got != c.want && c.ok || ok != c.ok {
			t.Errorf("Closest(%q) = %q, %v; want %q, %v", c.name, got, ok, c.want, c.ok)
		}
	}
}

func TestClosestIgnoresCandidateOrder(t *testing.T) {
	t.Parallel()
	rev := slices.Clone(ops)
	slices.Reverse(rev)
	for _, name := range []string{"gte", "ge", "eqq", "lte", "contain", "fil"} {
		a, aok := Closest(name, ops)
		b, bok := Closest(name, rev)
		if a != b || aok != bok {
			t.Errorf("Closest(%q): %q,%v in one order, %q,%v in the other", name, a, aok, b, bok)
		}
	}
}

func TestDidYouMean(t *testing.T) {
	t.Parallel()
	if got, want := DidYouMean("eqq", ops), ` (did you mean "eq"?)`; got != want {
		t.Errorf("DidYouMean(eqq) = %q, want %q", got, want)
	}
	if got := DidYouMean("eq", ops); got != "" {
		t.Errorf("DidYouMean of a known name = %q, want empty", got)
	}
	if got := DidYouMean("nothing-like-it", ops); got != "" {
		t.Errorf("DidYouMean of a far name = %q, want empty", got)
	}
	if got, want := DidYouMean(`a"b`, []string{`a"c`}), ` (did you mean "a\"c"?)`; got != want {
		t.Errorf("quoting: got %q, want %q", got, want)
	}
}

func TestMaxDistance(t *testing.T) {
	t.Parallel()
	for chars, want := range map[int]int{0: 1, 1: 1, 4: 1, 5: 2, 8: 3, 40: 3} {
		if got := MaxDistance(chars); got != want {
			t.Errorf("MaxDistance(%d) = %d, want %d", chars, got, want)
		}
	}
}

// File suggests the closest name in the directory a missing file would be
// in, spelled as written.
func TestFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "fixtures"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"fixtures/triage-single.algal.json", "fixtures/triage-escalating.algal.json", "ticket.bench.yaml"} {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct{ written, want string }{
		{"fixtures/triage-singel.algal.json", ` (did you mean "fixtures/triage-single.algal.json"?)`},
		{"fixtures/triage-single.algal.jsn", ` (did you mean "fixtures/triage-single.algal.json"?)`},
		{"tiket.bench.yaml", ` (did you mean "ticket.bench.yaml"?)`},
		{"./tiket.bench.yaml", ` (did you mean "./ticket.bench.yaml"?)`},
		{"fixtures/unrelated.json", ""},
		{"fixturs/triage-single.algal.json", ""},
		{"", ""},
	}
	for _, c := range cases {
		if got := File(dir, c.written); got != c.want {
			t.Errorf("File(%q) = %q, want %q", c.written, got, c.want)
		}
	}
	abs := filepath.Join(dir, "tiket.bench.yaml")
	if got, want := File("/elsewhere", abs), ` (did you mean "`+filepath.Join(dir, "ticket.bench.yaml")+`"?)`; got != want {
		t.Errorf("File(%q) = %q, want %q", abs, got, want)
	}
}
