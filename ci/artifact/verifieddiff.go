package artifact

import (
	"context"

	"github.com/algal-assay/assay/ci/diff"
)

// VerifiedDiff verifies the PR-check artifact in dir, each side held to
// its commit as listed in the repository repoDir, and compares its two
// sides (`assay ci diff --artifact`). Evidence that does not verify
// gives no diff (d is nil): failures lists why, one line each.
func VerifiedDiff(ctx context.Context, dir, repoDir string, allowEmpty bool) (d *diff.Diff, failures []string, err error) {
	a, err := Open(dir)
	if err != nil {
		return nil, nil, err
	}
	checked, err := a.Verify(ctx, VerifyOptions{Tree: GitTree(repoDir), AllowEmpty: allowEmpty})
	if err != nil {
		return nil, nil, err
	}
	if !checked.OK() {
		return nil, checked.Failures(dir), nil
	}
	d, err = a.Diff(ctx, checked, diff.Options{BaseLabel: "base", HeadLabel: "head"})
	return d, nil, err
}
