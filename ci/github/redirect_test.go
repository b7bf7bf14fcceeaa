package github

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/algal-assay/assay/engine/fault"
)

// elsewhere is a second host that records what reaches it.
type elsewhere struct {
	*httptest.Server
	mu    sync.Mutex
	auths []string
}

func newElsewhere(t *testing.T) *elsewhere {
	e := &elsewhere{}
	e.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.mu.Lock()
		e.auths = append(e.auths, r.Header.Get("Authorization"))
		e.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`[]`))
	}))
	t.Cleanup(e.Close)
	return e
}

func (e *elsewhere) requests() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.auths...)
}

// A redirect to another host (here another port of 127.0.0.1, which the
// URL rules count as another origin) is refused before anything is sent
// there, for reads and for writes, whatever the status code.
func TestRedirectToAnotherHostIsRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		endpoint string
		status   int
	}{
		{"list", http.StatusFound},
		{"list", http.StatusMovedPermanently},
		{"list", http.StatusTemporaryRedirect},
		{"create", http.StatusPermanentRedirect},
		{"pull", http.StatusFound},
	} {
		s := newFake(t)
		other := newElsewhere(t)
		s.Redirect(tc.endpoint, tc.status, other.URL)
		c := fakeClient(t, s)
		ctx := context.Background()
		var err error
		if tc.endpoint == "pull" {
			_, err = PullHead(ctx, c, "acme", "widgets", 7)
		} else {
			_, _, err = Post(ctx, c, "acme", "widgets", 7, testMarker, "## Verdict\n")
		}
		var e *fault.Error
		if !errors.As(err, &e) || e.Code != CodeRedirect {
			t.Fatalf("%s %d: err = %v, want %s", tc.endpoint, tc.status, err, CodeRedirect)
		}
		if got := other.requests(); len(got) != 0 {
			t.Fatalf("%s %d: the second host received %d request(s), Authorization %q", tc.endpoint, tc.status, len(got), got)
		}
		if strings.Contains(err.Error(), "tok-123") {
			t.Fatalf("the error names the token: %v", err)
		}
		if CannotComment(err) {
			t.Fatalf("a refused redirect is not a permission problem: %v", err)
		}
	}
}

// The caller's http.Client keeps its own redirect policy.
func TestNewClientDoesNotChangeCallersClient(t *testing.T) {
	t.Parallel()
	hc := &http.Client{}
	if _, err := NewClient("tok-123", "http://127.0.0.1:1", hc); err != nil {
		t.Fatal(err)
	}
	if hc.CheckRedirect != nil {
		t.Fatal("NewClient set CheckRedirect on the caller's client")
	}
}

// A server that echoes the Authorization header puts the token into the
// error text; the redactor takes it out again and keeps the code.
func TestEchoedTokenIsRedacted(t *testing.T) {
	t.Parallel()
	s := newFake(t)
	s.EchoAuth("list")
	c := fakeClient(t, s)
	_, _, err := Post(context.Background(), c, "acme", "widgets", 7, testMarker, "## Verdict\n")
	if err == nil || !strings.Contains(err.Error(), "tok-123") {
		t.Fatalf("the fake must echo the token for this test to mean anything: %v", err)
	}
	red := NewRedactor("tok-123")
	clean := red.Error(err)
	var e *fault.Error
	if !errors.As(clean, &e) || e.Code != CodeAPI || e.Status != http.StatusInternalServerError {
		t.Fatalf("redacted error lost its code or status: %#v", clean)
	}
	if strings.Contains(clean.Error(), "tok-123") || !strings.Contains(clean.Error(), Redacted) {
		t.Fatalf("redacted error: %v", clean)
	}
	var b strings.Builder
	w := red.Writer(&b)
	if _, err := w.Write([]byte("token tok-123 and Bearer tok-123\n")); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if b.String() != "token "+Redacted+" and Bearer "+Redacted+"\n" {
		t.Fatalf("writer: %q", b.String())
	}
	if NewRedactor("").String("abc") != "abc" || red.Error(nil) != nil {
		t.Fatal("empty redactor or nil error changed")
	}
}
