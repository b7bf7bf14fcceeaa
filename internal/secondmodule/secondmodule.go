// Package secondmodule lets a test build a second Go module that uses
// Assay through a replace directive, as another repository would, and run
// the go command in it against the module cache only (GOPROXY=off).
//
// Adopt gives the second module the main module's own requirement list and
// go.sum, so its module graph is the main module's graph: the go command
// then needs no file that building and testing the main module (or `go mod
// download` in it) did not already put in the module cache. Left to
// resolve Assay's dependencies itself, the second module's go command
// loads the full module graph from Assay's requirements and reads go.mod
// files that only modules without graph pruning reach (gopkg.in/check.v1
// through yaml.v3, tidwall/pretty@v1.2.0 through sjson); a cache filled by
// building the main module lacks them, and GOPROXY=off cannot fetch them.
package secondmodule

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// goBin is the go command on PATH; a test without one is skipped, as the
// module cannot be built.
func goBin(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH")
	}
	return bin
}

// modVersion is a module version as `go mod edit -json` prints it.
type modVersion struct{ Path, Version string }

// modFile is the part of `go mod edit -json` that shapes the module
// graph: a dependency's replace and exclude directives are ignored, so
// the second module carries the main module's.
type modFile struct {
	Go      string
	Require []modVersion
	Exclude []modVersion
	Replace []struct{ Old, New modVersion }
}

// readModFile reads the go.mod in dir through `go mod edit -json`.
func readModFile(t testing.TB, bin, dir string) modFile {
	t.Helper()
	show := exec.Command(bin, "mod", "edit", "-json")
	show.Dir = dir
	show.Env = append(os.Environ(), "GOWORK=off")
	out, err := show.Output()
	if err != nil {
		t.Fatalf("go mod edit -json in %s: %v", dir, err)
	}
	var f modFile
	if err := json.Unmarshal(out, &f); err != nil {
		t.Fatalf("go mod edit -json in %s: %v", dir, err)
	}
	return f
}

// Adopt gives the module in dir (its go.mod already naming it and
// replacing Assay with root) the requirements, excludes and replacements
// of the main module at root, and root's go.sum. The two go.mod files
// must declare one go version: a second module's lower go line (go 1.26
// is below go 1.26.0) would be raised by the go command, which loads the
// whole module graph to do so.
func Adopt(t testing.TB, dir, root string) {
	t.Helper()
	bin := goBin(t)
	main := readModFile(t, bin, root)
	if second := readModFile(t, bin, dir); second.Go != main.Go {
		t.Fatalf("%s/go.mod says go %s, the main module go %s: the go command would raise it, loading the whole module graph", dir, second.Go, main.Go)
	}
	args := append([]string{"mod", "edit"}, adoptArgs(main, root)...)
	edit := exec.Command(bin, args...)
	edit.Dir = dir
	edit.Env = append(os.Environ(), "GOWORK=off")
	if out, err := edit.CombinedOutput(); err != nil {
		t.Fatalf("go mod edit in %s: %v\n%s", dir, err, out)
	}
	sums, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.sum"), sums, 0o644); err != nil {
		t.Fatal(err)
	}
}

// adoptArgs are the go mod edit flags that give a module main's
// requirements, excludes and replacements.
func adoptArgs(main modFile, root string) []string {
	var args []string
	for _, r := range main.Require {
		args = append(args, "-require="+modAt(r))
	}
	for _, x := range main.Exclude {
		args = append(args, "-exclude="+modAt(x))
	}
	for _, r := range main.Replace {
		args = append(args, "-replace="+modAt(r.Old)+"="+replacementIn(root, r.New))
	}
	return args
}

// modAt is a module path, @version when it has one.
func modAt(m modVersion) string {
	if m.Version == "" {
		return m.Path
	}
	return m.Path + "@" + m.Version
}

// replacementIn is a replacement's target: a replacement without a
// version is a directory, relative to root, not to the adopting module.
func replacementIn(root string, m modVersion) string {
	if m.Version == "" && !filepath.IsAbs(m.Path) {
		return filepath.Join(root, m.Path)
	}
	return modAt(m)
}

// Go runs the go command in dir against the module cache only and
// returns its combined output. TMPDIR is a directory of the test's own,
// so what a run keeps (a failing suite's run directories) goes with it.
func Go(t testing.TB, dir string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(goBin(t), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOSUMDB=off", "GOWORK=off", "TMPDIR="+t.TempDir())
	out, err := cmd.CombinedOutput()
	return string(out), err
}
