package runrecord

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// FoundryHead returns the commit checked out in the git repository that
// contains path (a file or directory), for the record's foundry_head. It
// returns "" (written as null) when path is outside a git checkout, when
// git is not installed, or when the repository has no commit yet: the
// record then honestly says it cannot pin the revision.
func FoundryHead(ctx context.Context, path string) string {
	dir := path
	if st, err := os.Stat(path); err == nil && !st.IsDir() {
		dir = filepath.Dir(path)
	}
	cmd := exec.CommandContext(ctx, "git", "-C", dir, "rev-parse", "--verify", "-q", "HEAD")
	// A caller's GIT_DIR would point git at some other repository.
	cmd.Env = append(filterEnv(os.Environ(), "GIT_DIR=", "GIT_WORK_TREE="), "GIT_TERMINAL_PROMPT=0")
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	head := strings.TrimSpace(string(out))
	if !commitHex.MatchString(head) {
		return ""
	}
	return head
}

// FoundryModified reports whether the git checkout that contains path has
// changes FoundryHead does not hold: modified, staged or untracked files.
// Ignored files do not count, nor do files under the exclude directories
// (the runs root the harness is writing into, which need not be ignored:
// the PR check writes its run directories inside its artifact). It is
// false outside a checkout or without git.
func FoundryModified(ctx context.Context, path string, exclude ...string) bool {
	dir := path
	if st, err := os.Stat(path); err == nil && !st.IsDir() {
		dir = filepath.Dir(path)
	}
	env := append(filterEnv(os.Environ(), "GIT_DIR=", "GIT_WORK_TREE="), "GIT_TERMINAL_PROMPT=0")
	top := exec.CommandContext(ctx, "git", "-C", dir, "rev-parse", "--show-toplevel")
	top.Env = env
	root, err := top.Output()
	if err != nil {
		return false
	}
	// Git names the root by its real path already; resolving it again
	// would stat the root directory, whose modification time then becomes
	// an input of every test that asks (see harness's workTreePrefix).
	rootDir := strings.TrimSpace(string(root))
	var skip []string
	for _, e := range exclude {
		if e == "" {
			continue // no directory (a memory store, no artifact), not the working directory
		}
		abs, err := filepath.Abs(e)
		if err != nil {
			continue
		}
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			abs = real
		}
		if rel, err := filepath.Rel(rootDir, abs); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
			skip = append(skip, filepath.ToSlash(rel))
		}
	}
	// Porcelain paths are relative to the work tree's root; listing every
	// untracked file (not just its directory) lets the exclusion match.
	cmd := exec.CommandContext(ctx, "git", "-C", dir, "status", "--porcelain", "--untracked-files=all")
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(out), "\n") {
		if len(line) < 4 {
			continue
		}
		p := strings.Trim(line[3:], `"`)
		if i := strings.Index(p, " -> "); i >= 0 {
			p = p[i+len(" -> "):]
		}
		excluded := false
		for _, s := range skip {
			if p == s || strings.HasPrefix(p, s+"/") {
				excluded = true
				break
			}
		}
		if !excluded {
			return true
		}
	}
	return false
}

func filterEnv(env []string, drop ...string) []string {
	out := env[:0:0]
	for _, kv := range env {
		keep := true
		for _, p := range drop {
			if strings.HasPrefix(kv, p) {
				keep = false
			}
		}
		if keep {
			out = append(out, kv)
		}
	}
	return out
}
