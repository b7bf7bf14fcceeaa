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
// changes FoundryHead does not hold: modified, staged or untracked files
// (ignored ones aside, so run directories under an ignored runs/ do not
// count). It is false outside a checkout or without git.
func FoundryModified(ctx context.Context, path string) bool {
	dir := path
	if st, err := os.Stat(path); err == nil && !st.IsDir() {
		dir = filepath.Dir(path)
	}
	cmd := exec.CommandContext(ctx, "git", "-C", dir, "status", "--porcelain")
	cmd.Env = append(filterEnv(os.Environ(), "GIT_DIR=", "GIT_WORK_TREE="), "GIT_TERMINAL_PROMPT=0")
	out, err := cmd.Output()
	return err == nil && len(strings.TrimSpace(string(out))) > 0
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
