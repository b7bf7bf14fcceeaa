package diff

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// --format json is the diff's JSON, anything else its Markdown; --out
// makes the file's directory.
func TestRenderAndWriteOut(t *testing.T) {
	t.Parallel()
	d := &Diff{Base: "base", Head: "head"}
	js, err := Render(d, "json")
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := d.JSON(); !bytes.Equal(js, want) {
		t.Errorf("json render differs from Diff.JSON")
	}
	md, err := Render(d, "md")
	if err != nil || string(md) != Markdown(d, RenderOptions{}) {
		t.Errorf("md render differs from Markdown: %v", err)
	}
	path := filepath.Join(t.TempDir(), "deep", "er", "diff.md")
	if err := WriteOut(path, md); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(path); err != nil || !bytes.Equal(b, md) {
		t.Errorf("written %q, %v", b, err)
	}
}
