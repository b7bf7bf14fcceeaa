package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	ghci "github.com/algal-assay/assay/ci/github"
	"github.com/algal-assay/assay/ci/github/githubtest"
)

const prMarker = "<!-- assay:pr-check -->"

// ghEnv is the GitHub Actions environment of one test run. Every variable
// the verb reads is set, empty when unused, so a test run inside a real
// Actions job cannot leak the job's values in.
type ghEnv struct {
	token, apiURL, repo, eventPath, summary, serverURL, runID string
}

func (e ghEnv) apply(t *testing.T) {
	t.Setenv("GITHUB_TOKEN", e.token)
	t.Setenv("GITHUB_API_URL", e.apiURL)
	t.Setenv("GITHUB_REPOSITORY", e.repo)
	t.Setenv("GITHUB_EVENT_PATH", e.eventPath)
	t.Setenv("GITHUB_STEP_SUMMARY", e.summary)
	t.Setenv("GITHUB_SERVER_URL", e.serverURL)
	t.Setenv("GITHUB_RUN_ID", e.runID)
}

type ciFixture struct {
	fake *githubtest.Server
	dir  string
	env  ghEnv
}

func newCIFixture(t *testing.T) *ciFixture {
	t.Helper()
	fake := githubtest.New("acme", "widgets")
	t.Cleanup(fake.Close)
	dir := t.TempDir()
	fx := &ciFixture{fake: fake, dir: dir}
	fx.env = ghEnv{
		token: "ghs_test", apiURL: fake.URL, repo: "acme/widgets",
		eventPath: fx.write(t, "event.json", `{"action":"synchronize","number":7,"pull_request":{"number":7},"repository":{"full_name":"acme/widgets"}}`),
		summary:   filepath.Join(dir, "summary.md"),
		serverURL: "https://github.test", runID: "99",
	}
	return fx
}

func (fx *ciFixture) write(t *testing.T, name, content string) string {
	t.Helper()
	return putFile(t, fx.dir, name, content)
}

func (fx *ciFixture) run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	fx.env.apply(t)
	return runCLI(t, append([]string{"ci", "comment"}, args...)...)
}

func TestCICommentCreatesThenUpdates(t *testing.T) {
	fx := newCIFixture(t)
	body := fx.write(t, "comment.md", "## Verdict\n\n**PASS**\n")
	code, out, errOut := fx.run(t, "--body", body)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	res := decodeObject(t, out)
	if res["action"] != "created" || res["pr"] != float64(7) || res["repo"] != "acme/widgets" {
		t.Fatalf("result %v", res)
	}
	comments := fx.fake.Comments(7)
	if len(comments) != 1 || comments[0].Body != prMarker+"\n## Verdict\n\n**PASS**\n" {
		t.Fatalf("comments %#v", comments)
	}

	fx.write(t, "comment.md", "## Verdict\n\n**FAIL**\n")
	code, out, errOut = fx.run(t, "--body", body)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if res := decodeObject(t, out); res["action"] != "updated" || res["url"] != comments[0].URL(fx.fake) {
		t.Fatalf("result %v", res)
	}
	comments = fx.fake.Comments(7)
	if len(comments) != 1 || comments[0].Body != prMarker+"\n## Verdict\n\n**FAIL**\n" {
		t.Fatalf("comments after update %#v", comments)
	}
	var methods []string
	for _, r := range fx.fake.Requests() {
		methods = append(methods, r.Method)
		if r.Auth != "Bearer ghs_test" {
			t.Errorf("request %s %s sent auth %q", r.Method, r.Path, r.Auth)
		}
	}
	if got := strings.Join(methods, " "); got != "GET POST GET PATCH" {
		t.Fatalf("requests %s", got)
	}
}

func TestCICommentKeysKeepSeparateComments(t *testing.T) {
	fx := newCIFixture(t)
	body := fx.write(t, "comment.md", "report\n")
	for _, key := range []string{"pr-check", "bench", "pr-check"} {
		if code, _, errOut := fx.run(t, "--body", body, "--key", key); code != 0 {
			t.Fatalf("key %s: exit %d: %s", key, code, errOut)
		}
	}
	comments := fx.fake.Comments(7)
	if len(comments) != 2 || !strings.HasPrefix(comments[0].Body, prMarker) || !strings.HasPrefix(comments[1].Body, "<!-- assay:bench -->") {
		t.Fatalf("comments %#v", comments)
	}
}

func TestCICommentMarkerOnLaterPage(t *testing.T) {
	fx := newCIFixture(t)
	for i := range 250 {
		fx.fake.AddComment(7, "reviewer", fmt.Sprintf("comment %d", i))
	}
	id := fx.fake.AddComment(7, githubtest.Bot, prMarker+"\nold")
	body := fx.write(t, "comment.md", "new\n")
	code, out, errOut := fx.run(t, "--body", body)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if res := decodeObject(t, out); res["action"] != "updated" {
		t.Fatalf("result %v", res)
	}
	comments := fx.fake.Comments(7)
	if len(comments) != 251 || comments[250].ID != id || comments[250].Body != prMarker+"\nnew\n" {
		t.Fatalf("%d comments, last %#v", len(comments), comments[len(comments)-1])
	}
	lists := 0
	for _, r := range fx.fake.Requests() {
		if r.Method == http.MethodGet {
			lists++
		}
	}
	if lists != 3 {
		t.Fatalf("%d list requests, want 3 pages of 100", lists)
	}
}

func TestCICommentForkFallsBackToSummary(t *testing.T) {
	fx := newCIFixture(t)
	fx.fake.Fail("create", http.StatusForbidden)
	fx.write(t, "summary.md", "# earlier step\n")
	report := "## Verdict\n\n**FAIL**\n::error::injected by the PR\n"
	body := fx.write(t, "comment.md", report)
	code, out, errOut := fx.run(t, "--body", body)
	if code != 0 {
		t.Fatalf("exit %d, want 0: %s", code, errOut)
	}
	if !strings.HasPrefix(out, "::warning title=assay ci comment::cannot comment on acme/widgets#7 (") ||
		!strings.Contains(out, "403") {
		t.Fatalf("no warning line: %q", out)
	}
	if !strings.Contains(out, report) {
		t.Fatal("report not in the job log")
	}
	// The report is printed between ::stop-commands::T and ::T::.
	lines := strings.Split(out, "\n")
	var stop string
	for _, l := range lines {
		if tok, ok := strings.CutPrefix(l, "::stop-commands::"); ok {
			stop = tok
		}
	}
	if len(stop) != 32 || !strings.Contains(out, "::stop-commands::"+stop+"\n"+report+"::"+stop+"::\n") {
		t.Fatalf("report not fenced from workflow commands: %q", out)
	}
	summary, err := os.ReadFile(fx.env.summary)
	if err != nil || string(summary) != "# earlier step\n"+report {
		t.Fatalf("summary %q, %v", summary, err)
	}
	if len(fx.fake.Comments(7)) != 0 {
		t.Fatal("a comment was stored")
	}
}

func TestCICommentServerErrorFails(t *testing.T) {
	fx := newCIFixture(t)
	fx.fake.Fail("create", http.StatusInternalServerError)
	body := fx.write(t, "comment.md", "x\n")
	code, _, errOut := fx.run(t, "--body", body)
	if code != exitError || !strings.Contains(errOut, `"code":"GITHUB_API"`) {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
}

func TestCICommentTruncates(t *testing.T) {
	fx := newCIFixture(t)
	var b strings.Builder
	b.WriteString("## Verdict\n\n**FAIL**: 2 gates failed.\n\n## Pareto diff\n\n| a | b |\n|---|---|\n| x | y |\n\n## Promotion diff\n\n- none\n\n## Largest regressions\n\n<details>\n<summary>500 cases</summary>\n\n```text\n")
	for i := range 20000 {
		fmt.Fprintf(&b, "case %06d regressed by %d%%\n", i, i%97)
	}
	b.WriteString("```\n</details>\n")
	body := fx.write(t, "comment.md", b.String())
	code, _, errOut := fx.run(t, "--body", body)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	comments := fx.fake.Comments(7)
	if len(comments) != 1 {
		t.Fatalf("%d comments: never split", len(comments))
	}
	got := comments[0].Body
	if n := ghci.Length(got); n > ghci.MaxCommentChars {
		t.Fatalf("comment is %d characters", n)
	}
	if !strings.HasPrefix(got, prMarker+"\n## Verdict\n\n**FAIL**: 2 gates failed.\n") {
		t.Fatalf("verdict lost: %q", got[:100])
	}
	for _, want := range []string{"## Pareto diff", "## Promotion diff", "case 000000", "```\n</details>\n",
		"not shown in full: Largest regressions (cut).",
		"[the check run](https://github.test/acme/widgets/actions/runs/99)."} {
		if !strings.Contains(got, want) {
			t.Errorf("comment lacks %q", want)
		}
	}
}

// writeArtifact lays out the check job's artifact and a workflow_run event.
func (fx *ciFixture) workflowRun(t *testing.T, headSHA string) {
	t.Helper()
	fx.env.eventPath = fx.write(t, "run-event.json", `{"action":"completed","workflow_run":{"id":55,"event":"pull_request","head_sha":"`+headSHA+
		`","html_url":"https://github.test/acme/widgets/actions/runs/55","pull_requests":[]},"repository":{"full_name":"acme/widgets"}}`)
}

func TestCICommentFromArtifact(t *testing.T) {
	art := builtArtifact(t)
	head := artifactHead
	fx := newCIFixture(t)
	fx.workflowRun(t, head)
	fx.fake.SetHead(12, head)
	fx.fake.SetTree(head, committedFiles(t))
	code, out, errOut := fx.run(t, "--from-artifact", art)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if res := decodeObject(t, out); res["action"] != "created" || res["pr"] != float64(12) {
		t.Fatalf("result %v", res)
	}
	if c := fx.fake.Comments(12); len(c) != 1 || !strings.HasPrefix(c[0].Body, prMarker+"\n## Assay PR check\n") || !strings.Contains(c[0].Body, "## Pareto sets") {
		t.Fatalf("comments %#v", c)
	}
	if reqs := fx.fake.Requests(); reqs[0].Path != "/repos/acme/widgets/pulls/12" {
		t.Fatalf("head not checked first: %#v", reqs[0])
	}
	// The posted comment ends with how to reproduce the check, and never
	// links the pr.html the check's pull-request code uploaded.
	body := fx.fake.Comments(12)[0].Body
	if !strings.Contains(body, "## Reproduce\n\nReproduce locally: `assay ci pr --base-ref origin/") || strings.Contains(body, "pr.html") {
		t.Errorf("comment does not end with the reproduce line, or links pr.html:\n%s", body)
	}
}

func TestCICommentFromArtifactWrongPR(t *testing.T) {
	head := strings.Repeat("c", 40)
	fx := newCIFixture(t)
	fx.workflowRun(t, head)
	fx.fake.SetHead(3, strings.Repeat("d", 40)) // someone else's PR
	fx.write(t, "art/comment.md", "spoofed\n")
	fx.write(t, "art/pr-number", "3\n")
	code, out, errOut := fx.run(t, "--from-artifact", filepath.Join(fx.dir, "art"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "::warning") || !strings.Contains(out, "not commenting") {
		t.Fatalf("stdout %q", out)
	}
	if len(fx.fake.Comments(3)) != 0 {
		t.Fatal("commented on a PR whose head is not the checked commit")
	}

	// An artifact whose own head_sha contradicts the run is rejected.
	fx.write(t, "art2/comment.md", "x\n")
	fx.write(t, "art2/pr.json", `{"number":3,"head_sha":"`+strings.Repeat("e", 40)+`"}`)
	code, _, errOut = fx.run(t, "--from-artifact", filepath.Join(fx.dir, "art2"))
	if code != exitError || !strings.Contains(errOut, `"code":"ARTIFACT_INVALID"`) {
		t.Fatalf("exit %d: %s", code, errOut)
	}
}

func TestCICommentFromArtifactInvalid(t *testing.T) {
	fx := newCIFixture(t)
	fx.write(t, "art2/comment.md", "x")
	fx.write(t, "art2/pr-number", "0")
	code, _, errOut := fx.run(t, "--from-artifact", filepath.Join(fx.dir, "art2"))
	if code != exitError || !strings.Contains(errOut, `"code":"ARTIFACT_INVALID"`) {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if len(fx.fake.Requests()) != 0 {
		t.Fatal("an artifact naming no pull request must be rejected before any API call")
	}

	// An artifact that names its pull request but carries no evidence (or
	// a symbolic link in it) gets a comment saying so, and nothing else.
	fx.write(t, "art/comment.md", "## Assay PR check\n\n**✅ Pass**\n")
	fx.write(t, "art/pr-number", "4")
	code, _, errOut = fx.run(t, "--from-artifact", filepath.Join(fx.dir, "art"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	c := fx.fake.Comments(4)
	if len(c) != 1 || !strings.Contains(c[0].Body, "**❌ Fail**") || !strings.Contains(c[0].Body, "cannot be read as evidence") || strings.Contains(c[0].Body, "✅") {
		t.Fatalf("comments %#v", c)
	}
	art := builtArtifact(t)
	if err := os.Symlink("/etc/passwd", filepath.Join(art, "head", "tree", "suites", "x.bench.yaml")); err != nil {
		t.Fatal(err)
	}
	fx.write(t, "ev.json", `{"number":12,"pull_request":{"number":12},"repository":{"full_name":"acme/widgets"}}`)
	code, _, errOut = fx.run(t, "--from-artifact", art)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if c := fx.fake.Comments(12); len(c) != 1 || !strings.Contains(c[0].Body, "is not a regular file") || strings.Contains(c[0].Body, "root:") {
		t.Fatalf("comments %#v", c)
	}
}

func TestCICommentRepoAndPRFromEvent(t *testing.T) {
	fx := newCIFixture(t)
	fx.env.repo = "" // only the payload names the repository
	fx.env.eventPath = fx.write(t, "e.json", `{"number":31,"pull_request":{"number":31},"repository":{"full_name":"acme/widgets"}}`)
	body := fx.write(t, "comment.md", "r\n")
	if code, _, errOut := fx.run(t, "--body", body); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if len(fx.fake.Comments(31)) != 1 {
		t.Fatal("comment not posted on the payload's PR")
	}
	// Flags win over the environment.
	if code, _, errOut := fx.run(t, "--body", body, "--pr", "32", "--repo", "acme/widgets"); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if len(fx.fake.Comments(32)) != 1 {
		t.Fatal("--pr ignored")
	}
	// A push event names no PR.
	fx.env.eventPath = fx.write(t, "push.json", `{"ref":"refs/heads/main","repository":{"full_name":"acme/widgets"}}`)
	code, _, errOut := fx.run(t, "--body", body)
	if code != exitError || !strings.Contains(errOut, "no pull request number") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
}

func TestCICommentErrors(t *testing.T) {
	fx := newCIFixture(t)
	body := fx.write(t, "comment.md", "r\n")
	for _, tc := range []struct {
		name   string
		args   []string
		noTok  bool
		code   int
		stderr string
	}{
		{"missing token", []string{"--body", body}, true, 2, `"code":"TOKEN_MISSING"`},
		{"no source", nil, false, 2, "exactly one of --body"},
		{"two sources", []string{"--body", body, "--from-artifact", fx.dir}, false, 2, "exactly one of --body"},
		{"pr with artifact", []string{"--from-artifact", fx.dir, "--pr", "3"}, false, 2, "--pr cannot be used"},
		{"negative pr", []string{"--body", body, "--pr", "-3"}, false, 2, "positive"},
		{"bad pr", []string{"--body", body, "--pr", "x"}, false, 2, "invalid argument"},
		{"bad key", []string{"--body", body, "--key", "A -->"}, false, 2, "--key"},
		{"bad repo", []string{"--body", body, "--repo", "acme/../x"}, false, 2, "--repo"},
		{"missing body", []string{"--body", filepath.Join(fx.dir, "nope.md")}, false, 2, `"code":"INPUT_INVALID"`},
		{"stray arg", []string{"--body", body, "extra"}, false, 2, "unknown command"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			saved := fx.env
			if tc.noTok {
				fx.env.token = ""
			}
			code, _, errOut := fx.run(t, tc.args...)
			fx.env = saved
			if code != tc.code || !strings.Contains(errOut, tc.stderr) {
				t.Fatalf("exit %d, stderr %q; want %d with %q", code, errOut, tc.code, tc.stderr)
			}
		})
	}
	if len(fx.fake.Requests()) != 0 {
		t.Fatal("a rejected invocation reached the API")
	}
}
