package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The command tree is built in commands.go alone: no verb file wires itself
// in from an init function, and every verb constructor commands.go names
// exists in its own file.
func TestCommandTreeIsDeclaredInOneFile(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	initFn := regexp.MustCompile(`(?m)^func init\(\)`)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if initFn.Match(b) {
			t.Errorf("%s has an init function: add its verb to newRoot in commands.go instead", f)
		}
	}
	root := newRoot(&cli{})
	seen := map[string]bool{}
	for _, c := range root.Commands() {
		seen[c.Name()] = true
	}
	for _, verb := range []string{"check", "run", "verify", "resume", "replay", "suite", "bench", "foundry", "pack", "unpack",
		"digest", "mailbox", "init", "workloads", "expr", "ci", "record", "version"} {
		if !seen[verb] {
			t.Errorf("assay %s is missing from the command tree", verb)
		}
	}
	foundry, _, err := root.Find([]string{"foundry"})
	if err != nil {
		t.Fatal(err)
	}
	for _, sub := range []string{"verify", "inspect", "pack", "export", "search", "search-verify", "search-inspect", "search-pack"} {
		if c, _, err := foundry.Find([]string{sub}); err != nil || c == foundry {
			t.Errorf("assay foundry %s is missing", sub)
		}
	}
}
