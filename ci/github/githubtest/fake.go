// Package githubtest is an in-memory fake of the slice of the GitHub REST API
// that the sticky PR comment uses (list, create and edit issue comments, get
// a pull request), for tests of ci/github and of the assay CLI. It paginates
// like GitHub (page/per_page, Link headers), records every request, and can
// be told to answer an endpoint with an error status.
package githubtest

import (
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Comment is a stored issue comment.
type Comment struct {
	ID    int64
	Issue int
	Body  string
	User  string
	// Association is the author's author_association ("OWNER", "MEMBER",
	// "COLLABORATOR", "CONTRIBUTOR", "NONE", ...).
	Association string
}

// URL is the html_url the fake reports for c.
func (c Comment) URL(s *Server) string {
	return fmt.Sprintf("https://github.test/%s/%s/pull/%d#issuecomment-%d", s.Owner, s.Repo, c.Issue, c.ID)
}

// Request is one request the server received.
type Request struct {
	Method, Path, RawQuery, Auth string
	Body                         string
}

// Server is the fake API. Owner and Repo are the only repository it serves;
// other repositories get 404.
type Server struct {
	*httptest.Server
	Owner, Repo string

	mu       sync.Mutex
	comments []Comment // in creation order
	nextID   int64
	requests []Request
	heads    map[int]string
	bases    map[int]string
	fail     map[string]int // endpoint ("list", "create", "edit", "pull") -> status
	redirect map[string]redirect
	echo     map[string]echo
	trees    map[string]map[string]string // commit -> path -> content
	truncate bool
}

// echo is how an endpoint quotes the token back: the status it fails
// with and the form it writes the token in.
type echo struct {
	status int
	form   func(token string) string
}

type redirect struct {
	status   int
	location string
}

// New starts a fake serving owner/repo; the caller must Close it.
func New(owner, repo string) *Server {
	s := &Server{Owner: owner, Repo: repo, nextID: 1000, heads: map[int]string{}, bases: map[int]string{}, fail: map[string]int{},
		redirect: map[string]redirect{}, echo: map[string]echo{}, trees: map[string]map[string]string{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.handle))
	return s
}

// AddComment stores a comment as if user had written it and returns its ID.
// Users other than Bot get the association "NONE"; see AddCommentAs.
func (s *Server) AddComment(issue int, user, body string) int64 {
	return s.AddCommentAs(issue, user, "NONE", body)
}

// AddCommentAs stores a comment by user with the given author_association
// and returns its ID. A login ending in "[bot]" is rendered as a Bot user.
func (s *Server) AddCommentAs(issue int, user, association, body string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	s.comments = append(s.comments, Comment{ID: s.nextID, Issue: issue, Body: body, User: user, Association: association})
	return s.nextID
}

// SetHead sets the head commit that GET pulls/{pr} reports.
func (s *Server) SetHead(pr int, sha string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.heads[pr] = sha
}

// SetBase sets the base commit that GET pulls/{pr} reports.
func (s *Server) SetBase(pr int, sha string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.bases[pr] = sha
}

// Fail makes endpoint ("list", "create", "edit", "pull" or "tree") answer status.
func (s *Server) Fail(endpoint string, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail[endpoint] = status
}

// Redirect makes endpoint answer status (301, 302, 307, 308) with a
// Location header naming location, as a moved repository or a hostile
// proxy would. The request path and query are appended to location.
func (s *Server) Redirect(endpoint string, status int, location string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.redirect[endpoint] = redirect{status, location}
}

// EchoAuth makes endpoint fail with 500 and a message quoting the request's
// Authorization header, as a misconfigured proxy's error page does.
func (s *Server) EchoAuth(endpoint string) {
	s.EchoToken(endpoint, http.StatusInternalServerError, nil)
}

// EchoToken makes endpoint fail with status and a message quoting the
// request's token (the Authorization header without its scheme) as form
// writes it: upper-cased, base64-encoded, wrapped across lines, as
// proxies, debugging middlewares and error pages echo credentials. A nil
// form quotes the whole header as sent.
func (s *Server) EchoToken(endpoint string, status int, form func(token string) string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.echo[endpoint] = echo{status, form}
}

// SetTree makes GET git/trees/{sha}?recursive=1 answer for commit sha
// with files (path -> content), as blobs with their git SHA-1 and the
// directories between them as tree entries.
func (s *Server) SetTree(sha string, files map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cp := map[string]string{}
	for k, v := range files {
		cp[k] = v
	}
	s.trees[sha] = cp
}

// TruncateTrees makes tree answers say truncated, as GitHub does past
// 100,000 entries.
func (s *Server) TruncateTrees() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.truncate = true
}

// BlobSHA is git's object name for a file's content.
func BlobSHA(content []byte) string {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(content))
	h.Write(content)
	return hex.EncodeToString(h.Sum(nil))
}

// Comments returns a copy of the comments on issue, oldest first.
func (s *Server) Comments(issue int) []Comment {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Comment
	for _, c := range s.comments {
		if c.Issue == issue {
			out = append(out, c)
		}
	}
	return out
}

// Requests returns a copy of the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Bot is the login the fake gives to comments created through the API.
const Bot = "github-actions[bot]"

var (
	listPath = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/issues/([0-9]+)/comments$`)
	editPath = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/issues/comments/([0-9]+)$`)
	pullPath = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/pulls/([0-9]+)$`)
	treePath = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/git/trees/([0-9a-f]{40})$`)
)

// routes are the endpoints the fake serves: a method on a path, by name.
var routes = []struct {
	method   string
	path     *regexp.Regexp
	endpoint string
}{
	{http.MethodGet, listPath, "list"},
	{http.MethodPost, listPath, "create"},
	{http.MethodPatch, editPath, "edit"},
	{http.MethodGet, pullPath, "pull"},
	{http.MethodGet, treePath, "tree"},
}

// route finds the endpoint r asks for and the path's parts (owner, repo,
// number or sha); nil when the fake serves no such endpoint.
func route(r *http.Request) ([]string, string) {
	for _, rt := range routes {
		if r.Method == rt.method {
			if m := rt.path.FindStringSubmatch(r.URL.Path); m != nil {
				return m, rt.endpoint
			}
		}
	}
	return nil, ""
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, Request{Method: r.Method, Path: r.URL.Path, RawQuery: r.URL.RawQuery, Auth: r.Header.Get("Authorization"), Body: string(body)})
	if r.Header.Get("Authorization") == "" {
		writeError(w, http.StatusUnauthorized, "Requires authentication")
		return
	}
	m, endpoint := route(r)
	if m == nil || m[1] != s.Owner || m[2] != s.Repo {
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	if s.intercept(w, r, endpoint) {
		return
	}
	if endpoint == "tree" {
		s.tree(w, r, m[3])
		return
	}
	n, _ := strconv.ParseInt(m[3], 10, 64)
	switch endpoint {
	case "list":
		s.list(w, r, int(n))
	case "create":
		s.create(w, int(n), body)
	case "edit":
		s.edit(w, n, body)
	case "pull":
		s.pull(w, n)
	}
}

// intercept answers for an endpoint the test made redirect, echo the
// credential or fail; false when it answers as GitHub does.
func (s *Server) intercept(w http.ResponseWriter, r *http.Request, endpoint string) bool {
	if rd, ok := s.redirect[endpoint]; ok {
		target := rd.location + r.URL.Path
		if r.URL.RawQuery != "" {
			target += "?" + r.URL.RawQuery
		}
		w.Header().Set("Location", target)
		w.WriteHeader(rd.status)
		return true
	}
	if e, ok := s.echo[endpoint]; ok {
		auth := r.Header.Get("Authorization")
		if e.form != nil {
			_, tok, _ := strings.Cut(auth, " ")
			auth = e.form(tok)
		}
		writeError(w, e.status, "upstream rejected request with Authorization: "+auth)
		return true
	}
	if status := s.fail[endpoint]; status != 0 {
		writeError(w, status, "Resource not accessible by integration")
		return true
	}
	return false
}

// create creates a comment on an issue, as the bot.
func (s *Server) create(w http.ResponseWriter, issue int, body []byte) {
	var in struct{ Body string }
	if err := json.Unmarshal(body, &in); err != nil {
		writeError(w, http.StatusBadRequest, "Problems parsing JSON")
		return
	}
	if len([]rune(in.Body)) > 65536 {
		writeError(w, http.StatusUnprocessableEntity, "Body is too long (maximum is 65536 characters)")
		return
	}
	s.nextID++
	c := Comment{ID: s.nextID, Issue: issue, Body: in.Body, User: Bot, Association: "NONE"}
	s.comments = append(s.comments, c)
	writeJSON(w, http.StatusCreated, s.render(c))
}

// edit edits one of the bot's comments.
func (s *Server) edit(w http.ResponseWriter, id int64, body []byte) {
	var in struct{ Body string }
	if err := json.Unmarshal(body, &in); err != nil {
		writeError(w, http.StatusBadRequest, "Problems parsing JSON")
		return
	}
	for i := range s.comments {
		if s.comments[i].ID != id {
			continue
		}
		if s.comments[i].User != Bot {
			writeError(w, http.StatusForbidden, "Must have admin rights to edit another user's comment")
			return
		}
		s.comments[i].Body = in.Body
		writeJSON(w, http.StatusOK, s.render(s.comments[i]))
		return
	}
	writeError(w, http.StatusNotFound, "Not Found")
}

// pull answers a pull request with its head (and base) commit.
func (s *Server) pull(w http.ResponseWriter, n int64) {
	sha, ok := s.heads[int(n)]
	if !ok {
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	pull := map[string]any{"number": n, "head": map[string]any{"sha": sha}}
	if base, ok := s.bases[int(n)]; ok {
		pull["base"] = map[string]any{"sha": base}
	}
	writeJSON(w, http.StatusOK, pull)
}

func (s *Server) tree(w http.ResponseWriter, r *http.Request, sha string) {
	files, ok := s.trees[sha]
	if !ok {
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	if r.URL.Query().Get("recursive") == "" {
		writeError(w, http.StatusUnprocessableEntity, "this fake serves recursive trees only")
		return
	}
	paths := make([]string, 0, len(files))
	dirs := map[string]bool{}
	for p := range files {
		paths = append(paths, p)
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	for d := range dirs {
		paths = append(paths, d)
	}
	sort.Strings(paths)
	entries := []map[string]any{}
	for _, p := range paths {
		if dirs[p] {
			entries = append(entries, map[string]any{"path": p, "mode": "040000", "type": "tree", "sha": BlobSHA([]byte(p))})
			continue
		}
		entries = append(entries, map[string]any{"path": p, "mode": "100644", "type": "blob", "sha": BlobSHA([]byte(files[p])), "size": len(files[p])})
	}
	writeJSON(w, http.StatusOK, map[string]any{"sha": sha, "tree": entries, "truncated": s.truncate})
}

func (s *Server) list(w http.ResponseWriter, r *http.Request, issue int) {
	q := r.URL.Query()
	perPage, page := 30, 1
	if v, err := strconv.Atoi(q.Get("per_page")); err == nil && v > 0 {
		perPage = min(v, 100)
	}
	if v, err := strconv.Atoi(q.Get("page")); err == nil && v > 0 {
		page = v
	}
	var all []Comment
	for _, c := range s.comments {
		if c.Issue == issue {
			all = append(all, c)
		}
	}
	last := max(1, (len(all)+perPage-1)/perPage)
	out := []map[string]any{}
	for i := (page - 1) * perPage; i < len(all) && i < page*perPage; i++ {
		out = append(out, s.render(all[i]))
	}
	link := func(p int, rel string) string {
		return fmt.Sprintf(`<%s%s?page=%d&per_page=%d>; rel="%s"`, s.URL, r.URL.Path, p, perPage, rel)
	}
	var links []string
	if page < last {
		links = append(links, link(page+1, "next"), link(last, "last"))
	}
	if page > 1 {
		links = append(links, link(1, "first"), link(page-1, "prev"))
	}
	if len(links) > 0 {
		h := links[0]
		for _, l := range links[1:] {
			h += ", " + l
		}
		w.Header().Set("Link", h)
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) render(c Comment) map[string]any {
	typ := "User"
	if strings.HasSuffix(c.User, "[bot]") {
		typ = "Bot"
	}
	return map[string]any{
		"id":                 c.ID,
		"body":               c.Body,
		"user":               map[string]any{"login": c.User, "type": typ},
		"author_association": c.Association,
		"html_url":           c.URL(s),
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]any{"message": msg, "documentation_url": "https://docs.github.com/rest"})
}
