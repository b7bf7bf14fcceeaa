package workload

import (
	"io/fs"
	"os"
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
	// A symlinked workload file is named by its target, as before; the
	// directories above it are left to git (workTreePrefix).
	if fi, err := os.Lstat(abs); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			abs = real
		}
	}
	prefix, ok := workTreePrefix(filepath.Dir(abs))
	if !ok {
		return p
	}
	return prefix + filepath.Base(abs)
}

// prefixes caches workTreePrefix per directory: a suite loads many files
// from few directories.
var prefixes sync.Map

type treePrefix struct {
	prefix string
	ok     bool
}

// workTreePrefix is dir's path inside the git work tree that holds it,
// with a trailing slash ("" at the tree's root; ok false outside git).
// Git computes it from the directory's real path, so no symlink in the
// directories above needs resolving here: resolving them would stat the
// root of the tree, and make every test that names a workload depend on
// the root directory's modification time, which changes whenever
// anything is created there (the first `assay run` creating runs/ and
// .algal/), so go test's cache would never survive the main job.
func workTreePrefix(dir string) (string, bool) {
	if v, ok := prefixes.Load(dir); ok {
		t := v.(treePrefix)
		return t.prefix, t.ok
	}
	var t treePrefix
	if out, err := exec.Command("git", "-C", dir, "rev-parse", "--show-prefix").Output(); err == nil {
		t = treePrefix{prefix: strings.TrimSuffix(string(out), "\n"), ok: true}
	}
	prefixes.Store(dir, t)
	return t.prefix, t.ok
}
