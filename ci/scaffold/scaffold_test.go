package scaffold

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/fault"
)

// The embedded files come out under their real names.
func TestFilesDropTheirGuardSuffix(t *testing.T) {
	t.Parallel()
	files, err := Files()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{".gitignore", "suites/suite_test.go", ".github/workflows/assay-pr.yml", "organisms/review-sentiment.algal.json"} {
		if _, ok := files[want]; !ok {
			t.Errorf("scaffold lacks %s", want)
		}
	}
	for name := range files {
		if strings.HasSuffix(name, ".txt") || name == "gitignore" {
			t.Errorf("scaffold writes %s under its embedded name", name)
		}
	}
}

// Write writes every file and a go.mod, then refuses to write over them.
func TestWriteRefusesToReplace(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "My Organisms")
	w, err := Write(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(w.Files, "go.mod") || !slices.IsSorted(w.Files) {
		t.Errorf("files: %v", w.Files)
	}
	mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil || !strings.HasPrefix(string(mod), "module example.com/my-organisms\n\ngo "+GoVersion+"\n") {
		t.Errorf("go.mod: %v\n%s", err, mod)
	}
	if w.Next[0] != "cd "+dir {
		t.Errorf("next: %v", w.Next)
	}
	_, err = Write(dir, Options{})
	if fault.CodeOf(err) != fault.IOFailed || !strings.Contains(err.Error(), "init would replace .github/workflows/assay-comment.yml") {
		t.Errorf("second write: %v", err)
	}
	var exists ModuleExistsError
	if _, err := Write(dir, Options{Module: "example.com/x"}); !errors.As(err, &exists) {
		t.Errorf("--module over an existing go.mod: %v", err)
	}
}
