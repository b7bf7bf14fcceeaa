package main

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/algal-assay/assay/ci/artifact"
	"github.com/algal-assay/assay/ci/diff"
	ghci "github.com/algal-assay/assay/ci/github"
)

// prRepo is a temporary git repository holding a copy of the fixtures on
// main.
type prRepo struct {
	dir string
}

func newPRRepo(t *testing.T) *prRepo {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	r := &prRepo{dir: t.TempDir()}
	for _, d := range []string{"suites", "fixtures"} {
		copyDir(t, filepath.Join("..", "..", d), filepath.Join(r.dir, d))
	}
	r.git(t, "init", "--quiet", "--initial-branch=main")
	r.git(t, "add", ".")
	r.git(t, "commit", "--quiet", "-m", "base fixtures")
	return r
}

func (r *prRepo) git(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", r.dir, "-c", "user.name=assay-test", "-c", "user.email=test@assay.invalid", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// branch creates name from main, applies the replacements (file -> old,
// new pairs; each old must occur once) and commits.
func (r *prRepo) branch(t *testing.T, name string, edits map[string][][2]string) string {
	t.Helper()
	r.git(t, "checkout", "--quiet", "-B", name, "main")
	for _, file := range slices.Sorted(maps.Keys(edits)) {
		p := filepath.Join(r.dir, file)
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		s := string(data)
		for _, e := range edits[file] {
			if n := strings.Count(s, e[0]); n != 1 {
				t.Fatalf("%s: %q occurs %d times", file, e[0], n)
			}
			s = strings.Replace(s, e[0], e[1], 1)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r.git(t, "commit", "--quiet", "-am", name)
	return r.git(t, "rev-parse", "HEAD")
}

// clearActionsEnv keeps a run inside a real Actions job from leaking in.
func clearActionsEnv(t *testing.T) {
	for _, k := range []string{"GITHUB_BASE_REF", "GITHUB_EVENT_PATH", "GITHUB_STEP_SUMMARY", "GITHUB_SERVER_URL",
		"GITHUB_REPOSITORY", "GITHUB_RUN_ID", "GITHUB_TOKEN", "GITHUB_API_URL"} {
		t.Setenv(k, "")
	}
}

// The frontier model gets worse and the pull request accepts it by
// loosening the gate: the check passes, and its comment carries the
// Pareto diff.
var acceptFrontierDrop = map[string][][2]string{
	"suites/ticket-triage.bench.yaml": {
		{"frontier: { route: technical }", "frontier: { route: billing }"},
		{"frontier: { route: account }", "frontier: { route: billing }"},
		{"frontier: { route: technical, escalate: technical }", "frontier: { route: billing, escalate: technical }"},
		{"    frontier-single: 6\n", "    frontier-single: 3\n"},
		{"on-pareto: [frontier-single, escalating]", "on-pareto: [cheap-single, escalating]"},
	},
}

// The large model now wins the intent foundry, but the gate still
// expects the cascade: the check fails.
var promoteLarge = map[string][][2]string{
	"suites/intent-select.foundry.yaml": {
		{"large: { intent: refund, escalate: refund }", "large: { intent: refund, escalate: bug }"},
		{"screen: other }\n      large: { intent: how-to }", "screen: other }\n      large: { intent: other }"},
	},
}

func TestCIPRGatesHold(t *testing.T) {
	clearActionsEnv(t)
	repo := newPRRepo(t)
	sha := repo.branch(t, "accept-frontier-drop", acceptFrontierDrop)
	work := t.TempDir()
	event := putFile(t, work, "event.json", `{"action":"synchronize","number":42,"pull_request":{"number":42,"head":{"sha":"`+sha+`"}},"repository":{"full_name":"acme/widgets"}}`)
	summary := filepath.Join(work, "summary.md")
	t.Setenv("GITHUB_EVENT_PATH", event)
	t.Setenv("GITHUB_STEP_SUMMARY", summary)
	t.Setenv("GITHUB_SERVER_URL", "https://github.com")
	t.Setenv("GITHUB_REPOSITORY", "acme/widgets")
	t.Setenv("GITHUB_RUN_ID", "7")
	art := filepath.Join(work, "out", "assay-pr-check")

	code, stdout, stderr := runCLI(t, "ci", "pr", "--base-ref", "main", "--repo-dir", repo.dir, "--artifact", art, "--concurrency", "2")
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	var res struct {
		Passed  bool     `json:"passed"`
		Changed []string `json:"changed"`
		PR      int      `json:"pr"`
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil || !res.Passed || res.PR != 42 || strings.Join(res.Changed, ",") != "ticket-triage" {
		t.Fatalf("stdout %s (%v)", stdout, err)
	}

	// The artifact is what the comment workflow reads: it must pass
	// ci/github's own validation.
	a, err := ghci.ReadArtifact(art)
	if err != nil {
		t.Fatal(err)
	}
	if a.PR != 42 || a.HeadSHA != sha {
		t.Fatalf("artifact PR %d head %s, want 42 %s", a.PR, a.HeadSHA, sha)
	}
	raw, err := os.ReadFile(filepath.Join(art, ghci.ArtifactBody))
	if err != nil {
		t.Fatal(err)
	}
	// What the comment workflow posts is composed again, from the
	// artifact's evidence alone, and says the same.
	posted, err := artifact.ComposeComment(context.Background(), art, artifact.CommentOptions{Marker: prMarker, Conclusion: "success", HeadSHA: sha, Tree: artifact.GitTree(repo.dir)})
	if err != nil || !posted.Verified || !posted.Passed {
		t.Fatalf("trusted comment: %v %+v", err, posted)
	}
	for name, body := range map[string]string{"comment.md": string(raw), "trusted comment": posted.Body} {
		for _, want := range []string{"<!-- assay:pr-check -->\n## Assay PR check", "**✅ Pass**", "## Pareto sets",
			"Pareto set: escalating, frontier-single, cheap-single → escalating, cheap-single · joined: none · left: frontier-single",
			"| frontier-single | 6/6 → 3/6 (−3) | within noise (p = 0.25) | 1272 | 0.003960 | 6 | **left**: dominated by cheap-single |",
			"- **frontier-single** left the Pareto set: cheap-single dominates it (better on passed and cost, as good on calls).", "## Promotions", "<details><summary>1 regression, largest first</summary>"} {
			if !strings.Contains(body, want) {
				t.Errorf("%s lacks %q:\n%s", name, want, body)
			}
		}
		if ghci.Length(body) > ghci.MaxCommentChars {
			t.Fatalf("%s is %d characters", name, ghci.Length(body))
		}
		if strings.Contains(body, repo.dir) || strings.Contains(body, os.TempDir()+string(filepath.Separator)+"assay-pr-") || strings.Contains(body, art) {
			t.Fatalf("%s names a local path:\n%s", name, body)
		}
	}
	if !strings.Contains(posted.Body, "The check run concluded **success**.") {
		t.Errorf("trusted comment does not state the conclusion:\n%s", posted.Body)
	}
	// The comment ends with how to reproduce the check, links to the head
	// files it names at the head commit, and where the drawn report is.
	footer := "Reproduce locally: `assay ci pr --base-ref main`. Files: [`suites/ticket-triage.bench.yaml`](https://github.com/acme/widgets/blob/" + sha +
		"/suites/ticket-triage.bench.yaml). Drawn report: `pr.html` in the `assay-pr-check` artifact of [the check run](https://github.com/acme/widgets/actions/runs/7).\n"
	if !strings.HasSuffix(string(raw), footer) {
		t.Errorf("comment does not end with %q:\n%s", footer, string(raw))
	}
	page, err := os.ReadFile(filepath.Join(art, "pr.html"))
	if err != nil || !strings.Contains(string(page), `<circle class="point dominated head" data-system="frontier-single" data-side="head"`) {
		t.Errorf("pr.html (%v) does not draw frontier-single dominated at head", err)
	}

	// The artifact verifies from another directory, with no store: its
	// own stores and workloads, and the repository (--repo-dir) only to
	// list the workloads at its commits.
	elsewhere := t.TempDir()
	t.Chdir(elsewhere)
	if code, vout, verr := runCLI(t, "ci", "verify", "--repo-dir", repo.dir, art); code != 0 || !strings.Contains(vout, "all 12 files verified") {
		t.Fatalf("ci verify of the artifact: exit %d\n%s%s", code, vout, verr)
	}
	if code, vout, _ := runCLI(t, "ci", "verify", art); code != 1 || !strings.Contains(vout, "cannot be listed") {
		t.Fatalf("ci verify of the artifact without the repository must fail closed: exit %d\n%s", code, vout)
	}

	var d diff.Diff
	data, err := os.ReadFile(filepath.Join(art, "diff.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &d); err != nil || !d.Verdict.Passed || len(d.Workloads) != 4 {
		t.Fatalf("diff.json: %v, %+v", err, d.Verdict)
	}
	runs, _ := filepath.Glob(filepath.Join(art, "head", "runs", "*", "*", "gate.json"))
	if len(runs) != 4 {
		t.Fatalf("artifact holds %d head runs, want 4", len(runs))
	}
	sum, err := os.ReadFile(summary)
	if err != nil || !strings.Contains(string(sum), "## Pareto sets") || !strings.Contains(string(sum), "## Pareto plots") || strings.Contains(string(sum), "<!-- assay:") {
		t.Fatalf("job summary: %v\n%s", err, sum)
	}
	// The base worktree is gone.
	if out := repo.git(t, "worktree", "list"); strings.Count(out, "\n") != 0 {
		t.Fatalf("worktrees left behind:\n%s", out)
	}
}

func TestCIPRHeadGateFails(t *testing.T) {
	clearActionsEnv(t)
	repo := newPRRepo(t)
	sha := repo.branch(t, "promote-large", promoteLarge)
	// Inside the working tree, as the workflow has it; run twice, so an
	// earlier artifact is there too.
	art := filepath.Join(repo.dir, "out", "assay-pr-check")
	for range 2 {
		code, stdout, stderr := runCLI(t, "ci", "pr", "--base-ref", "main", "--repo-dir", repo.dir, "--artifact", art, "suites/intent-select.foundry.yaml")
		if code != 1 {
			t.Fatalf("exit %d, want 1\nstdout: %s\nstderr: %s", code, stdout, stderr)
		}
	}
	// The artifact copies sources, never outputs: no earlier artifact in
	// its trees, and it names the head commit.
	for _, side := range []string{"base", "head"} {
		if _, err := os.Stat(filepath.Join(art, side, "tree", "out")); !os.IsNotExist(err) {
			t.Errorf("%s tree holds the artifact directory: %v", side, err)
		}
	}
	if a, err := artifact.Open(art); err != nil || a.HeadCommit != sha {
		t.Fatalf("artifact head commit %v, want %s: %v", a, sha, err)
	}
	// Diffed from inside the work tree, messages still name files as the
	// repository has them.
	t.Chdir(repo.dir)
	if code, stdout, stderr := runCLI(t, "ci", "diff", "--artifact", filepath.Join("out", "assay-pr-check")); code != 0 ||
		!strings.Contains(stdout, "the gate at suites/intent-select.foundry.yaml:") || strings.Contains(stdout, "assay-pr-check") {
		t.Fatalf("ci diff --artifact: exit %d\n%s%s", code, stdout, stderr)
	}
	body, err := os.ReadFile(filepath.Join(art, ghci.ArtifactBody))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"**❌ Fail** · 1 of 1 workloads fail", "gate *promotes organism:assay-intent-cascade* fails",
		"**Promoted candidate changed**: `organism:assay-intent-cascade` (`sha256:68ce90ab4e97`) → `organism:assay-intent-large` (`sha256:7c7d6c2041f9`)"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("comment.md lacks %q:\n%s", want, body)
		}
	}
	// No event: no pr.json, so the comment workflow refuses the artifact
	// rather than guessing the pull request.
	if _, err := os.Stat(filepath.Join(art, ghci.ArtifactPRJSON)); !os.IsNotExist(err) {
		t.Fatalf("pr.json written without an event: %v", err)
	}
}

func TestCIPRNeedsBaseRef(t *testing.T) {
	clearActionsEnv(t)
	if code, _, stderr := runCLI(t, "ci", "pr", "--artifact", filepath.Join(t.TempDir(), "a")); code != exitError ||
		!strings.Contains(stderr, "no base ref") {
		t.Fatalf("exit %d, stderr %s", code, stderr)
	}
}

func TestCIDiff(t *testing.T) {
	clearActionsEnv(t)
	repo := newPRRepo(t)
	repo.branch(t, "accept-frontier-drop", acceptFrontierDrop)
	out := filepath.Join(t.TempDir(), "diff.json")
	if code, _, stderr := runCLI(t, "ci", "diff", "--base-ref", "main", "--repo-dir", repo.dir, "--format", "json", "--out", out, "suites/ticket-triage.bench.yaml"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var d diff.Diff
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &d); err != nil || len(d.Workloads) != 1 || d.Workloads[0].Bench == nil ||
		strings.Join(d.Workloads[0].Bench.Left, ",") != "frontier-single" {
		t.Fatalf("diff: %v\n%s", err, data)
	}

	// Two runs roots given directly: the same runs diff to no change.
	runs := t.TempDir()
	if code, _, stderr := runCLI(t, "run", "--dir", filepath.Join(runs, "store"), "--out", filepath.Join(runs, "runs"), filepath.Join("..", "..", "suites", "invoice-extraction.bench.yaml")); code != 0 {
		t.Fatalf("assay run: exit %d: %s", code, stderr)
	}
	code, stdout, stderr := runCLI(t, "ci", "diff", "--base", filepath.Join(runs, "runs"), "--head", filepath.Join(runs, "runs"), "--archive", "-",
		"--dir", filepath.Join(runs, "store"), "--head-tree", filepath.Join("..", "..", "suites"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "No workload's results changed.") || !strings.Contains(stdout, "Pareto set: extract-reviewed, extract-once") {
		t.Fatalf("markdown:\n%s", stdout)
	}
}

func TestCIDiffUsage(t *testing.T) {
	for _, args := range [][]string{
		{"ci", "diff"},
		{"ci", "diff", "--base", "a"},
		{"ci", "diff", "--base", "a", "--head", "b", "--base-ref", "main"},
		{"ci", "diff", "--base", "a", "--head", "b", "--format", "yaml"},
		{"ci", "diff", "--base", "a", "--head", "b", "suites"},
	} {
		if code, _, stderr := runCLI(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", args, code, stderr)
		}
	}
}

// signalOn sends the process an interrupt when a log line contains text
// and holds the logging check until the signal has been delivered: the
// test's own channel receiving it means every registered handler has been
// handed it, and the short pause lets the command's handler cancel its
// context before the check goes on. Waiting on delivery, not on a fixed
// sleep alone, keeps the test steady on a loaded machine.
type signalOn struct {
	text string
	sent *bool
	seen <-chan os.Signal
}

func (s signalOn) Write(b []byte) (int, error) {
	if !*s.sent && strings.Contains(string(b), s.text) {
		*s.sent = true
		_ = syscall.Kill(os.Getpid(), syscall.SIGINT)
		select {
		case <-s.seen:
		case <-time.After(10 * time.Second):
		}
		time.Sleep(100 * time.Millisecond)
	}
	return len(b), nil
}

// An interrupt (Ctrl-C, a cancelled Actions job) stops the check, which
// then removes its base worktree instead of leaving it registered in the
// repository.
func TestCIPRInterruptRemovesWorktree(t *testing.T) {
	clearActionsEnv(t)
	repo := newPRRepo(t)
	// Keep this test process alive whatever the command does with SIGINT;
	// without the command's own handler the check would just run on.
	keep := make(chan os.Signal, 1)
	signal.Notify(keep, syscall.SIGINT)
	defer signal.Stop(keep)
	sent := false
	var stdout bytes.Buffer
	code := run([]string{"ci", "pr", "--repo-dir", repo.dir, "--base-ref", "main", "--artifact", filepath.Join(t.TempDir(), "art")},
		nil, &stdout, signalOn{"assay ci: base", &sent, keep})
	if !sent {
		t.Fatal("the check never logged its base run")
	}
	if code != exitError || stdout.Len() != 0 {
		t.Fatalf("exit %d, stdout %q; want the check cancelled (exit 2, no summary)", code, stdout.String())
	}
	if out := repo.git(t, "worktree", "list", "--porcelain"); strings.Count(out, "worktree ") != 1 {
		t.Fatalf("worktree left behind:\n%s", out)
	}
}

// Runs made beforehand (as ci merge assembles them from shards) give the
// same check as runs the check makes itself: the same comment and diff,
// and an artifact the trusted poster verifies.
func TestCIPRDiffsRunsMadeBeforehand(t *testing.T) {
	clearActionsEnv(t)
	repo := newPRRepo(t)
	sha := repo.branch(t, "accept-frontier-drop", acceptFrontierDrop)
	work := t.TempDir()
	base := filepath.Join(work, "base-tree")
	repo.git(t, "worktree", "add", "--detach", "--quiet", base, "main")
	made := map[string]string{}
	for side, tree := range map[string]string{"base": base, "head": repo.dir} {
		runs, store := filepath.Join(work, side, "runs"), filepath.Join(work, side, ".algal")
		if code, _, stderr := runCLI(t, "run", filepath.Join(tree, "suites"), "--out", runs, "--dir", store); code != 0 {
			t.Fatalf("%s run: exit %d\n%s", side, code, stderr)
		}
		made["--"+side+"-runs"], made["--"+side+"-store"] = runs, store
	}
	check := func(art string, extra ...string) (string, string) {
		t.Helper()
		args := append([]string{"ci", "pr", "--base-ref", "main", "--repo-dir", repo.dir, "--artifact", art, "--concurrency", "2"}, extra...)
		code, stdout, stderr := runCLI(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d\nstdout: %s\nstderr: %s", args, code, stdout, stderr)
		}
		comment, err := os.ReadFile(filepath.Join(art, ghci.ArtifactBody))
		if err != nil {
			t.Fatal(err)
		}
		return string(comment), stderr
	}
	own, _ := check(filepath.Join(work, "own"))
	var flags []string
	for _, k := range slices.Sorted(maps.Keys(made)) {
		flags = append(flags, k, made[k])
	}
	art := filepath.Join(work, "made")
	fromMade, log := check(art, flags...)
	if !strings.Contains(log, "runs made beforehand") {
		t.Errorf("the log does not say the runs were made beforehand:\n%s", log)
	}
	if fromMade != own {
		t.Fatalf("comments differ:\n--- own runs\n%s\n--- made beforehand\n%s", own, fromMade)
	}
	posted, err := artifact.ComposeComment(context.Background(), art, artifact.CommentOptions{Marker: prMarker, Conclusion: "success", HeadSHA: sha, Tree: artifact.GitTree(repo.dir)})
	if err != nil || !posted.Verified || !posted.Passed {
		t.Fatalf("trusted comment: %v %+v", err, posted)
	}

	// An empty base (one that could not be merged) is a base with no runs:
	// the check still runs, and every head workload counts as new.
	emptyRuns, emptyStore := filepath.Join(work, "empty", "runs"), filepath.Join(work, "empty", ".algal")
	for _, d := range []string{emptyRuns, emptyStore} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if code, stdout, stderr := runCLI(t, "ci", "pr", "--base-ref", "main", "--repo-dir", repo.dir, "--artifact", filepath.Join(work, "empty-base"),
		"--base-runs", emptyRuns, "--base-store", emptyStore, "--head-runs", made["--head-runs"], "--head-store", made["--head-store"]); code == exitError {
		t.Errorf("empty base: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}

	// Half the directories is a usage error, a missing one an input error.
	if code, _, stderr := runCLI(t, "ci", "pr", "--base-ref", "main", "--repo-dir", repo.dir, "--head-runs", made["--head-runs"]); code != exitError || !strings.Contains(stderr, "all of --base-runs") {
		t.Errorf("three flags missing: exit %d, stderr %s", code, stderr)
	}
	bad := append(append([]string{}, flags...), "--base-store", filepath.Join(work, "nowhere"))
	if code, _, stderr := runCLI(t, append([]string{"ci", "pr", "--base-ref", "main", "--repo-dir", repo.dir, "--artifact", filepath.Join(work, "bad")}, bad...)...); code == 0 || !strings.Contains(stderr, "nowhere is not a directory") {
		t.Errorf("missing store: exit %d, stderr %s", code, stderr)
	}
}
