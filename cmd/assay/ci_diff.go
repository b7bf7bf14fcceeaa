package main

import (
	"context"
	"fmt"

	"github.com/algal-assay/assay/ci/artifact"
	"github.com/algal-assay/assay/ci/diff"
	"github.com/algal-assay/assay/ci/prcheck"
	"github.com/algal-assay/assay/engine/store"
	"github.com/spf13/cobra"
)

type ciDiffFlags struct {
	base, head, baseRef, archive, baseTree, headTree, format, out, dir string
	store, baseStore, artifactDir                                      string
	concurrency                                                        int
	allowEmpty                                                         bool
}

func newCIDiffCmd(c *cli) *cobra.Command {
	var f ciDiffFlags
	cmd := &cobra.Command{
		Use:   "diff (--base DIR --head DIR | --base-ref REF [PATH...]) [--format md|json] [--out FILE]",
		Short: "Compare the runs of a change's base and head: Pareto sets, promotions, regressions, replays",
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.validate(args); err != nil {
				return err
			}
			return c.ciDiff(cmd.Context(), f, args)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.base, "base", "", "runs root `DIR` of the base")
	fl.StringVar(&f.head, "head", "", "runs root `DIR` of the head")
	fl.StringVar(&f.baseRef, "base-ref", "", "git `REF` to run the base at (in a temporary worktree)")
	fl.StringVar(&f.dir, "repo-dir", ".", "repository working tree `DIR` for --base-ref")
	fl.StringVar(&f.archive, "archive", "", "receipt archive `DIR` (default receipts/ if present; - for none)")
	fl.StringVar(&f.baseTree, "base-tree", "", "with --base/--head: source tree `DIR` of the base: its workloads, and archive replays (default: the head tree's workloads)")
	fl.StringVar(&f.headTree, "head-tree", ".", "with --base/--head: source tree `DIR` of the head, whose workloads the head runs are re-derived against")
	fl.StringVar(&f.store, "dir", store.DefaultDir, "with --base/--head: store `DIR` holding the runs' receipts and manifests")
	fl.StringVar(&f.baseStore, "base-dir", "", "with --base/--head: store `DIR` of the base runs (default: --dir)")
	fl.StringVar(&f.format, "format", "md", "output format: md or json")
	fl.StringVar(&f.out, "out", "", "write to `FILE` instead of stdout")
	fl.IntVar(&f.concurrency, "concurrency", 0, "with --base-ref: cases in flight per workload")
	fl.BoolVar(&f.allowEmpty, "allow-empty", false, "comparing no workloads is not a failure (otherwise it is: nothing compared is no Pass)")
	fl.StringVar(&f.artifactDir, "artifact", "", "compare the base and head of a PR-check artifact `DIR` (verified first, against its own stores and workloads)")
	return cmd
}

func (f ciDiffFlags) validate(args []string) error {
	if f.artifactDir != "" && (f.baseRef != "" || f.base != "" || f.head != "" || len(args) > 0) {
		return usagef("ci diff: --artifact DIR takes no --base, --head, --base-ref or paths")
	}
	if f.format != "md" && f.format != "json" {
		return usagef("ci diff: --format %q: want md or json", f.format)
	}
	if f.artifactDir != "" {
		return nil
	}
	return f.validateSides(args)
}

// validateSides checks the flags naming the two sides: --base-ref, or
// --base and --head.
func (f ciDiffFlags) validateSides(args []string) error {
	switch {
	case f.baseRef != "" && (f.base != "" || f.head != ""):
		return usagef("ci diff: give --base-ref REF or --base DIR --head DIR, not both")
	case f.baseRef == "" && (f.base == "" || f.head == ""):
		return usagef("ci diff: give --base DIR and --head DIR, or --base-ref REF")
	case f.baseRef == "" && len(args) > 0:
		return usagef("ci diff: workload paths are only used with --base-ref")
	case f.concurrency < 0:
		return usagef("ci diff: --concurrency must not be negative")
	}
	return nil
}

func (c *cli) ciDiff(ctx context.Context, f ciDiffFlags, args []string) error {
	if ctx == nil {
		ctx = context.Background()
	}
	var d *diff.Diff
	var err error
	switch {
	case f.artifactDir != "":
		d, err = c.artifactDiff(ctx, f)
	case f.baseRef != "":
		ctx, stop := interruptible(ctx)
		defer stop()
		var s *prcheck.Sides
		s, err = prcheck.RunSides(ctx, prcheck.SideOptions{Dir: f.dir, BaseRef: f.baseRef, Paths: args,
			Archive: f.archive, Concurrency: f.concurrency, Log: c.stderr})
		if err == nil {
			defer s.Close()
			d = s.Diff
		}
	default:
		d, err = diff.CompareDirs(ctx, diff.Dirs{Base: f.base, Head: f.head, BaseTree: f.baseTree, HeadTree: f.headTree,
			Store: f.store, BaseStore: f.baseStore, Archive: f.archive, AllowEmpty: f.allowEmpty})
	}
	if err != nil {
		return err
	}
	return c.writeDiff(d, f.format, f.out)
}

// artifactDiff verifies a PR-check artifact and compares its two sides;
// evidence that does not verify is a "no", each failure on stderr.
func (c *cli) artifactDiff(ctx context.Context, f ciDiffFlags) (*diff.Diff, error) {
	d, failures, err := artifact.VerifiedDiff(ctx, f.artifactDir, f.dir, f.allowEmpty)
	if err != nil {
		return nil, err
	}
	if d == nil {
		for _, l := range failures {
			fmt.Fprintf(c.stderr, "FAIL %s\n", l)
		}
		return nil, reported(fmt.Errorf("the artifact's evidence does not verify"))
	}
	return d, nil
}

// writeDiff renders d as Markdown or JSON to stdout, or to the file out.
func (c *cli) writeDiff(d *diff.Diff, format, out string) error {
	b, err := diff.Render(d, format)
	if err != nil {
		return err
	}
	if out == "" {
		_, err := c.stdout.Write(b)
		return err
	}
	return diff.WriteOut(out, b)
}
