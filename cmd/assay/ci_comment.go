package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/algal-assay/assay/ci/artifact"
	ghci "github.com/algal-assay/assay/ci/github"
	"github.com/algal-assay/assay/ci/prcheck"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/spf13/cobra"
)

// postTimeout bounds the whole exchange with GitHub.
const postTimeout = 2 * time.Minute

type ciCommentFlags struct {
	body, artifact, repo, key, pointer string
	out                                string
	pr                                 int
	allowEmpty                         bool
	paths                              []string
}

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
			return c.ciComment(f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.body, "body", "", "Markdown report `FILE`")
	fl.StringVar(&f.artifact, "from-artifact", "", "artifact `DIR` from the check job (comment.md, pr.json or pr-number)")
	fl.StringVar(&f.repo, "repo", "", "repository `OWNER/NAME` (default: GITHUB_REPOSITORY)")
	fl.IntVar(&f.pr, "pr", 0, "pull request number `N` (default: from the event payload)")
	fl.StringVar(&f.key, "key", ghci.DefaultKey, "marker key; workflows with different keys keep separate comments")
	fl.BoolVar(&f.allowEmpty, "allow-empty", false, "with --from-artifact: accept a head commit with no workloads under the check's paths (otherwise a failure: a check of nothing proves nothing)")
	fl.StringSliceVar(&f.paths, "paths", prcheck.DefaultPaths, "with --from-artifact: the check's workload `PATHS` (the workloads at each commit under them need evidence; the artifact must have checked exactly these)")
	fl.StringVar(&f.out, "out", "", "with --from-artifact: write this binary's diff.json, report.md and pr.html, rendered from the verified evidence, into `DIR`")
	fl.StringVar(&f.pointer, "pointer", "", "text appended when the report is cut (default: points at the job summary and artifact of the run)")
	return cmd
}

func (f ciCommentFlags) validate() error {
	switch {
	case (f.body == "") == (f.artifact == ""):
		return usagef("ci comment: give exactly one of --body FILE and --from-artifact DIR")
	case f.out != "" && f.artifact == "":
		return usagef("ci comment: --out needs --from-artifact (it writes what this binary rendered from the artifact's evidence)")
	case f.artifact != "" && f.pr != 0:
		return usagef("ci comment: --pr cannot be used with --from-artifact (the artifact names the pull request)")
	case f.pr < 0:
		return usagef("ci comment: --pr %d: want a positive number", f.pr)
	}
	if _, err := ghci.Marker(f.key); err != nil {
		return usagef("ci comment: --key: %v", err)
	}
	if f.repo != "" {
		if _, _, err := ghci.ParseRepo(f.repo); err != nil {
			return usagef("ci comment: --repo: %v", err)
		}
	}
	return nil
}

// ciComment runs the verb with the token redacted, in every form
// engine/redact knows, from everything it prints, the comment it posts,
// the job summary it writes and the error it returns: API answers can echo
// the Authorization header, and the log of a public repository is public.
func (c *cli) ciComment(f ciCommentFlags) error {
	red := ghci.NewRedactor(os.Getenv("GITHUB_TOKEN"))
	rc := *c
	out, errw := red.Writer(c.stdout), red.Writer(c.stderr)
	rc.stdout, rc.stderr = out, errw
	err := rc.postComment(f, red)
	if ferr := errors.Join(out.Flush(), errw.Flush()); err == nil {
		err = ferr
	}
	return red.Error(err)
}

func (c *cli) postComment(f ciCommentFlags, red *ghci.Redactor) error {
	marker, _ := ghci.Marker(f.key) // validated
	ev := &ghci.Event{}
	if path := os.Getenv("GITHUB_EVENT_PATH"); path != "" {
		var err error
		if ev, err = ghci.ReadEvent(path); err != nil {
			return err
		}
	}

	repo := firstNonEmpty(f.repo, os.Getenv("GITHUB_REPOSITORY"), ev.Repo)
	if repo == "" {
		return &fault.Error{Code: ghci.CodeEvent, Message: "no repository: pass --repo OWNER/NAME or set GITHUB_REPOSITORY"}
	}
	owner, name, err := ghci.ParseRepo(repo)
	if err != nil {
		return err
	}

	var body, headSHA string
	pr := f.pr
	var art *ghci.Artifact
	if f.artifact != "" {
		if art, err = ghci.ReadArtifact(f.artifact); err != nil {
			return err
		}
		pr, headSHA = art.PR, art.HeadSHA
		if headSHA != "" && ev.RunHeadSHA != "" && headSHA != ev.RunHeadSHA {
			return &fault.Error{Code: ghci.CodeArtifact, Message: fmt.Sprintf(
				"artifact pr.json names commit %s but the triggering run checked %s", headSHA, ev.RunHeadSHA)}
		}
		if ev.RunHeadSHA != "" {
			headSHA = ev.RunHeadSHA
		}
	} else {
		if body, err = ghci.ReadBody(f.body); err != nil {
			return err
		}
		if pr == 0 {
			pr = ev.PR
		}
		if pr == 0 {
			return &fault.Error{Code: ghci.CodeEvent, Message: "no pull request number: pass --pr N, or run on a pull_request event (GITHUB_EVENT_PATH)"}
		}
	}

	client, err := ghci.NewClient(os.Getenv("GITHUB_TOKEN"), os.Getenv("GITHUB_API_URL"), nil)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), postTimeout)
	defer cancel()
	target := fmt.Sprintf("%s/%s#%d", owner, name, pr)

	// In the workflow_run job the artifact's PR number comes from PR code;
	// commenting only when that PR's head is the commit the run checked
	// stops a pull request from steering the report onto another one.
	fallback, baseSHA := "", ""
	if f.artifact != "" && ev.RunHeadSHA != "" {
		head, base, err := ghci.PullRefs(ctx, client, owner, name, pr)
		baseSHA = base
		switch {
		case ghci.CannotComment(err):
			fallback = err.Error()
		case err != nil:
			return err
		case head != ev.RunHeadSHA:
			fallback = fmt.Sprintf("its head is %s but this report is for %s (a newer push, or an artifact naming the wrong pull request); not commenting", head, ev.RunHeadSHA)
		}
	}

	if art != nil {
		// The comment is composed here, by this binary, from the
		// artifact's evidence; the comment.md the pull request's code
		// wrote is never posted. In the workflow_run job the head tree's
		// files (the workloads whose gates decide the verdict) are
		// confirmed against the commit the run checked.
		// Which workloads need evidence is read from the repository at
		// each side's commit (the git trees API), never from the artifact.
		opts := artifact.CommentOptions{Marker: marker, Conclusion: ev.RunConclusion, HeadSHA: headSHA, BaseSHA: baseSHA, Pointer: pointerText(f.pointer, f.out != "", ev), AllowEmpty: f.allowEmpty, Paths: f.paths}
		opts.Command, opts.BlobBase = commentFooter(owner+"/"+name, headSHA)
		if f.out != "" {
			opts.Drawn = "`" + artifact.HTMLFile + "` in the " + verifiedArtifact()
		}
		opts.Tree = func(ctx context.Context, commit string) (map[string]string, error) {
			return ghci.CommitBlobs(ctx, client, owner, name, commit)
		}
		composed, err := artifact.ComposeComment(ctx, f.artifact, opts)
		if err != nil {
			return err
		}
		body = composed.Body
		if f.out != "" {
			if err := writeVerified(f.out, composed.Files, red); err != nil {
				return err
			}
		}
	}
	// What is posted or written to the job summary is redacted too: the
	// evidence's text came from pull-request code.
	body = red.String(body)
	if fallback != "" {
		return c.ciCommentFallback(target, fallback, body)
	}

	content := body
	if f.artifact == "" {
		content = composeComment(marker, body, bodyPointer(f.pointer, ev))
	}
	action, url, err := ghci.Post(ctx, client, owner, name, pr, marker, content)
	if ghci.CannotComment(err) {
		return c.ciCommentFallback(target, err.Error(), body)
	}
	if err != nil {
		return err
	}
	out, _ := json.Marshal(map[string]any{"action": action, "url": url, "repo": owner + "/" + name, "pr": pr})
	_, err = fmt.Fprintf(c.stdout, "%s\n", out)
	return err
}

// composeComment puts the marker first and fits the report into one
// comment, cutting at its level-2 sections only when it is too long.
func composeComment(marker, body, pointer string) string {
	body = strings.TrimPrefix(body, marker+"\n")
	whole := marker + "\n" + body
	if ghci.Length(whole) <= ghci.MaxCommentChars {
		return whole
	}
	return ghci.Compose(marker, ghci.SplitSections(body), ghci.MaxCommentChars, pointer)
}

// pointerText says where the full report is: the artifact this run
// uploads (--out), rendered by this binary from the verified evidence;
// without one, the check run's evidence and the command that re-derives
// the report from it. Never the check's own renderings: pull-request code
// wrote them.
func pointerText(flag string, out bool, ev *ghci.Event) string {
	if flag != "" {
		return flag
	}
	if out {
		return "The full report, rendered by the comment workflow from the verified evidence: the " + verifiedArtifact() + "."
	}
	url := checkRunURL(ev)
	run := "the check run"
	if url != "" {
		run = "[the check run](" + url + ")"
	}
	return "The evidence is the artifact of " + run + "; `assay ci verify` of it re-derives the full report."
}

// bodyPointer ends a --body report that had to be cut: the check run's
// job summary and artifact hold the rest.
func bodyPointer(flag string, ev *ghci.Event) string {
	if flag != "" {
		return flag
	}
	url := checkRunURL(ev)
	if url == "" {
		return "The full report is in the job summary and the uploaded artifact of the check run."
	}
	return "The full report is in the job summary and the uploaded artifact of [the check run](" + url + ")."
}

// checkRunURL is the run the report is of: the workflow_run event's, else
// this run's.
func checkRunURL(ev *ghci.Event) string {
	if ev.RunURL != "" {
		return ev.RunURL
	}
	server, repo, id := os.Getenv("GITHUB_SERVER_URL"), os.Getenv("GITHUB_REPOSITORY"), os.Getenv("GITHUB_RUN_ID")
	if server != "" && repo != "" && id != "" {
		return server + "/" + repo + "/actions/runs/" + id
	}
	return ""
}

// verifiedArtifact names the artifact this run uploads (--out), linking
// the run when the Actions environment identifies it.
func verifiedArtifact() string {
	where := "`" + artifact.VerifiedName + "` artifact of this comment workflow's run"
	server, repo, id := os.Getenv("GITHUB_SERVER_URL"), os.Getenv("GITHUB_REPOSITORY"), os.Getenv("GITHUB_RUN_ID")
	if server != "" && repo != "" && id != "" {
		where = "`" + artifact.VerifiedName + "` artifact of [this comment workflow's run](" + server + "/" + repo + "/actions/runs/" + id + ")"
	}
	return where
}

// writeVerified writes what this binary rendered from the verified
// evidence (diff.json, report.md, pr.html) into dir, redacted like the
// comment: the evidence's text came from pull-request code.
func writeVerified(dir string, files *artifact.Rendered, red *ghci.Redactor) error {
	clean := &artifact.Rendered{Diff: []byte(red.String(string(files.Diff))), Report: []byte(red.String(string(files.Report))), HTML: []byte(red.String(string(files.HTML)))}
	return artifact.WriteRendered(dir, clean, artifact.DiffFile, artifact.ReportFile, artifact.HTMLFile)
}

// ciCommentFallback reports through the job instead of the pull request:
// a warning annotation, the report in the log, and the report appended to
// the job summary. It returns nil: a token that may not comment (a fork's)
// is expected and must not fail the check.
func (c *cli) ciCommentFallback(target, reason, body string) error {
	fmt.Fprintf(c.stdout, "::warning title=assay ci comment::%s\n",
		escapeWorkflowData(fmt.Sprintf("cannot comment on %s (%s); the report is in the job log and the job summary", target, reason)))
	// The report may come from pull-request code: stop the runner from
	// reading workflow commands inside it while it is printed.
	var tok [16]byte
	_, _ = rand.Read(tok[:])
	stop := hex.EncodeToString(tok[:])
	fmt.Fprintf(c.stdout, "::stop-commands::%s\n%s", stop, body)
	if !strings.HasSuffix(body, "\n") {
		fmt.Fprintln(c.stdout)
	}
	fmt.Fprintf(c.stdout, "::%s::\n", stop)
	if path := os.Getenv("GITHUB_STEP_SUMMARY"); path != "" {
		return ghci.AppendStepSummary(path, body)
	}
	return nil
}

// escapeWorkflowData encodes a workflow-command message so it stays on one
// line and cannot end the command early.
func escapeWorkflowData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// commentFooter is what ends the posted comment: the command that
// reproduces the check (against the branch the comment workflow runs on,
// the default branch pull requests target) and links to the head files at
// the checked commit. It never points at the check's uploaded pr.html:
// pull-request code wrote that file, and this binary did not render it.
func commentFooter(repo, headSHA string) (command, blobBase string) {
	command = "assay ci pr --base-ref origin/" + firstNonEmpty(os.Getenv("GITHUB_REF_NAME"), "main")
	if shaHex.MatchString(headSHA) {
		blobBase = firstNonEmpty(os.Getenv("GITHUB_SERVER_URL"), "https://github.com") + "/" + repo + "/blob/" + headSHA + "/"
	}
	return command, blobBase
}

var shaHex = regexp.MustCompile(`^(?:[0-9a-f]{40}|[0-9a-f]{64})$`)
