package bundle

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/store"
)

// A manifest file is admitted and packed; its digest then packs the same
// bundle; Replace writes the canonical bytes over what is there.
func TestPackManifestFromAFileOrADigest(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "one.algal.json")
	src := `{"contract":"algal.organism.v1","key":"organism:one","name":"One","cells":[{"id":"in","kind":"input","outputs":{"q":"text"}}]}`
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	st := store.NewMemStore()
	b, err := PackManifest(st, path)
	if err != nil {
		t.Fatal(err)
	}
	again, err := PackManifest(st, b.Root)
	if err != nil || again.Root != b.Root || len(again.Manifests) != 1 {
		t.Fatalf("by digest: %v, %v", again, err)
	}
	out := filepath.Join(dir, "b.json")
	if err := os.WriteFile(out, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Replace(out, b); err != nil {
		t.Fatal(err)
	}
	want, _ := canon.Encode(b.Value())
	if got, _ := os.ReadFile(out); string(got) != string(want) {
		t.Errorf("written %q", got)
	}
}
