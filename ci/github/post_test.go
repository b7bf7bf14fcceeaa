package github

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/algal-assay/assay/ci/github/githubtest"
	"github.com/algal-assay/assay/engine/fault"
)

func newFake(t *testing.T) *githubtest.Server {
	t.Helper()
	s := githubtest.New("acme", "widgets")
	t.Cleanup(s.Close)
	return s
}

func fakeClient(t *testing.T, s *githubtest.Server) *Client {
	t.Helper()
	c, err := NewClient("tok-123", s.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestPostCreatesThenUpdates(t *testing.T) {
	t.Parallel()
	s := newFake(t)
	c := fakeClient(t, s)
	s.AddComment(7, "alice", "looks good")
	ctx := context.Background()

	action, url, err := Post(ctx, c, "acme", "widgets", 7, testMarker, "## Verdict\n\nFAIL\n")
	if err != nil {
		t.Fatal(err)
	}
	if action != ActionCreated || !strings.Contains(url, "/pull/7#issuecomment-") {
		t.Fatalf("first post: %s %s", action, url)
	}
	got := s.Comments(7)
	if len(got) != 2 || got[1].Body != testMarker+"\n## Verdict\n\nFAIL\n" || got[1].User != githubtest.Bot {
		t.Fatalf("after first post: %#v", got)
	}
	reqs := s.Requests()
	if len(reqs) != 2 || reqs[0].Method != http.MethodGet || reqs[1].Method != http.MethodPost ||
		reqs[1].Path != "/repos/acme/widgets/issues/7/comments" || reqs[0].Auth != "Bearer tok-123" {
		t.Fatalf("requests: %#v", reqs)
	}
	var sent struct{ Body string }
	if err := json.Unmarshal([]byte(reqs[1].Body), &sent); err != nil || sent.Body != got[1].Body {
		t.Fatalf("POST body %q: %v", reqs[1].Body, err)
	}
	if !strings.Contains(reqs[0].RawQuery, "per_page=100") {
		t.Errorf("list query %q does not ask for 100 per page", reqs[0].RawQuery)
	}

	action, url2, err := Post(ctx, c, "acme", "widgets", 7, testMarker, testMarker+"\n## Verdict\n\nPASS\n")
	if err != nil {
		t.Fatal(err)
	}
	if action != ActionUpdated || url2 != url {
		t.Fatalf("second post: %s %s (first %s)", action, url2, url)
	}
	got = s.Comments(7)
	if len(got) != 2 || got[1].Body != testMarker+"\n## Verdict\n\nPASS\n" {
		t.Fatalf("after second post: %#v", got)
	}
	reqs = s.Requests()[2:]
	if len(reqs) != 2 || reqs[1].Method != http.MethodPatch || !strings.HasSuffix(reqs[1].Path, "/issues/comments/"+strings.TrimPrefix(url, "https://github.test/acme/widgets/pull/7#issuecomment-")) {
		t.Fatalf("second run requests: %#v", reqs)
	}
}

func TestPostFindsMarkerOnLaterPage(t *testing.T) {
	t.Parallel()
	s := newFake(t)
	c := fakeClient(t, s)
	for range 120 {
		s.AddComment(3, "bob", "chatter")
	}
	// A quote of the report by someone else must not be taken for it.
	s.AddComment(3, "carol", "> "+testMarker+"\n> quoted")
	// Another workflow's sticky comment, with a different key.
	s.AddComment(3, githubtest.Bot, "<!-- assay:bench -->\nother")
	for range 128 {
		s.AddComment(3, "bob", "chatter")
	}
	id := s.AddComment(3, githubtest.Bot, testMarker+"\nold report") // comment 251: page 3
	action, _, err := Post(context.Background(), c, "acme", "widgets", 3, testMarker, "new report")
	if err != nil {
		t.Fatal(err)
	}
	if action != ActionUpdated {
		t.Fatalf("action %s", action)
	}
	all := s.Comments(3)
	if len(all) != 251 {
		t.Fatalf("%d comments, want 251 (no new one)", len(all))
	}
	if last := all[250]; last.ID != id || last.Body != testMarker+"\nnew report" {
		t.Fatalf("sticky comment not updated: %#v", last)
	}
	var pages []string
	for _, r := range s.Requests() {
		if r.Method == http.MethodGet {
			pages = append(pages, r.RawQuery)
		}
	}
	if len(pages) != 3 || !strings.Contains(pages[2], "page=3") {
		t.Fatalf("list requests %v, want pages 1-3 following Link", pages)
	}
}

func TestPostCannotComment(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		endpoint string
		status   int
		want     bool
	}{
		{"create", http.StatusForbidden, true},
		{"list", http.StatusForbidden, true},
		{"list", http.StatusNotFound, true},
		{"create", http.StatusInternalServerError, false},
		{"create", http.StatusUnauthorized, false},
	} {
		s := newFake(t)
		s.Fail(tc.endpoint, tc.status)
		_, _, err := Post(context.Background(), fakeClient(t, s), "acme", "widgets", 1, testMarker, "x")
		if err == nil {
			t.Fatalf("%s %d: no error", tc.endpoint, tc.status)
		}
		if CannotComment(err) != tc.want {
			t.Errorf("%s %d: CannotComment = %v (%v)", tc.endpoint, tc.status, !tc.want, err)
		}
		var e *fault.Error
		if !errors.As(err, &e) || e.Status != tc.status {
			t.Errorf("%s %d: error %#v", tc.endpoint, tc.status, err)
		}
		if len(s.Comments(1)) != 0 {
			t.Errorf("%s %d: a comment was stored", tc.endpoint, tc.status)
		}
	}
}

func TestPostRejectsOverlongBody(t *testing.T) {
	t.Parallel()
	s := newFake(t)
	_, _, err := Post(context.Background(), fakeClient(t, s), "acme", "widgets", 1, testMarker, strings.Repeat("x", MaxCommentChars))
	var e *fault.Error
	if !errors.As(err, &e) || e.Code != CodeTooLong {
		t.Fatalf("err %v", err)
	}
	if len(s.Requests()) != 0 {
		t.Fatal("an overlong body must be refused before any request")
	}
}

func TestNewClient(t *testing.T) {
	t.Parallel()
	if _, err := NewClient("", "https://api.github.com", nil); err == nil || err.(*fault.Error).Code != CodeToken {
		t.Fatalf("missing token: %v", err)
	}
	if _, err := NewClient("t", "ftp://x", nil); err == nil {
		t.Fatal("non-http API URL accepted")
	}
	c, err := NewClient("t", "https://ghe.example.com/api/v3", nil)
	if err != nil || c.BaseURL.String() != "https://ghe.example.com/api/v3/" {
		t.Fatalf("enterprise base: %v %v", c, err)
	}
}

func TestPullHead(t *testing.T) {
	t.Parallel()
	s := newFake(t)
	s.SetHead(4, strings.Repeat("a", 40))
	got, err := PullHead(context.Background(), fakeClient(t, s), "acme", "widgets", 4)
	if err != nil || got != strings.Repeat("a", 40) {
		t.Fatalf("%q %v", got, err)
	}
}

// Anyone who can comment on a pull request can start a comment with the
// marker. Such a comment is not the report: the report is neither written
// into it (it would then sit under their name, and they could edit it into
// a fake verdict) nor blocked by it (editing it fails with 403, which must
// not turn into "cannot comment" and hide the report). Comments by a bot
// or by someone with write access (owner, member, collaborator: a personal
// token's user) count.
func TestPostIgnoresMarkerCommentsFromOutsiders(t *testing.T) {
	t.Parallel()
	s := newFake(t)
	c := fakeClient(t, s)
	ctx := context.Background()
	fake := s.AddCommentAs(9, "mallory", "CONTRIBUTOR", testMarker+"\n## Assay PR check\n\n**✅ Pass**")
	s.AddCommentAs(9, "eve", "NONE", testMarker+"\nme too")
	action, _, err := Post(ctx, c, "acme", "widgets", 9, testMarker, "real report")
	if err != nil {
		t.Fatal(err)
	}
	if action != ActionCreated {
		t.Fatalf("action %s, want a new comment", action)
	}
	all := s.Comments(9)
	if len(all) != 3 || all[0].ID != fake || all[0].Body != testMarker+"\n## Assay PR check\n\n**✅ Pass**" || all[2].User != githubtest.Bot {
		t.Fatalf("comments: %#v", all)
	}
	// The next run finds the bot's comment, not the outsider's.
	if action, _, err = Post(ctx, c, "acme", "widgets", 9, testMarker, "second"); err != nil || action != ActionUpdated {
		t.Fatalf("second post: %s %v", action, err)
	}
	if all = s.Comments(9); len(all) != 3 || all[2].Body != testMarker+"\nsecond" {
		t.Fatalf("comments after second post: %#v", all)
	}

	// A maintainer posting with a personal token: their comment counts.
	id := s.AddCommentAs(10, "maintainer", "MEMBER", testMarker+"\nold")
	got, err := FindComment(ctx, c, "acme", "widgets", 10, testMarker)
	if err != nil || got == nil || got.GetID() != id {
		t.Fatalf("FindComment with a member's comment: %v %v", got, err)
	}
}
