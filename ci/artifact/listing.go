package artifact

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strings"

	"github.com/algal-assay/assay/engine/fault"
)

// Tree lists the files of a commit: the git blob SHA-1 of each, by
// slash-separated path from the repository root. The trusted side lists
// a commit itself (ci/github.CommitBlobs through the API in the comment
// workflow, GitTree in a clone), so the artifact, which pull-request code
// wrote, never decides which workloads there are.
type Tree func(ctx context.Context, commit string) (map[string]string, error)

// CodeList is the code of a commit that cannot be listed.
const CodeList = "COMMIT_UNLISTED"

// lsTreeLine is one entry of `git ls-tree -r -z --full-tree`.
var lsTreeLine = regexp.MustCompile(`^[0-7]{6} (blob|commit|tree) ([0-9a-f]{40}|[0-9a-f]{64})\t(.+)$`)

// GitTree lists commits with git ls-tree in the repository that holds
// dir.
func GitTree(dir string) Tree {
	return func(ctx context.Context, commit string) (map[string]string, error) {
		if !commitPattern.MatchString(commit) {
			return nil, &fault.Error{Code: CodeList, Message: fmt.Sprintf("commit %q is not 40 lowercase hex digits", commit)}
		}
		cmd := exec.CommandContext(ctx, "git", "-C", dir, "ls-tree", "-r", "-z", "--full-tree", commit)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			msg := strings.TrimSpace(stderr.String())
			if msg == "" {
				msg = err.Error()
			}
			return nil, &fault.Error{Code: CodeList, Message: fmt.Sprintf("git ls-tree %s in %s: %s (verify in a clone that holds the commit: --repo-dir)", commit, dir, oneLine(msg))}
		}
		return parseLsTree(commit, out)
	}
}

// parseLsTree reads `git ls-tree -r -z` output: each blob's path and
// object id.
func parseLsTree(commit string, out []byte) (map[string]string, error) {
	files := map[string]string{}
	for _, e := range strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00") {
		if e == "" {
			continue
		}
		m := lsTreeLine.FindStringSubmatch(e)
		if m == nil {
			return nil, &fault.Error{Code: CodeList, Message: fmt.Sprintf("git ls-tree %s: unexpected line %q", commit, e)}
		}
		if m[1] == "blob" {
			files[m[3]] = m[2]
		}
	}
	return files, nil
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
