package workload

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

func TestDisplayPathIsRelativeToTheWorkTree(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not on PATH")
	}
	repo := t.TempDir()
	if out, err := exec.Command("git", "-C", repo, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	file := filepath.Join(repo, "suites", "triage.bench.yaml")
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte("name: x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := displayPath(file); got != "suites/triage.bench.yaml" {
		t.Errorf("absolute path shown as %q", got)
	}
	// The same file named from another directory reads the same.
	t.Chdir(filepath.Join(repo, "suites"))
	if got := displayPath("triage.bench.yaml"); got != "suites/triage.bench.yaml" {
		t.Errorf("relative path shown as %q", got)
	}
	// Outside a work tree the path stays as given.
	outside := filepath.Join(t.TempDir(), "w.bench.yaml")
	if got := displayPath(outside); got != outside {
		t.Errorf("path outside git shown as %q", got)
	}
}
