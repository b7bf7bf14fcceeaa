package vm

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/effect"
	"github.com/algal-assay/assay/engine/manifest"
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

// A receipt written to a file verifies from the files alone, its manifest
// given or read from the store; a receipt that was edited does not.
func TestVerifyFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := `{"contract":"algal.organism.v1","key":"organism:one","name":"One","cells":[{"id":"in","kind":"input","outputs":{"q":"text"}}]}`
	mfile := filepath.Join(dir, "one.algal.json")
	if err := os.WriteFile(mfile, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := manifest.Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.OpenFileStore(filepath.Join(dir, "store"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Put(store.Manifests, m.Value); err != nil {
		t.Fatal(err)
	}
	rec, err := Run(m, map[string]any{"in": map[string]any{"q": "x"}}, &Host{Store: st, Router: effect.NewRouter()})
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, v any) string {
		b, err := canon.Encode(v)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("r.json", rec)
	for _, manifestFile := range []string{mfile, ""} {
		rep, err := VerifyFiles{Dir: filepath.Join(dir, "store"), Receipt: good, Manifest: manifestFile}.Verify(context.Background())
		if err != nil || !rep.OK {
			t.Fatalf("manifest %q: %+v, %v", manifestFile, rep, err)
		}
	}
	rec["outcome"] = "failed"
	rep, err := VerifyFiles{Dir: filepath.Join(dir, "store"), Receipt: write("edited.json", rec), Manifest: mfile}.Verify(context.Background())
	if err == nil && rep.OK {
		t.Error("an edited receipt verifies")
	}
}
