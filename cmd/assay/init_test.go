package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/algal-assay/assay/ci/scaffold"
	"github.com/algal-assay/assay/internal/secondmodule"
)

// assay init's scaffold passes `assay run` and `go test ./suites/...` at
// once, in a fresh directory that uses Assay as a module.
func TestInitScaffoldPassesAtOnce(t *testing.T) {
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "My Organisms")
	code, out, errb := runCLI(t, "init", dir, "--replace", repo)
	if code != exitOK {
		t.Fatalf("init: exit %d\n%s%s", code, out, errb)
	}
	for _, f := range []string{
		"go.mod", ".gitignore",
		"organisms/review-sentiment.algal.json", "organisms/always-positive.algal.json",
		"suites/review-sentiment.bench.yaml", "suites/review-sentiment.foundry.yaml", "suites/suite_test.go",
		".github/workflows/assay-pr.yml", ".github/workflows/assay-comment.yml",
	} {
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(f))); err != nil {
			t.Errorf("init did not write %s", f)
		}
		if !strings.Contains(out, "  "+f+"\n") {
			t.Errorf("init's listing lacks %s", f)
		}
	}
	// What assay run and assay ci pr write stays out of `git add -A`.
	if ignore, _ := os.ReadFile(filepath.Join(dir, ".gitignore")); !strings.Contains(string(ignore), "\n/runs/\n/.algal/\n") || !strings.Contains(string(ignore), "\n/out/\n") {
		t.Errorf(".gitignore does not cover runs/, .algal/ and out/:\n%s", ignore)
	}
	mod, _ := os.ReadFile(filepath.Join(dir, "go.mod"))
	// The go line is Assay's own: a lower one would be raised by the
	// user's first go mod tidy, rewriting the scaffold.
	if own, _ := os.ReadFile(filepath.Join(repo, "go.mod")); !strings.Contains(string(own), "\ngo "+scaffold.GoVersion+"\n") {
		t.Errorf("the scaffold's go line (go %s) is not Assay's own:\n%s", scaffold.GoVersion, own)
	}
	for _, want := range []string{"module example.com/my-organisms\n", "\ngo " + scaffold.GoVersion + "\n", "require github.com/algal-assay/assay v0.0.0\n",
		"tool github.com/algal-assay/assay/cmd/assay\n", "replace github.com/algal-assay/assay => " + filepath.ToSlash(repo) + "\n"} {
		if !strings.Contains(string(mod), want) {
			t.Errorf("go.mod lacks %q:\n%s", want, mod)
		}
	}

	// assay run passes on the scaffold as written.
	t.Chdir(dir)
	if code, out, errb = runCLI(t, "run"); code != exitOK {
		t.Fatalf("assay run on the scaffold: exit %d\n%s%s", code, out, errb)
	}
	if !strings.Contains(out, "all 2 workloads passed") {
		t.Errorf("assay run:\n%s", out)
	}

	// A second init refuses to replace anything.
	if code, _, errb = runCLI(t, "init", dir); code != exitError || !strings.Contains(errb, "init would replace .github/workflows/assay-comment.yml") {
		t.Errorf("second init: exit %d %s", code, errb)
	}

	if testing.Short() {
		return
	}
	// The suite file and go.mod work as a module: go test, and assay as a
	// go tool. A user's `go mod tidy` writes the requirements and go.sum
	// from the network; here Assay's own stand in for them, so nothing
	// beyond what this module's own build put in the module cache is read.
	secondmodule.Adopt(t, dir, repo)
	goOffline := func(args ...string) string {
		t.Helper()
		out, err := secondmodule.Go(t, dir, args...)
		if err != nil {
			t.Fatalf("go %v in %s: %v\n%s", args, dir, err, out)
		}
		return out
	}
	if got := goOffline("test", "./suites/..."); !strings.Contains(got, "ok  \texample.com/my-organisms/suites") {
		t.Errorf("go test ./suites/...:\n%s", got)
	}
	// The suite file's comment gives the command that shows the
	// measurements, and it does.
	const verbose = "go test -v ./suites/... -ginkgo.v"
	if suite, _ := os.ReadFile(filepath.Join(dir, "suites", "suite_test.go")); !strings.Contains(string(suite), verbose) {
		t.Errorf("the scaffold's suite file does not give `%s`:\n%s", verbose, suite)
	}
	if got := goOffline(strings.Fields(verbose)[1:]...); !strings.Contains(got, "effect calls") || !strings.Contains(got, "agent calls") || !strings.Contains(got, "checked receipts") {
		t.Errorf("%s does not show the bench's and the foundry's measurements:\n%s", verbose, got)
	}
	if got := goOffline("tool", "assay", "version"); !strings.Contains(got, "contracts: algal.organism.v1") {
		t.Errorf("go tool assay version:\n%s", got)
	}
	// The workflows lint clean (actionlint through the module proxy, as
	// the repository's own workflows are checked).
	lint := exec.Command("go", "run", "github.com/rhysd/actionlint/cmd/actionlint@v1.7.12", "-no-color",
		".github/workflows/assay-pr.yml", ".github/workflows/assay-comment.yml")
	lint.Dir = dir
	lint.Env = append(os.Environ(), "GOFLAGS=", "GOWORK=off")
	if got, err := lint.CombinedOutput(); err != nil {
		t.Errorf("actionlint: %v\n%s", err, got)
	}
}

// In a directory that already is a module, init leaves go.mod alone and
// says how to add Assay.
func TestInitInAnExistingModule(t *testing.T) {
	dir := t.TempDir()
	putFile(t, dir, "go.mod", "module example.com/mine\n\ngo 1.26\n")
	code, out, errb := runCLI(t, "init", dir)
	if code != exitOK {
		t.Fatalf("exit %d %s", code, errb)
	}
	if mod, _ := os.ReadFile(filepath.Join(dir, "go.mod")); string(mod) != "module example.com/mine\n\ngo 1.26\n" {
		t.Errorf("go.mod changed:\n%s", mod)
	}
	if !strings.Contains(out, "go get -tool github.com/algal-assay/assay/cmd/assay") {
		t.Errorf("no go get -tool hint:\n%s", out)
	}
	if code, _, _ := runCLI(t, "init", t.TempDir(), "--module", "x", "--replace", dir); code != exitOK {
		t.Errorf("flags for a new go.mod: exit %d", code)
	}
	if code, _, _ := runCLI(t, "init", dir, "--module", "x"); code != exitError {
		t.Errorf("--module with an existing go.mod: exit %d", code)
	}
}
