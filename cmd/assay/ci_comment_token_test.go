package main

import (
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/algal-assay/assay/ci/artifact"
	"github.com/algal-assay/assay/ci/comment"
	ghci "github.com/algal-assay/assay/ci/github"
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

// tokenForms are the spellings a server, a proxy or a report can give the
// token back in.
var tokenForms = map[string]func(string) string{
	"exact":          func(s string) string { return s },
	"upper-cased":    strings.ToUpper,
	"lower-cased":    strings.ToLower,
	"without prefix": func(s string) string { return strings.TrimPrefix(s, "ghs_") },
	"base64":         func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) },
	"base64url":      func(s string) string { return base64.URLEncoding.EncodeToString([]byte(s)) },
	"base64url credentials": func(s string) string {
		return base64.URLEncoding.EncodeToString([]byte("x-access-token:" + s))
	},
	"basic header": func(s string) string {
		return "Basic " + base64.StdEncoding.EncodeToString([]byte("x-access-token:"+s))
	},
	"split by a line break": func(s string) string {
		return s[:len(s)/2] + "\n  " + s[len(s)/2:]
	},
	"lower-cased, split, no prefix": func(s string) string {
		s = strings.ToLower(strings.TrimPrefix(s, "ghs_"))
		return s[:5] + "\r\n" + s[5:]
	},
}

// leaks says whether text still holds the middle of form: line breaks,
// indentation and escapes set aside, case ignored.
func leaks(text, form string) bool {
	flat := func(s string) string {
		return strings.ToLower(strings.NewReplacer("\n", "", "\r", "", " ", "", `\n`, "", `\r`, "", "%0A", "", "%0D", "").Replace(s))
	}
	f := flat(form)
	return strings.Contains(flat(text), f[len(f)/3:2*len(f)/3])
}

// Every form of the token is redacted wherever the verb writes: stderr
// (an API error echoing it), stdout and the job summary (the fallback
// when the token may not comment), and the posted comment (a report
// carrying it).
func TestCICommentRedactsEveryForm(t *testing.T) {
	for name, form := range tokenForms {
		t.Run(name, func(t *testing.T) {
			echoed := form(secretToken)
			if !leaks(echoed, echoed) {
				t.Fatal("the leak check cannot see the form itself")
			}
			// stderr: the API's error quotes the token.
			fx := newCIFixture(t)
			fx.env.token = secretToken
			fx.fake.EchoToken("list", http.StatusInternalServerError, form)
			code, out, errOut := fx.run(t, "--body", fx.write(t, "comment.md", "## Verdict\n"))
			if code != exitError || !strings.Contains(errOut, "[REDACTED]") || leaks(out+errOut, echoed) {
				t.Fatalf("error path: exit %d\nstdout %s\nstderr %s", code, out, errOut)
			}

			// stdout and the job summary: the token may not comment, and
			// both the reason and the report quote the token.
			fx = newCIFixture(t)
			fx.env.token = secretToken
			fx.fake.EchoToken("create", http.StatusForbidden, form)
			code, out, errOut = fx.run(t, "--body", fx.write(t, "comment.md", "## Verdict\n\nleaked: "+echoed+"\n"))
			summary, _ := os.ReadFile(fx.env.summary)
			if code != 0 || !strings.Contains(out, "::warning") || !strings.Contains(string(summary), "[REDACTED]") {
				t.Fatalf("fallback: exit %d\nstdout %s\nstderr %s\nsummary %s", code, out, errOut, summary)
			}
			if leaks(out+errOut, echoed) || leaks(string(summary), echoed) {
				t.Fatalf("fallback leaked:\nstdout %s\nstderr %s\nsummary %s", out, errOut, summary)
			}

			// The comment: a report carrying the token is posted without it.
			fx = newCIFixture(t)
			fx.env.token = secretToken
			if code, out, errOut = fx.run(t, "--body", fx.write(t, "comment.md", "## Verdict\n\nleaked: "+echoed+"\n")); code != 0 {
				t.Fatalf("post: exit %d\n%s%s", code, out, errOut)
			}
			c := fx.fake.Comments(7)
			if len(c) != 1 || leaks(c[0].Body, echoed) || !strings.Contains(c[0].Body, "[REDACTED]") {
				t.Fatalf("posted %#v", c)
			}
		})
	}
}

// What --out writes is redacted like the comment: the evidence's text came
// from pull-request code, which could have echoed the token into it.
func TestCICommentOutIsRedacted(t *testing.T) {
	red := ghci.NewRedactor(secretToken)
	dir := t.TempDir()
	files := &artifact.Rendered{
		Diff:   []byte(`{"problems":["` + secretToken + `"]}` + "\n"),
		Report: []byte("token " + strings.ToUpper(secretToken) + "\n"),
		HTML:   []byte("<p>" + secretToken + "</p>\n"),
	}
	if err := comment.WriteVerified(dir, files, red); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"diff.json", "report.md", "pr.html"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(strings.ToLower(string(b)), strings.ToLower(secretToken)) {
			t.Errorf("%s carries the token: %s", name, b)
		}
	}
}
