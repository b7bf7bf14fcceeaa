package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/algal-assay/assay/ci/comment"
	ghci "github.com/algal-assay/assay/ci/github"
	"github.com/algal-assay/assay/ci/prcheck"
	"github.com/spf13/cobra"
)

type ciPRFlags struct {
	baseRef, artifact, archive, dir string
	concurrency                     int
	post                            bool
	record                          string
	// made: runs made beforehand (ci merge of sharded runs).
	baseRuns, baseStore, headRuns, headStore string
	allowEmpty                               bool
}

func newCIPRCmd(c *cli) *cobra.Command {
	var f ciPRFlags
	cmd := &cobra.Command{
		Use:   "pr [--base-ref REF] [--artifact DIR] [PATH...]",
		Short: "The whole pull-request check: run base and head, verify, diff, write the comment artifact",
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.concurrency < 0 {
				return usagef("ci pr: --concurrency must not be negative")
			}
			made, err := prcheck.MadeRunsOf(f.baseRuns, f.baseStore, f.headRuns, f.headStore)
			if err != nil {
				return usagef("ci pr: %v", err)
			}
			return c.ciPR(cmd.Context(), f, made, args)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.baseRef, "base-ref", "", "git `REF` of the base (default origin/$GITHUB_BASE_REF)")
	fl.StringVar(&f.artifact, "artifact", "out/"+prcheck.ArtifactName, "artifact `DIR` to write")
	fl.StringVar(&f.archive, "archive", "", "receipt archive `DIR` (default receipts/ if present; - for none)")
	fl.StringVar(&f.dir, "repo-dir", ".", "repository working tree `DIR`")
	fl.IntVar(&f.concurrency, "concurrency", 0, "cases in flight per workload (0: one per CPU, at least two)")
	fl.StringVar(&f.record, "record", "none", "live backends at the head: none (the archive answers; always in CI), missing or all")
	fl.StringVar(&f.baseRuns, "base-runs", "", "runs root `DIR` of the base, made beforehand (e.g. by ci merge)")
	fl.StringVar(&f.baseStore, "base-store", "", "store `DIR` of the --base-runs")
	fl.StringVar(&f.headRuns, "head-runs", "", "runs root `DIR` of the head, made beforehand (e.g. by ci merge)")
	fl.StringVar(&f.headStore, "head-store", "", "store `DIR` of the --head-runs")
	fl.BoolVar(&f.allowEmpty, "allow-empty", false, "a head with no workloads under the paths passes (otherwise it fails: a check of nothing proves nothing)")
	fl.BoolVar(&f.post, "post", false, "also post the comment (same-repository pull requests; needs GITHUB_TOKEN with pull-requests: write)")
	return cmd
}

// ciPR runs the check with the token redacted, in every form engine/redact
// knows, from everything it prints, the job summary, the comment it posts
// and the error it returns, as ci comment does: the evidence and the API's
// answers can quote it, and a public repository's log and summary are
// public. (The artifact's files are its evidence's renderings, byte for
// byte: see prcheck.Options.Redact.)
func (c *cli) ciPR(ctx context.Context, f ciPRFlags, made *prcheck.MadeRuns, paths []string) error {
	red := ghci.NewRedactor(os.Getenv("GITHUB_TOKEN"))
	rc := *c
	out, errw := red.Writer(c.stdout), red.Writer(c.stderr)
	rc.stdout, rc.stderr = out, errw
	err := rc.checkPR(ctx, f, made, paths, red)
	if ferr := errors.Join(out.Flush(), errw.Flush()); err == nil {
		err = ferr
	}
	var rej rejection
	if errors.As(err, &rej) {
		return err // a "no" already reported on stdout, through the redactor
	}
	return red.Error(err)
}

func (c *cli) checkPR(ctx context.Context, f ciPRFlags, made *prcheck.MadeRuns, paths []string, red *ghci.Redactor) error {
	record, _, err := liveFlags{record: f.record, archive: "-"}.resolve()
	if err != nil {
		return err
	}
	ctx, stop := interruptible(ctx)
	defer stop()
	res, err := prcheck.Run(ctx, prcheck.Options{
		Made:   made,
		Record: record,
		Dir:    f.dir, BaseRef: f.baseRef, Paths: paths, Archive: f.archive, Artifact: f.artifact,
		EventPath: os.Getenv("GITHUB_EVENT_PATH"), StepSummary: os.Getenv("GITHUB_STEP_SUMMARY"),
		Concurrency: f.concurrency, Log: c.stderr, AllowEmpty: f.allowEmpty,
		Redact: red.String,
	})
	if err != nil {
		return err
	}
	summary := res.Summary()
	if f.post {
		posted, err := comment.PostRedacted(ctx, c.stdout, res.PR, res.Comment, red)
		if err != nil {
			return err
		}
		summary["comment"] = posted
	}
	out, _ := json.Marshal(summary)
	fmt.Fprintf(c.stdout, "%s\n", out)
	if res.Failed {
		return reported(fmt.Errorf("the PR check failed: %s", res.FailureReason()))
	}
	return nil
}

// interruptible cancels ctx on SIGINT or SIGTERM (Ctrl-C, a cancelled
// Actions job), so a check stops through its error path and removes its
// base worktree and temporary directories instead of dying with them in
// place. stop restores the default handling.
func interruptible(ctx context.Context) (context.Context, context.CancelFunc) {
	if ctx == nil {
		ctx = context.Background()
	}
	return signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
}
