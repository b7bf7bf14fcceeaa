package artifact

import (
	"context"
	"fmt"
	"strings"

	"github.com/algal-assay/assay/ci/diff"
	ghci "github.com/algal-assay/assay/ci/github"
)

// CommentOptions are the trusted facts the comment states besides the
// evidence: they come from the workflow_run event, never from the
// artifact.
type CommentOptions struct {
	Marker string
	// Conclusion is workflow_run.conclusion ("" when unknown).
	Conclusion string
	// HeadSHA is the commit the check ran on (workflow_run.head_sha).
	HeadSHA string
	// Pointer says where the full report is.
	Pointer string
	// Tree lists a commit's files (ci/github.CommitBlobs): each side's
	// workloads are listed at its commit, and its tree confirmed against
	// it. The head commit is HeadSHA when set; BaseSHA, when set, is the
	// base the pull request names.
	Tree    Tree
	BaseSHA string
	// AllowEmpty accepts a head commit without workloads.
	AllowEmpty bool
	// Paths are the check's workload paths as the workflow configures
	// them (VerifyOptions.Paths).
	Paths []string
	// Command, BlobBase and Drawn end the comment (ci/diff.Footer): the
	// command that reproduces the check, the URL prefix of the head's
	// files, and where a pr.html this binary rendered is (never the
	// check's own upload). "" leaves each out.
	Command, BlobBase, Drawn string
}

// Comment is a composed comment and what it says.
type Comment struct {
	Body string
	// Verified reports whether the artifact's evidence verified; Passed
	// whether, re-derived from it, every head workload passes.
	Verified, Passed bool
	// Failures are why the evidence does not verify (empty when it does).
	Failures []string
	// Files are this binary's rendering of what it concluded, the trusted
	// report for reviewers: diff.json, report.md and pr.html (Comment is
	// Body when the evidence verifies).
	Files *Rendered
}

// ComposeComment builds the sticky comment from the artifact at dir alone
// and with this binary: the artifact is opened (layout and bounds),
// verified (every run directory of both sides against its own store and
// workloads, re-deriving every verdict), and only then diffed and rendered
// with Render, as the check renders its own. Nothing the pull request
// wrote as text (comment.md, report.md, diff.json, pr.html) is read. When the evidence does not
// verify, the comment says Fail and why, and makes no other claim.
func ComposeComment(ctx context.Context, dir string, o CommentOptions) (*Comment, error) {
	c := &Comment{}
	a, err := Open(dir)
	if err != nil {
		c.Failures = append(c.Failures, "the artifact cannot be read as evidence: "+err.Error())
		return c.unverified(dir, o)
	}
	checked, err := a.Verify(ctx, VerifyOptions{Tree: o.Tree, HeadCommit: o.HeadSHA, BaseCommit: o.BaseSHA, AllowEmpty: o.AllowEmpty, Paths: o.Paths})
	if err != nil {
		return nil, err // a host fault, not the artifact's
	}
	if !checked.OK() {
		c.Failures = checked.Failures(dir)
		return c.unverified(dir, o)
	}
	d, err := a.Diff(ctx, checked, diff.Options{BaseLabel: "base", HeadLabel: headLabel(o.HeadSHA)})
	if err != nil {
		c.Failures = append(c.Failures, err.Error())
		return c.unverified(dir, o)
	}
	return c.verified(a, checked, d, o)
}

// verified renders the comment of evidence that verifies.
func (c *Comment) verified(a *Artifact, checked *Checked, d *diff.Diff, o CommentOptions) (*Comment, error) {
	c.Verified, c.Passed = true, d.Verdict.Passed
	n := len(checked.Base.Results) + len(checked.Head.Results)
	how := fmt.Sprintf("Re-verified by the comment workflow with the default branch's assay: %d run directories, every file re-derived from their reports and workload files, every workload at head commit %s and base commit %s listed from the repository and its evidence required.",
		n, code(shortCommit(a.commit(Head, VerifyOptions{HeadCommit: o.HeadSHA}))), code(shortCommit(a.commit(Base, VerifyOptions{BaseCommit: o.BaseSHA}))))
	// The same rendering as the check's, from this binary's diff of the
	// verified evidence and the workflow's own presentation; the check's
	// uploaded files are not read.
	files, err := Render(d, Presentation{Pointer: o.Pointer, Command: o.Command, BlobBase: o.BlobBase, Drawn: o.Drawn}, o.Marker, trusted(o, how, d.Verdict.Passed))
	if err != nil {
		return nil, err
	}
	c.Body, c.Files = string(files.Comment), files
	return c, nil
}

// unverified renders the comment of evidence that does not verify: no
// result from it is reported, only its failures.
func (c *Comment) unverified(dir string, o CommentOptions) (*Comment, error) {
	d := &diff.Diff{Base: "base", Head: headLabel(o.HeadSHA), Workloads: []*diff.Workload{}}
	for _, f := range c.Failures {
		d.Problems = append(d.Problems, "evidence does not verify: "+strings.ReplaceAll(f, dir+"/", ""))
	}
	d.Settle()
	how := trusted(o, "**The check's evidence does not verify**, so none of its results is reported here: the comment workflow re-verified the artifact with the default branch's assay and found the problems above.", false)
	sections := diff.Sections(d, diff.RenderOptions{Pointer: o.Pointer})[:1]
	sections[0].Markdown += "\n" + how
	c.Body = ghci.Compose(o.Marker, sections, ghci.MaxCommentChars, o.Pointer)
	files, err := Render(d, Presentation{Pointer: o.Pointer}, o.Marker, how)
	if err != nil {
		return nil, err
	}
	c.Files = files
	return c, nil
}

func code(s string) string { return "`" + strings.ReplaceAll(s, "`", "'") + "`" }

func headLabel(sha string) string {
	if len(sha) >= 12 {
		return "head " + sha[:12]
	}
	return "head"
}

// trusted is the paragraph only the comment workflow can write: how the
// evidence was checked, and the check run's conclusion as GitHub reports
// it.
func trusted(o CommentOptions, how string, passed bool) string {
	concl := o.Conclusion
	if concl == "" {
		concl = "unknown"
	}
	s := how + " The check run concluded **" + concl + "**."
	if passed && o.Conclusion != "success" {
		s += " It did not succeed although its evidence passes: its log says why."
	}
	return s + "\n"
}
