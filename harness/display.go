package harness

import (
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// displayPath names a workload file in messages and positions, and so in
// the gate.json and summary.md a run writes: relative to the root of the
// git work tree that holds it, so one workload reads the same whatever
// directory assay ran from, and the base and head work trees of a PR check
// name their files alike. Outside a git work tree the path stays as given.
// DisplayPath is how the harness names p in messages and positions:
// relative to the root of the git work tree holding it, else as given.
// Callers that strip a tree's prefix from messages strip this form too.
func DisplayPath(p string) string { return displayPath(p) }

func displayPath(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	root := workTreeRoot(filepath.Dir(abs))
	if root == "" {
		return p
	}
	rel, err := filepath.Rel(root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return p
	}
	return filepath.ToSlash(rel)
}

// roots caches the work-tree root per directory ("" outside git): a suite
// loads many files from few directories.
var roots sync.Map

func workTreeRoot(dir string) string {
	if v, ok := roots.Load(dir); ok {
		return v.(string)
	}
	root := ""
	if out, err := exec.Command("git", "-C", dir, "rev-parse", "--show-toplevel").Output(); err == nil {
		root = strings.TrimSpace(string(out))
		if real, err := filepath.EvalSymlinks(root); err == nil {
			root = real
		}
	}
	roots.Store(dir, root)
	return root
}
