package manifest

import (
	"slices"
	"testing"
)

// Every cell kind has one well-formed row in the kind table, and the
// parser, the compiler and Kind's methods answer from it.
func TestKindTableCoversEveryKind(t *testing.T) {
	t.Parallel()
	all := []Kind{KindInput, KindConst, KindFn, KindExpr, KindAgent, KindClassifier, KindGate, KindDecide,
		KindRecall, KindOrganism, KindRepeat, KindEach, KindStore, KindLoad, KindSlot, KindSpawn, KindTool}
	if got := Kinds(); len(got) != len(all) {
		t.Fatalf("table lists %v, want the %d kinds of the contract", got, len(all))
	}
	effects := 0
	for _, k := range all {
		s, ok := KindOf(k)
		if !ok {
			t.Fatalf("%s has no row", k)
		}
		if !slices.Contains(s.Fields, "id") || !slices.Contains(s.Fields, "kind") {
			t.Errorf("%s: fields %v lack id or kind", k, s.Fields)
		}
		if (s.Ports == CellPorts) != (s.Signature != nil) {
			t.Errorf("%s: ports %d with signature set %v", k, s.Ports, s.Signature != nil)
		}
		if k.IsEffect() {
			effects++
		}
	}
	if effects != 5 || !KindEach.Embeds() || KindSpawn.Embeds() || Kind("nope").IsEffect() {
		t.Errorf("IsEffect/Embeds disagree with the table (%d effect kinds)", effects)
	}
	if _, ok := KindOf("nope"); ok {
		t.Error("an unknown kind has a row")
	}
}

// The record keys are the union of the rows' keys, each once, and a row
// that records a key (rounds for repeat) is the only kind that may.
func TestRecordKeys(t *testing.T) {
	t.Parallel()
	want := []string{"effectDigest", "toolCalls", "shadowOut", "via", "rounds", "items", "slot"}
	if got := RecordKeys(); !slices.Equal(got, want) {
		t.Errorf("RecordKeys() = %v, want %v", got, want)
	}
	for _, k := range Kinds() {
		s, _ := KindOf(k)
		if slices.Contains(s.Record, "rounds") != (k == KindRepeat) {
			t.Errorf("%s: rounds in its record keys %v", k, s.Record)
		}
	}
}

// A field of another kind is refused by the kind's row, where it is
// written.
func TestCellFieldsComeFromTheTable(t *testing.T) {
	t.Parallel()
	_, err := Parse([]byte(`{"contract":"algal.organism.v1","key":"organism:x","cells":[{"id":"s","kind":"store","prompt":"p"}],"edges":[]}`))
	if err == nil {
		t.Fatal("a store cell with a prompt parsed")
	}
}
