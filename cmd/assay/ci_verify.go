package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/algal-assay/assay/ci/artifact"
	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/effect"
	"github.com/algal-assay/assay/engine/store"
	"github.com/algal-assay/assay/engine/vm"
	"github.com/spf13/cobra"
)

type ciVerifyFlags struct {
	dir, tools, repoDir string
	workloads, paths    []string
	json, allowEmpty    bool
}

func newCIVerifyCmd(c *cli) *cobra.Command {
	var f ciVerifyFlags
	cmd := &cobra.Command{
		Use:   "verify [ROOT...]",
		Short: "Verify every receipt, report, budget account and run directory offline",
		RunE: func(cmd *cobra.Command, roots []string) error {
			return c.ciVerify(cmd.Context(), roots, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.dir, "dir", store.DefaultDir, "store `DIR` the evidence is verified against")
	fl.StringVar(&f.tools, "tools", "", "host tool registry `FILE` typing recorded tool effects")
	fl.BoolVar(&f.json, "json", false, "print one JSON object instead of lines")
	fl.StringVar(&f.repoDir, "repo-dir", ".", "git repository `DIR` an artifact's commits are listed in (git ls-tree)")
	fl.BoolVar(&f.allowEmpty, "allow-empty", false, "finding no evidence (or, in an artifact, no workloads at the head commit) is not a failure")
	fl.StringSliceVar(&f.paths, "paths", nil, "an artifact's check must have covered exactly these workload `PATHS` (default: the ones it names)")
	fl.StringSliceVar(&f.workloads, "workloads", []string{"."}, "workload files or directories run directories are re-derived against (comma-separated or repeated)")
	return cmd
}

func (c *cli) ciVerify(ctx context.Context, roots []string, f ciVerifyFlags) error {
	if ctx == nil {
		ctx = context.Background()
	}
	rep, err := artifact.VerifyRoots(ctx, artifact.Roots{Roots: roots, StoreDir: f.dir, Workloads: f.workloads,
		RepoDir: f.repoDir, Paths: f.paths, AllowEmpty: f.allowEmpty,
		Evidence: f.evidence})
	if err != nil {
		return err
	}
	if f.json {
		b, err := canon.Encode(rep.Value())
		if err != nil {
			return err
		}
		fmt.Fprintf(c.stdout, "%s\n", b)
	} else {
		fmt.Fprint(c.stdout, rep.Text())
	}
	w := c.stdout
	if f.json {
		w = c.stderr
	}
	if err := rep.Actions(w); err != nil {
		return err
	}
	if !rep.OK() {
		return reported(errors.New(rep.Summary()))
	}
	return nil
}

// evidence opens the store under --dir with the --tools registry. One ci
// verify is one trust scope: a receipt met again is replayed once.
func (f ciVerifyFlags) evidence() (*vm.Workbench, error) {
	wb, err := vm.NewWorkbench(f.dir)
	if err != nil {
		return nil, err
	}
	wb.Verified = &vm.VerifiedReceipts{}
	if f.tools != "" {
		if wb.Tools, err = effect.LoadTools(f.tools); err != nil {
			return nil, err
		}
	}
	return wb, nil
}
