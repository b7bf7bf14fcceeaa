package artifact

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"syscall"

	"github.com/algal-assay/assay/ci/verify"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/vm"
)

// Roots is what `assay ci verify` checks: evidence roots that are plain
// run directories (verified against one store and the workloads) or
// PR-check artifacts (verified against their own stores and workloads).
type Roots struct {
	// Roots are the paths ("." when none were named: then finding no
	// evidence is not a failure).
	Roots []string
	// Evidence opens the store plain roots are verified against, once
	// every root is found readable; StoreDir names it. Workloads are the
	// files their runs are re-derived against.
	Evidence  func() (*vm.Workbench, error)
	StoreDir  string
	Workloads []string
	// RepoDir is the repository an artifact's commits are listed in;
	// Paths the workload paths its check must have covered.
	RepoDir string
	Paths   []string
	// AllowEmpty accepts finding no evidence (or, in an artifact, no
	// workloads at the head commit).
	AllowEmpty bool
}

// VerifyRoots verifies every root and returns the one report of them
// all. A root that cannot be read at all is an error.
func VerifyRoots(ctx context.Context, o Roots) (*verify.Report, error) {
	explicit := len(o.Roots) > 0
	roots := o.Roots
	if !explicit {
		roots = []string{"."}
	}
	for _, r := range roots {
		if _, err := os.Stat(r); err != nil {
			return nil, rootError(r, err)
		}
	}
	wb, err := o.Evidence()
	if err != nil {
		return nil, err
	}
	rep := &verify.Report{Roots: roots, Store: o.StoreDir, AllowEmpty: !explicit || o.AllowEmpty}
	var plain []string
	for _, r := range roots {
		if !IsArtifact(r) {
			plain = append(plain, r)
			continue
		}
		if err := verifyArtifactRoot(ctx, r, o, rep); err != nil {
			return nil, err
		}
	}
	if len(plain) == 0 {
		return rep, nil
	}
	ws, err := verify.LoadWorkloads(o.Workloads...)
	if err != nil {
		return nil, err
	}
	pr, err := verify.Verify(ctx, plain, verify.Options{Evidence: wb, StoreDir: o.StoreDir, AllowEmpty: rep.AllowEmpty, Workloads: ws})
	if err != nil {
		return nil, err
	}
	rep.Results = append(rep.Results, pr.Results...)
	rep.Leftovers = append(rep.Leftovers, pr.Leftovers...)
	return rep, nil
}

// verifyArtifactRoot verifies a PR-check artifact against its own stores
// and workloads alone, and holds the files the check rendered to what the
// evidence renders again.
func verifyArtifactRoot(ctx context.Context, r string, o Roots, rep *verify.Report) error {
	a, err := Open(r)
	if err != nil {
		return err
	}
	checked, err := a.Verify(ctx, VerifyOptions{Tree: GitTree(o.RepoDir), AllowEmpty: o.AllowEmpty, Paths: o.Paths})
	if err != nil {
		return err
	}
	ar := checked.Report(r)
	rendered, err := a.CheckRendered(ctx)
	if err != nil {
		return err
	}
	ar.Results = append(ar.Results, rendered...)
	rep.Results = append(rep.Results, ar.Results...)
	rep.Leftovers = append(rep.Leftovers, ar.Leftovers...)
	return nil
}

// rootError says why a root cannot be read, as a coded error (printed as
// the one-line JSON error, exit 2): it does not exist, or it is a
// symbolic link that never reaches a file (a loop).
func rootError(root string, err error) error {
	why := "cannot be read: " + err.Error()
	switch {
	case errors.Is(err, fs.ErrNotExist):
		why = "does not exist"
	case errors.Is(err, syscall.ELOOP):
		why = "is a symbolic link loop (too many levels of symbolic links)"
	}
	return &fault.Error{Code: fault.IOFailed, File: root, Message: "ci verify: root " + why}
}
