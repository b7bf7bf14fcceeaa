package main

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/algal-assay/assay/ci/github/githubtest"
)

const secretToken = "ghs_S3cr3tT0kenValue0123456789"

// A server that echoes the Authorization header into its error: the token
// appears nowhere in what the verb prints, on the error path or the
// fallback path.
func TestCICommentRedactsEchoedToken(t *testing.T) {
	fx := newCIFixture(t)
	fx.env.token = secretToken
	fx.fake.EchoAuth("list")
	body := fx.write(t, "comment.md", "## Verdict\n")
	code, out, errOut := fx.run(t, "--body", body)
	if code != exitError || !strings.Contains(errOut, `"code":"GITHUB_API"`) || !strings.Contains(errOut, "[REDACTED]") {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	if strings.Contains(out+errOut, secretToken) {
		t.Fatalf("the token was printed:\nstdout %s\nstderr %s", out, errOut)
	}

	// The fallback path prints the API's reason into the log and summary.
	fx2 := newCIFixture(t)
	fx2.env.token = secretToken
	fx2.fake.EchoAuth("create")
	body = fx2.write(t, "comment.md", "## Verdict\n")
	_, out, errOut = fx2.run(t, "--body", body)
	if strings.Contains(out+errOut, secretToken) {
		t.Fatalf("the token was printed:\nstdout %s\nstderr %s", out, errOut)
	}
}

// The API redirecting to another host gets a clear error, and the other
// host never sees a request (so never the token).
func TestCICommentRefusesCrossHostRedirect(t *testing.T) {
	var hits atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusOK)
	}))
	defer other.Close()
	fx := newCIFixture(t)
	fx.env.token = secretToken
	fx.fake.Redirect("list", http.StatusFound, other.URL)
	body := fx.write(t, "comment.md", "## Verdict\n")
	code, out, errOut := fx.run(t, "--body", body)
	if code != exitError || !strings.Contains(errOut, `"code":"REDIRECT_REFUSED"`) {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	if hits.Load() != 0 {
		t.Fatalf("the other host got %d request(s)", hits.Load())
	}
	if strings.Contains(out+errOut, secretToken) {
		t.Fatal("the token was printed")
	}
}

// ci pr --post redacts the token too: an API answer echoing it reaches
// neither the warning, the JSON summary nor the error.
func TestCIPRPostRedactsEchoedToken(t *testing.T) {
	clearActionsEnv(t)
	repo := newPRRepo(t)
	sha := repo.branch(t, "accept-frontier-drop", acceptFrontierDrop)
	fake := githubtest.New("acme", "widgets")
	defer fake.Close()
	fake.EchoAuth("list")
	work := t.TempDir()
	event := putFile(t, work, "event.json", `{"number":42,"pull_request":{"number":42,"head":{"sha":"`+sha+`"}},"repository":{"full_name":"acme/widgets"}}`)
	t.Setenv("GITHUB_EVENT_PATH", event)
	t.Setenv("GITHUB_TOKEN", secretToken)
	t.Setenv("GITHUB_API_URL", fake.URL)
	t.Setenv("GITHUB_REPOSITORY", "acme/widgets")
	code, stdout, stderr := runCLI(t, "ci", "pr", "--base-ref", "main", "--repo-dir", repo.dir, "--artifact", filepath.Join(work, "art"), "--post", "suites/ticket-triage.bench.yaml")
	if code == 0 || !strings.Contains(stderr, "[REDACTED]") {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	if strings.Contains(stdout+stderr, secretToken) {
		t.Fatalf("the token was printed:\nstdout %s\nstderr %s", stdout, stderr)
	}
}
