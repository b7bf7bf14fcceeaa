// Package comment posts the pull-request check's report as one sticky
// pull-request comment (`assay ci comment`, and `assay ci pr --post`):
// from a Markdown body, or composed by this binary from a check
// artifact's verified evidence, redacted, and reported through the job
// (log and step summary) when the token may not comment.
package comment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/algal-assay/assay/ci/artifact"
	ghci "github.com/algal-assay/assay/ci/github"
	"github.com/algal-assay/assay/engine/fault"
)

// PostTimeout bounds the whole exchange with GitHub.
const PostTimeout = 2 * time.Minute

// Options are what `assay ci comment` was given; exactly one of Body and
// Artifact is set.
type Options struct {
	// Body is a Markdown report file posted as it is (cut to fit).
	Body string
	// Artifact is the check job's artifact directory: the comment is
	// composed from its verified evidence.
	Artifact string
	// Repo is OWNER/NAME (default GITHUB_REPOSITORY, then the event's).
	Repo string
	// PR is the pull request with Body (default the event's).
	PR int
	// Key names the marker; Pointer is the text appended to a cut report.
	Key, Pointer string
	// Out receives this binary's renderings of the verified evidence.
	Out string
	// AllowEmpty and Paths are the check's workload paths and whether a
	// head commit with none under them is accepted.
	AllowEmpty bool
	Paths      []string
}

// Run posts the comment with the token redacted, in every form
// engine/redact knows, from everything it prints, the comment it posts,
// the job summary it writes and the error it returns: API answers can echo
// the Authorization header, and the log of a public repository is public.
func Run(o Options, stdout, stderr io.Writer) error {
	red := ghci.NewRedactor(os.Getenv("GITHUB_TOKEN"))
	out, errw := red.Writer(stdout), red.Writer(stderr)
	err := post(o, out, red)
	if ferr := errors.Join(out.Flush(), errw.Flush()); err == nil {
		err = ferr
	}
	return red.Error(err)
}

// target is the pull request a comment goes to and what it says.
type target struct {
	owner, name string
	pr          int
	headSHA     string
	body        string
	art         *ghci.Artifact
}

func (t *target) String() string { return fmt.Sprintf("%s/%s#%d", t.owner, t.name, t.pr) }

func post(o Options, stdout io.Writer, red *ghci.Redactor) error {
	marker, _ := ghci.Marker(o.Key) // validated by the caller
	ev, err := readEvent()
	if err != nil {
		return err
	}
	t, err := resolveTarget(o, ev)
	if err != nil {
		return err
	}
	client, err := ghci.NewClient(os.Getenv("GITHUB_TOKEN"), os.Getenv("GITHUB_API_URL"), nil)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), PostTimeout)
	defer cancel()
	fallback, baseSHA, err := checkHead(ctx, client, o, ev, t)
	if err != nil {
		return err
	}
	if t.art != nil {
		if t.body, err = compose(ctx, client, o, ev, t, marker, baseSHA, red); err != nil {
			return err
		}
	}
	// What is posted or written to the job summary is redacted too: the
	// evidence's text came from pull-request code.
	body := red.String(t.body)
	if fallback != "" {
		return Fallback(stdout, t.String(), fallback, body)
	}
	content := body
	if o.Artifact == "" {
		content = fit(marker, body, bodyPointer(o.Pointer, ev))
	}
	action, url, err := ghci.Post(ctx, client, t.owner, t.name, t.pr, marker, content)
	if ghci.CannotComment(err) {
		return Fallback(stdout, t.String(), err.Error(), body)
	}
	if err != nil {
		return err
	}
	out, _ := json.Marshal(map[string]any{"action": action, "url": url, "repo": t.owner + "/" + t.name, "pr": t.pr})
	_, err = fmt.Fprintf(stdout, "%s\n", out)
	return err
}

// readEvent reads the event payload at GITHUB_EVENT_PATH, empty without
// one.
func readEvent() (*ghci.Event, error) {
	if path := os.Getenv("GITHUB_EVENT_PATH"); path != "" {
		return ghci.ReadEvent(path)
	}
	return &ghci.Event{}, nil
}

// resolveTarget finds the repository and pull request, and reads the body
// or the artifact.
func resolveTarget(o Options, ev *ghci.Event) (*target, error) {
	repo := firstNonEmpty(o.Repo, os.Getenv("GITHUB_REPOSITORY"), ev.Repo)
	if repo == "" {
		return nil, &fault.Error{Code: ghci.CodeEvent, Message: "no repository: pass --repo OWNER/NAME or set GITHUB_REPOSITORY"}
	}
	owner, name, err := ghci.ParseRepo(repo)
	if err != nil {
		return nil, err
	}
	t := &target{owner: owner, name: name, pr: o.PR}
	if o.Artifact != "" {
		return t, fromArtifact(t, o.Artifact, ev)
	}
	return t, fromBody(t, o.Body, ev)
}

// fromArtifact reads the artifact's pull request and the commit it
// checked, which must be the triggering run's.
func fromArtifact(t *target, dir string, ev *ghci.Event) error {
	art, err := ghci.ReadArtifact(dir)
	if err != nil {
		return err
	}
	t.art, t.pr, t.headSHA = art, art.PR, art.HeadSHA
	if t.headSHA != "" && ev.RunHeadSHA != "" && t.headSHA != ev.RunHeadSHA {
		return &fault.Error{Code: ghci.CodeArtifact, Message: fmt.Sprintf(
			"artifact pr.json names commit %s but the triggering run checked %s", t.headSHA, ev.RunHeadSHA)}
	}
	if ev.RunHeadSHA != "" {
		t.headSHA = ev.RunHeadSHA
	}
	return nil
}

// fromBody reads a --body report and the pull request it goes to.
func fromBody(t *target, path string, ev *ghci.Event) error {
	var err error
	if t.body, err = ghci.ReadBody(path); err != nil {
		return err
	}
	if t.pr == 0 {
		t.pr = ev.PR
	}
	if t.pr == 0 {
		return &fault.Error{Code: ghci.CodeEvent, Message: "no pull request number: pass --pr N, or run on a pull_request event (GITHUB_EVENT_PATH)"}
	}
	return nil
}

// checkHead confirms, in the workflow_run job, that the pull request's
// head is the commit the run checked: the artifact's PR number comes from
// PR code, and this stops a pull request from steering the report onto
// another one. fallback is why the report goes to the job instead; base is
// the pull request's base commit.
func checkHead(ctx context.Context, client *ghci.Client, o Options, ev *ghci.Event, t *target) (fallback, base string, err error) {
	if o.Artifact == "" || ev.RunHeadSHA == "" {
		return "", "", nil
	}
	head, base, err := ghci.PullRefs(ctx, client, t.owner, t.name, t.pr)
	switch {
	case ghci.CannotComment(err):
		return err.Error(), base, nil
	case err != nil:
		return "", base, err
	case head != ev.RunHeadSHA:
		return fmt.Sprintf("its head is %s but this report is for %s (a newer push, or an artifact naming the wrong pull request); not commenting", head, ev.RunHeadSHA), base, nil
	}
	return "", base, nil
}

// compose writes the comment, by this binary, from the artifact's
// evidence; the comment.md the pull request's code wrote is never posted.
// In the workflow_run job the head tree's files (the workloads whose gates
// decide the verdict) are confirmed against the commit the run checked.
// Which workloads need evidence is read from the repository at each side's
// commit (the git trees API), never from the artifact.
func compose(ctx context.Context, client *ghci.Client, o Options, ev *ghci.Event, t *target, marker, baseSHA string, red *ghci.Redactor) (string, error) {
	opts := artifact.CommentOptions{Marker: marker, Conclusion: ev.RunConclusion, HeadSHA: t.headSHA, BaseSHA: baseSHA, Pointer: pointerText(o.Pointer, o.Out != "", ev), AllowEmpty: o.AllowEmpty, Paths: o.Paths}
	opts.Command, opts.BlobBase = footer(t.owner+"/"+t.name, t.headSHA)
	if o.Out != "" {
		opts.Drawn = "`" + artifact.HTMLFile + "` in the " + verifiedArtifact()
	}
	opts.Tree = func(ctx context.Context, commit string) (map[string]string, error) {
		return ghci.CommitBlobs(ctx, client, t.owner, t.name, commit)
	}
	composed, err := artifact.ComposeComment(ctx, o.Artifact, opts)
	if err != nil {
		return "", err
	}
	if o.Out != "" {
		if err := WriteVerified(o.Out, composed.Files, red); err != nil {
			return "", err
		}
	}
	return composed.Body, nil
}

// fit puts the marker first and fits the report into one comment,
// cutting at its level-2 sections only when it is too long.
func fit(marker, body, pointer string) string {
	body = strings.TrimPrefix(body, marker+"\n")
	whole := marker + "\n" + body
	if ghci.Length(whole) <= ghci.MaxCommentChars {
		return whole
	}
	return ghci.Compose(marker, ghci.SplitSections(body), ghci.MaxCommentChars, pointer)
}

// WriteVerified writes what this binary rendered from the verified
// evidence (diff.json, report.md, pr.html) into dir, redacted like the
// comment: the evidence's text came from pull-request code.
func WriteVerified(dir string, files *artifact.Rendered, red *ghci.Redactor) error {
	clean := &artifact.Rendered{Diff: []byte(red.String(string(files.Diff))), Report: []byte(red.String(string(files.Report))), HTML: []byte(red.String(string(files.HTML)))}
	return artifact.WriteRendered(dir, clean, artifact.DiffFile, artifact.ReportFile, artifact.HTMLFile)
}
