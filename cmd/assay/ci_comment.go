package main

import (
	"github.com/algal-assay/assay/ci/artifact"
	"github.com/algal-assay/assay/ci/comment"
	ghci "github.com/algal-assay/assay/ci/github"
	"github.com/algal-assay/assay/ci/prcheck"
	"github.com/spf13/cobra"
)

// ciCommentFlags are comment.Options as flags.
type ciCommentFlags comment.Options

func newCICommentCmd(c *cli) *cobra.Command {
	var f ciCommentFlags
	cmd := &cobra.Command{
		Use:   "comment (--body FILE | --from-artifact DIR) [--repo OWNER/NAME] [--pr N]",
		Short: "Post the PR-check report as one sticky pull-request comment",
		Long: `Post a Markdown report as a single pull-request comment, found again by a
hidden marker and edited in place on later runs. A report over GitHub's
65,536-character limit is cut to fit, keeping its leading sections.

The repository comes from --repo, else GITHUB_REPOSITORY; the pull request from
--pr, else the event payload at GITHUB_EVENT_PATH, or from the artifact with
--from-artifact (pr.json or pr-number, written by the check job).
GITHUB_TOKEN authenticates; GITHUB_API_URL selects the API.

With --from-artifact nothing the check job wrote as text is posted: this
binary verifies the artifact's evidence itself (as 'assay ci verify DIR'
does), re-derives every verdict from it and the workload files it carries,
and composes the comment; when the evidence does not verify, the comment says
Fail and why. It states the check run's conclusion from the workflow_run
event, and comments only when the pull request's head is the commit the run
checked.

The check's own renderings in the artifact (comment.md, report.md, diff.json,
pr.html) are pull-request output: they are never read, posted or linked.
With --out DIR this binary writes its own diff.json, report.md and pr.html,
rendered from the evidence it verified (the same renderer as the check's),
redacted like the comment, for the workflow to upload as the
` + artifact.VerifiedName + ` artifact; the comment's drawn-report pointer then names that
artifact of this run. 'assay ci verify' of the check's artifact holds its
uploaded renderings to what the evidence re-derives.

When the token may not comment (403/404, e.g. a pull request from a fork),
the report goes to the job log and to $GITHUB_STEP_SUMMARY instead and the
command still exits 0.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := f.validate(); err != nil {
				return err
			}
			return comment.Run(comment.Options(f), c.stdout, c.stderr)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.Body, "body", "", "Markdown report `FILE`")
	fl.StringVar(&f.Artifact, "from-artifact", "", "artifact `DIR` from the check job (comment.md, pr.json or pr-number)")
	fl.StringVar(&f.Repo, "repo", "", "repository `OWNER/NAME` (default: GITHUB_REPOSITORY)")
	fl.IntVar(&f.PR, "pr", 0, "pull request number `N` (default: from the event payload)")
	fl.StringVar(&f.Key, "key", ghci.DefaultKey, "marker key; workflows with different keys keep separate comments")
	fl.BoolVar(&f.AllowEmpty, "allow-empty", false, "with --from-artifact: accept a head commit with no workloads under the check's paths (otherwise a failure: a check of nothing proves nothing)")
	fl.StringSliceVar(&f.Paths, "paths", prcheck.DefaultPaths, "with --from-artifact: the check's workload `PATHS` (the workloads at each commit under them need evidence; the artifact must have checked exactly these)")
	fl.StringVar(&f.Out, "out", "", "with --from-artifact: write this binary's diff.json, report.md and pr.html, rendered from the verified evidence, into `DIR`")
	fl.StringVar(&f.Pointer, "pointer", "", "text appended when the report is cut (default: points at the job summary and artifact of the run)")
	return cmd
}

func (f ciCommentFlags) validate() error {
	switch {
	case (f.Body == "") == (f.Artifact == ""):
		return usagef("ci comment: give exactly one of --body FILE and --from-artifact DIR")
	case f.Out != "" && f.Artifact == "":
		return usagef("ci comment: --out needs --from-artifact (it writes what this binary rendered from the artifact's evidence)")
	case f.Artifact != "" && f.PR != 0:
		return usagef("ci comment: --pr cannot be used with --from-artifact (the artifact names the pull request)")
	case f.PR < 0:
		return usagef("ci comment: --pr %d: want a positive number", f.PR)
	}
	if _, err := ghci.Marker(f.Key); err != nil {
		return usagef("ci comment: --key: %v", err)
	}
	if f.Repo != "" {
		if _, _, err := ghci.ParseRepo(f.Repo); err != nil {
			return usagef("ci comment: --repo: %v", err)
		}
	}
	return nil
}
