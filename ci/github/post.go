package github

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/algal-assay/assay/engine/fault"
	gh "github.com/google/go-github/v60/github"
)

// Actions reported by Post.
const (
	ActionCreated = "created"
	ActionUpdated = "updated"
)

// Client is go-github's client, aliased so callers need not import a second
// package named github.
type Client = gh.Client

// maxPages bounds the comment scan: 1000 pages of 100 is far beyond any
// real pull request, and a misbehaving server cannot keep us looping.
const maxPages = 1000

// NewClient returns a go-github client authenticated with token and talking
// to apiURL (GITHUB_API_URL: "https://api.github.com", or
// "https://HOST/api/v3" on GitHub Enterprise Server, or a test server). The
// URL is used as given, so a test server needs no /api/v3 prefix. A nil
// httpClient gets one with a 30-second timeout.
func NewClient(token, apiURL string, httpClient *http.Client) (*Client, error) {
	if token == "" {
		return nil, errorf(CodeToken, "no GitHub token: set GITHUB_TOKEN (in a workflow: env: GITHUB_TOKEN: ${{ github.token }})")
	}
	if httpClient == nil {
		httpClient = &http.Client{Timeout: 30 * time.Second}
	} else {
		// A copy: the redirect policy below must not change the caller's client.
		cp := *httpClient
		httpClient = &cp
	}
	// go-github's token transport adds the Authorization header to every
	// request, redirected ones included, so the standard library's own
	// stripping of credentials on a cross-host redirect never applies.
	// Following a redirect anywhere but the API host itself (same scheme,
	// host and port) would hand the token to whoever the API named.
	httpClient.CheckRedirect = sameHostRedirects
	c := gh.NewClient(httpClient).WithAuthToken(token)
	if apiURL == "" {
		return c, nil
	}
	u, err := url.Parse(apiURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, errorf(CodeEvent, "GITHUB_API_URL %q is not an http(s) URL", apiURL)
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	c.BaseURL = u
	return c, nil
}

// maxRedirects bounds redirects within the API host.
const maxRedirects = 5

// sameHostRedirects is the client's redirect policy: follow a redirect
// only to the host (and scheme) of the request that started the chain.
func sameHostRedirects(req *http.Request, via []*http.Request) error {
	first := via[0].URL
	if req.URL.Scheme != first.Scheme || req.URL.Host != first.Host {
		return errorf(CodeRedirect, "the API at %s answered with a redirect to another host (%s://%s); not following it, so the token stays with the API host", first.Host, req.URL.Scheme, req.URL.Host)
	}
	if len(via) > maxRedirects {
		return errorf(CodeRedirect, "more than %d redirects from %s", maxRedirects, first.Host)
	}
	return nil
}

// FindComment returns the first comment on pull request pr whose body starts
// with marker and whose author could have posted the report (see
// trustedAuthor), reading the comments page by page (100 per page) until it
// is found or the pages run out; nil if there is none.
func FindComment(ctx context.Context, client *Client, owner, repo string, pr int, marker string) (*gh.IssueComment, error) {
	opts := &gh.IssueListCommentsOptions{ListOptions: gh.ListOptions{PerPage: 100, Page: 1}}
	for range maxPages {
		comments, resp, err := client.Issues.ListComments(ctx, owner, repo, pr, opts)
		if err != nil {
			return nil, apiError(err, "list comments of %s/%s#%d", owner, repo, pr)
		}
		for _, c := range comments {
			// Only a marker on the first line counts, so a reply quoting the
			// report ("> <!-- ...") is never mistaken for it.
			if strings.HasPrefix(c.GetBody(), marker) && trustedAuthor(c) {
				return c, nil
			}
		}
		if resp == nil || resp.NextPage == 0 {
			return nil, nil
		}
		opts.Page = resp.NextPage
	}
	return nil, errorf(CodeAPI, "list comments of %s/%s#%d: more than %d pages", owner, repo, pr, maxPages)
}

// trustedAuthor reports whether c's author is one the report may come
// from: a bot (the github-actions token, a GitHub App) or a user with write
// access (owner, member, collaborator: a personal token). Anyone else can
// type the marker too; editing their comment would put the report under
// their name, where they could later rewrite the verdict, and the edit
// fails anyway when the token may not edit others' comments.
func trustedAuthor(c *gh.IssueComment) bool {
	if c.GetUser().GetType() == "Bot" {
		return true
	}
	switch c.GetAuthorAssociation() {
	case "OWNER", "MEMBER", "COLLABORATOR":
		return true
	}
	return false
}

// Post makes body the sticky comment identified by marker on pull request pr:
// it edits the existing comment if FindComment finds one, and creates it
// otherwise. body gets marker as its first line if it does not start with
// it. It returns ActionCreated or ActionUpdated and the comment's URL. A body
// over MaxCommentChars is refused (use Compose to fit it); a 403 or 404 from
// the comments endpoints yields an error for which CannotComment is true.
func Post(ctx context.Context, client *Client, owner, repo string, pr int, marker, body string) (action string, url string, err error) {
	if marker == "" {
		return "", "", errorf(CodeInput, "empty comment marker")
	}
	if pr <= 0 {
		return "", "", errorf(CodeInput, "pull request number %d is not positive", pr)
	}
	if !strings.HasPrefix(body, marker) {
		body = marker + "\n" + body
	}
	if n := Length(body); n > MaxCommentChars {
		return "", "", errorf(CodeTooLong, "comment body is %d characters, over GitHub's limit of %d", n, MaxCommentChars)
	}
	existing, err := FindComment(ctx, client, owner, repo, pr, marker)
	if err != nil {
		return "", "", err
	}
	if existing != nil {
		c, _, err := client.Issues.EditComment(ctx, owner, repo, existing.GetID(), &gh.IssueComment{Body: &body})
		if err != nil {
			return "", "", apiError(err, "update comment %d on %s/%s#%d", existing.GetID(), owner, repo, pr)
		}
		return ActionUpdated, c.GetHTMLURL(), nil
	}
	c, _, err := client.Issues.CreateComment(ctx, owner, repo, pr, &gh.IssueComment{Body: &body})
	if err != nil {
		return "", "", apiError(err, "create comment on %s/%s#%d", owner, repo, pr)
	}
	return ActionCreated, c.GetHTMLURL(), nil
}

// PullHead returns the head commit SHA of pull request pr.
func PullHead(ctx context.Context, client *Client, owner, repo string, pr int) (string, error) {
	head, _, err := PullRefs(ctx, client, owner, repo, pr)
	return head, err
}

// PullRefs returns the head and base commit SHAs of pull request pr.
func PullRefs(ctx context.Context, client *Client, owner, repo string, pr int) (head, base string, err error) {
	p, _, err := client.PullRequests.Get(ctx, owner, repo, pr)
	if err != nil {
		return "", "", apiError(err, "get pull request %s/%s#%d", owner, repo, pr)
	}
	return p.GetHead().GetSHA(), p.GetBase().GetSHA(), nil
}

// CommitBlobs returns the git blob SHA-1 of every file in commit sha's
// tree, by slash-separated path (GET git/trees/{sha}?recursive=1). A tree
// GitHub truncates cannot confirm anything and is an error.
func CommitBlobs(ctx context.Context, client *Client, owner, repo, sha string) (map[string]string, error) {
	t, _, err := client.Git.GetTree(ctx, owner, repo, sha, true)
	if err != nil {
		return nil, apiError(err, "get the tree of %s/%s@%s", owner, repo, sha)
	}
	if t.GetTruncated() {
		return nil, errorf(CodeAPI, "the tree of %s/%s@%s is truncated (over GitHub's 100,000 entries)", owner, repo, sha)
	}
	out := map[string]string{}
	for _, e := range t.Entries {
		if e.GetType() == "blob" {
			out[e.GetPath()] = e.GetSHA()
		}
	}
	return out, nil
}

// CannotComment reports whether err means the token is not allowed to
// comment: GitHub answered 403 (e.g. the read-only token of a pull request
// from a fork) or 404 (the token cannot see the repository or pull request).
// Rate limiting is not included: it is temporary, not a permission.
func CannotComment(err error) bool {
	var e *fault.Error
	return errors.As(err, &e) && e.Code == CodeCannotComment
}

func apiError(err error, format string, a ...any) *fault.Error {
	e := errorf(CodeAPI, format, a...)
	e.Err = err
	var refused *fault.Error
	if errors.As(err, &refused) && refused.Code == CodeRedirect {
		e.Code = CodeRedirect
		return e
	}
	var rl *gh.RateLimitError
	var abuse *gh.AbuseRateLimitError
	if errors.As(err, &rl) || errors.As(err, &abuse) {
		return e
	}
	var er *gh.ErrorResponse
	if errors.As(err, &er) && er.Response != nil {
		e.Status = er.Response.StatusCode
		if e.Status == http.StatusForbidden || e.Status == http.StatusNotFound {
			e.Code = CodeCannotComment
		}
	}
	return e
}
