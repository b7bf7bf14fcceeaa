package vm

import (
	"testing"

	"github.com/algal-assay/assay/engine/store"
)

func TestReportReadable(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		rep  Report
		want string
	}{
		{Report{OK: true, Outcome: "complete", Digest: "sha256:d"}, "verified: the replay reproduces the receipt (outcome complete)\ndigest sha256:d\n"},
		{Report{Mismatches: []string{"outcome: complete != failed"}, Outcome: "failed", Digest: "sha256:e"},
			"NOT VERIFIED: 1 mismatch(es)\n  - outcome: complete != failed\nreplayed outcome failed, digest sha256:e\n"},
		{Report{Mismatches: []string{"no replay"}}, "NOT VERIFIED: 1 mismatch(es)\n  - no replay\n"},
	} {
		if got := c.rep.Readable(); got != c.want {
			t.Errorf("Readable() = %q, want %q", got, c.want)
		}
	}
}

// Modules go into the overlay only: the file store under it is unchanged.
func TestOpenOverlayLeavesTheStore(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	base, view, err := OpenOverlay(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	ref, err := view.Put(store.Values, map[string]any{"a": 1.0})
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := base.Has(store.Values, ref); err != nil || ok {
		t.Errorf("the overlay wrote through to the store (has %v, %v)", ok, err)
	}
	if sigs, err := ToolSignaturesFile(""); sigs != nil || err != nil {
		t.Errorf("no registry: %v, %v", sigs, err)
	}
}

// A run that does not persist writes through an overlay only.
func TestOpenRunStorePersistsOnlyWhenAsked(t *testing.T) {
	t.Parallel()
	for _, persist := range []bool{false, true} {
		dir := t.TempDir()
		st, err := OpenRunStore(dir, "", persist)
		if err != nil {
			t.Fatal(err)
		}
		ref, err := st.Put(store.Values, map[string]any{"a": 1.0})
		if err != nil {
			t.Fatal(err)
		}
		base, err := store.OpenFileStore(dir)
		if err != nil {
			t.Fatal(err)
		}
		if ok, err := base.Has(store.Values, ref); err != nil || ok != persist {
			t.Errorf("persist %v: the file store has the value: %v (%v)", persist, ok, err)
		}
	}
}
