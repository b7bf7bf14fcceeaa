package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/algal-assay/assay/ci/github/githubtest"
)

// everyForm is the token in every form of tokenForms at once, one after
// another, as a server echoing all of them (or a report quoting them)
// would write it.
func everyForm(token string) string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(tokenForms)) {
		out = append(out, name+": "+tokenForms[name](token))
	}
	return strings.Join(out, " | ")
}

// leaked names the forms of the token text still holds.
func leaked(text string) []string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(tokenForms)) {
		if leaks(text, tokenForms[name](secretToken)) {
			out = append(out, name)
		}
	}
	return out
}

// Every form of the token is redacted from everything `assay ci pr`
// shows (stdout, stderr, the job summary and the comment it posts) and everything `assay ci comment --from-artifact`
// writes from that artifact (the comment, stdout, stderr and the job
// summary of its fallback), whether the token comes back in the evidence
// (a case's answer quoting it, shown in the report as what the case got)
// or in the fake GitHub API's answers (an error quoting it, a fallback
// reason quoting it).
func TestCIPRAndCommentRedactEveryForm(t *testing.T) {
	clearActionsEnv(t)
	repo := newPRRepo(t)
	base := repo.git(t, "rev-parse", "main")
	baseTree := committedTreeAt(t, repo, "main")
	t.Setenv("GITHUB_TOKEN", secretToken)
	t.Setenv("GITHUB_REPOSITORY", "acme/widgets")
	check := func(t *testing.T, what, text string, redacted bool) {
		t.Helper()
		if l := leaked(text); len(l) > 0 {
			t.Errorf("%s leaks the token (%s):\n%s", what, strings.Join(l, ", "), text)
		}
		if redacted && !strings.Contains(text, "[REDACTED]") {
			t.Errorf("%s says nothing was redacted:\n%s", what, text)
		}
	}
	// pr runs the check of the branch at sha against fake, posting.
	pr := func(t *testing.T, sha, art string, fake *githubtest.Server) (code int, stdout, stderr, summary string) {
		t.Helper()
		work := t.TempDir()
		t.Setenv("GITHUB_EVENT_PATH", putFile(t, work, "event.json", `{"number":42,"pull_request":{"number":42,"head":{"sha":"`+sha+`"}},"repository":{"full_name":"acme/widgets"}}`))
		t.Setenv("GITHUB_STEP_SUMMARY", filepath.Join(work, "summary.md"))
		t.Setenv("GITHUB_API_URL", fake.URL)
		code, stdout, stderr = runCLI(t, "ci", "pr", "--base-ref", "main", "--repo-dir", repo.dir, "--artifact", art, "--post", "--concurrency", "2", "suites/invoice-extraction.bench.yaml")
		b, _ := os.ReadFile(filepath.Join(work, "summary.md"))
		return code, stdout, stderr, string(b)
	}

	for _, name := range slices.Sorted(maps.Keys(tokenForms)) {
		form := tokenForms[name]
		// The subtest's directories carry its name: plain characters, so
		// the evidence verifies wherever it is (ci/verify's plain paths).
		plain := strings.Map(func(r rune) rune {
			if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
				return r
			}
			return '-'
		}, name)
		t.Run(plain, func(t *testing.T) {
			// The small model answers the first invoice with a currency
			// quoting the token, and the gate wants that invoice
			// extracted: the report says what the case got.
			quoted, _ := json.Marshal("leak " + form(secretToken))
			sha := repo.branch(t, "quote-the-token", map[string][][2]string{
				"fixtures/extraction/cases.jsonl": {{`"extract": {"vendor": "ACME Hosting GmbH", "total": 1240, "currency": "EUR"`,
					`"extract": {"vendor": "ACME Hosting GmbH", "total": 1240, "currency": ` + string(quoted)}},
				"suites/invoice-extraction.bench.yaml": {
					{"min-passed: { extract-once: 3,", "min-passed: { extract-once: 2,"},
					{"    extract-reviewed: { credit-note: fail }\n", "    extract-reviewed: { credit-note: fail }\n    extract-once: { acme-hosting: pass }\n"},
				},
			})
			fake := githubtest.New("acme", "widgets")
			defer fake.Close()
			art := filepath.Join(t.TempDir(), "art")
			code, stdout, stderr, summary := pr(t, sha, art, fake)
			if code != 1 {
				t.Fatalf("ci pr: exit %d, want 1\nstdout %s\nstderr %s", code, stdout, stderr)
			}
			check(t, "ci pr stdout", stdout, false)
			check(t, "ci pr stderr", stderr, false)
			check(t, "ci pr job summary", summary, true)
			// The artifact's files stay what its evidence renders to
			// (runCLI holds every ci pr artifact to that), the token
			// included: the evidence beside them quotes it anyway.
			if c := fake.Comments(42); len(c) != 1 {
				t.Fatalf("ci pr posted %#v", c)
			} else {
				check(t, "the comment ci pr posted", c[0].Body, true)
			}

			// The comment workflow composes its comment from the
			// artifact's evidence, which still quotes the token.
			tree := committedTreeAt(t, repo, sha)
			comment := func(setup func(*ciFixture)) (*ciFixture, int, string, string) {
				t.Helper()
				fx := newCIFixture(t)
				fx.env.token = secretToken
				fx.workflowRun(t, sha)
				fx.fake.SetHead(42, sha)
				fx.fake.SetBase(42, base)
				fx.fake.SetTree(sha, tree)
				fx.fake.SetTree(base, baseTree)
				setup(fx)
				code, out, errOut := fx.run(t, "--from-artifact", art, "--paths", "suites/invoice-extraction.bench.yaml")
				return fx, code, out, errOut
			}
			fx, code, out, errOut := comment(func(*ciFixture) {})
			if code != 0 {
				t.Fatalf("ci comment: exit %d\nstdout %s\nstderr %s", code, out, errOut)
			}
			check(t, "ci comment stdout", out, false)
			check(t, "ci comment stderr", errOut, false)
			if posted := fx.fake.Comments(42); len(posted) != 1 {
				t.Fatalf("ci comment posted %#v", posted)
			} else {
				check(t, "the comment ci comment posted", posted[0].Body, true)
			}

			// The pull request may not be read (a fork's token): the
			// report goes to the log and the job summary, with the API's
			// echo in the reason.
			fx, code, out, errOut = comment(func(fx *ciFixture) { fx.fake.EchoToken("pull", http.StatusForbidden, form) })
			sum, _ := os.ReadFile(fx.env.summary)
			if code != 0 || !strings.Contains(out, "::warning") {
				t.Fatalf("ci comment fallback: exit %d\nstdout %s\nstderr %s", code, out, errOut)
			}
			check(t, "ci comment stdout (fallback)", out, true)
			check(t, "ci comment stderr (fallback)", errOut, false)
			check(t, "ci comment job summary (fallback)", string(sum), true)

			// The trees API fails quoting the token: the comment says the
			// workloads could not be listed, without it.
			fx, code, out, errOut = comment(func(fx *ciFixture) { fx.fake.EchoToken("tree", http.StatusInternalServerError, form) })
			if code != 0 {
				t.Fatalf("ci comment, trees API error: exit %d\nstdout %s\nstderr %s", code, out, errOut)
			}
			check(t, "ci comment stdout (trees API error)", out, false)
			check(t, "ci comment stderr (trees API error)", errOut, false)
			if posted := fx.fake.Comments(42); len(posted) != 1 {
				t.Fatalf("ci comment, trees API error, posted %#v", posted)
			} else {
				check(t, "the comment ci comment posted (trees API error)", posted[0].Body, true)
			}
		})
	}

	// ci pr's own API answers echo the token: the fallback when it may
	// not comment (stdout), and a server error (stderr). Every form at
	// once: the API's message is never cut.
	for _, tc := range []struct {
		endpoint string
		status   int
	}{{"create", http.StatusForbidden}, {"list", http.StatusInternalServerError}} {
		fake := githubtest.New("acme", "widgets")
		defer fake.Close()
		fake.EchoToken(tc.endpoint, tc.status, everyForm)
		head := repo.git(t, "rev-parse", "HEAD")
		code, stdout, stderr, _ := pr(t, head, filepath.Join(t.TempDir(), "art"), fake)
		what := fmt.Sprintf("ci pr (%s answers %d)", tc.endpoint, tc.status)
		if tc.status == http.StatusForbidden {
			if code != 1 || !strings.Contains(stdout, "::warning") {
				t.Fatalf("%s: exit %d\nstdout %s\nstderr %s", what, code, stdout, stderr)
			}
			check(t, what+" stdout", stdout, true)
			check(t, what+" stderr", stderr, false)
			continue
		}
		if code != exitError {
			t.Fatalf("%s: exit %d\nstdout %s\nstderr %s", what, code, stdout, stderr)
		}
		check(t, what+" stdout", stdout, false)
		check(t, what+" stderr", stderr, true)
	}
}

// committedTreeAt is what the fake GitHub's trees API lists for the
// repository at ref: every committed file, by path, with its bytes.
func committedTreeAt(t *testing.T, repo *prRepo, ref string) map[string]string {
	t.Helper()
	files := map[string]string{}
	for _, p := range strings.Split(repo.git(t, "ls-tree", "-r", "--name-only", ref), "\n") {
		if p == "" {
			continue
		}
		b, err := exec.Command("git", "-C", repo.dir, "show", ref+":"+p).Output()
		if err != nil {
			t.Fatal(err)
		}
		files[p] = string(b)
	}
	return files
}
