package workroot

import (
	"os"
	"path/filepath"
	"testing"
)

// From a subdirectory the module root is found; at the root itself it is
// not an ancestor; .git is the fallback marker.
func TestAboveAndGit(t *testing.T) {
	root := t.TempDir()
	sub := filepath.Join(root, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	root, _ = filepath.EvalSymlinks(root)
	sub = filepath.Join(root, "a", "b")
	t.Chdir(sub)
	if got, ok := Above(); !ok || got != root {
		t.Errorf("Above from %s = %q, %v; want %q", sub, got, ok, root)
	}
	if got := Git(); got != root {
		t.Errorf("Git = %q, want %q", got, root)
	}
	t.Chdir(root)
	if _, ok := Above(); ok {
		t.Error("the working directory itself counts as an ancestor")
	}
}
