package scaffold

import (
	"bytes"
	"reflect"
	"testing"
)

func TestWrittenValueAndText(t *testing.T) {
	t.Parallel()
	w := &Written{Files: []string{"go.mod", "suites/a.bench.yaml"}, Next: []string{"go tool assay run"}}
	want := map[string]any{"dir": "x", "files": []any{"go.mod", "suites/a.bench.yaml"}, "next": []any{"go tool assay run"}}
	if got := w.Value("x"); !reflect.DeepEqual(got, want) {
		t.Errorf("value %v", got)
	}
	var b bytes.Buffer
	if err := w.WriteText(&b, "x"); err != nil {
		t.Fatal(err)
	}
	if want := "assay init: wrote 2 files in x\n  go.mod\n  suites/a.bench.yaml\n\nNext:\n  go tool assay run\n"; b.String() != want {
		t.Errorf("text %q", b.String())
	}
}
