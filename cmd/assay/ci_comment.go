package main

import (
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
		Args:  cobra.NoArgs,
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
