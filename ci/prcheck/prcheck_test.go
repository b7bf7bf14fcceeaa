package prcheck_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/algal-assay/assay/ci/prcheck"
	"github.com/algal-assay/assay/engine/fault"
)

func gitRepo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "suites"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "README"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "--quiet", "--initial-branch=main"}, {"add", "."}, {"commit", "--quiet", "-m", "init"}} {
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t.invalid", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}

func TestRunSidesRejects(t *testing.T) {
	t.Setenv("GITHUB_BASE_REF", "")
	dir := gitRepo(t)
	for _, tc := range []struct {
		name string
		opts prcheck.SideOptions
		code string
	}{
		{"no base ref", prcheck.SideOptions{Dir: dir}, prcheck.CodeInput},
		{"unknown ref", prcheck.SideOptions{Dir: dir, BaseRef: "no-such-branch"}, prcheck.CodeGit},
		{"option-like ref", prcheck.SideOptions{Dir: dir, BaseRef: "--output=/tmp/x"}, prcheck.CodeGit},
		{"path outside", prcheck.SideOptions{Dir: dir, BaseRef: "main", Paths: []string{"../elsewhere"}}, prcheck.CodeInput},
		{"absolute path", prcheck.SideOptions{Dir: dir, BaseRef: "main", Paths: []string{"/etc"}}, prcheck.CodeInput},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := prcheck.RunSides(context.Background(), tc.opts)
			if err == nil {
				s.Close()
				t.Fatal("accepted")
			}
			if fault.CodeOf(err) != tc.code {
				t.Fatalf("code %q (%v), want %s", fault.CodeOf(err), err, tc.code)
			}
		})
	}
}

// With no workloads anywhere the check passes vacuously, writes its
// artifact (removing a stale pr.json when no event names a PR) and leaves
// no worktree behind; GITHUB_BASE_REF supplies the base.
func TestRunEmptyRepository(t *testing.T) {
	dir := gitRepo(t)
	cmd := exec.Command("git", "-C", dir, "branch", "--quiet", "origin/main", "main")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	t.Setenv("GITHUB_BASE_REF", "main")
	art := filepath.Join(t.TempDir(), "art")
	if err := os.MkdirAll(art, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(art, "pr.json"), []byte(`{"number":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	summary := filepath.Join(t.TempDir(), "summary.md")
	// A check of nothing fails unless the workflow says it means it.
	empty := filepath.Join(t.TempDir(), "empty")
	res, err := prcheck.Run(context.Background(), prcheck.Options{Dir: dir, Artifact: empty, Pointer: "See the artifact."})
	if err != nil {
		t.Fatal(err)
	}
	requireRederived(t, empty)
	if !res.Failed || !strings.Contains(res.Comment, "no workloads under suites at the head") {
		t.Fatalf("an empty check passed: %+v\n%s", res.Diff.Verdict, res.Comment)
	}
	res, err = prcheck.Run(context.Background(), prcheck.Options{Dir: dir, Artifact: art, StepSummary: summary, Pointer: "See the artifact.", AllowEmpty: true})
	if err != nil {
		t.Fatal(err)
	}
	requireRederived(t, art)
	if res.Failed || res.Diff.Verdict.Workloads != 0 {
		t.Fatalf("verdict %+v", res.Diff.Verdict)
	}
	for _, f := range []string{"comment.md", "diff.json", "report.md"} {
		if _, err := os.Stat(filepath.Join(art, f)); err != nil {
			t.Errorf("artifact lacks %s: %v", f, err)
		}
	}
	if _, err := os.Stat(filepath.Join(art, "pr.json")); !os.IsNotExist(err) {
		t.Errorf("stale pr.json kept: %v", err)
	}
	sum, _ := os.ReadFile(summary)
	if !strings.Contains(string(sum), "No bench workloads.") || !strings.Contains(string(sum), "See the artifact.") {
		t.Errorf("summary:\n%s", sum)
	}
	out, _ := exec.Command("git", "-C", dir, "worktree", "list").Output()
	if n := strings.Count(strings.TrimSpace(string(out)), "\n"); n != 0 {
		t.Errorf("worktrees left:\n%s", out)
	}
}

// cancelOn cancels a context when a log line contains a given text.
type cancelOn struct {
	text   string
	cancel context.CancelFunc
}

func (c cancelOn) Write(b []byte) (int, error) {
	if strings.Contains(string(b), c.text) {
		c.cancel()
	}
	return len(b), nil
}

// Cancelling the check (a signal, a job cancelled) while it runs removes
// the base worktree and the temporary directories all the same.
func TestRunSidesCancelledCleansUp(t *testing.T) {
	dir := gitRepo(t)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := prcheck.RunSides(ctx, prcheck.SideOptions{Dir: dir, BaseRef: "main", Log: cancelOn{"assay ci: base", cancel}})
	if err == nil {
		s.Close()
		t.Fatal("a cancelled check succeeded")
	}
	out, _ := exec.Command("git", "-C", dir, "worktree", "list", "--porcelain").Output()
	if n := strings.Count(string(out), "worktree "); n != 1 {
		t.Errorf("worktrees left after cancellation:\n%s", out)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("temporary directories left: %v", left)
	}
}

// A head run made on uncommitted changes says so in the comment's head
// label: its commit does not hold what it ran.
func TestHeadOnUncommittedChangesIsMarked(t *testing.T) {
	t.Parallel()
	dir := gitRepo(t)
	organism, err := os.ReadFile(filepath.Join("..", "..", "fixtures", "triage", "triage-single.algal.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "suites", "single.algal.json"), organism, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "suites", "tiny.bench.yaml"), []byte(`name: tiny
revision: 1
systems:
  - { id: one, manifest: single.algal.json, executors: { m: cases } }
cases:
  - { id: a, args: { ticket: x }, expect: { queue: billing }, responses: { m: { route: billing } } }
`), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := prcheck.RunSides(context.Background(), prcheck.SideOptions{Dir: dir, BaseRef: "main"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(s.Diff.Head, " with uncommitted changes") || len(s.Diff.Workloads) != 1 {
		t.Fatalf("head label %q, workloads %d", s.Diff.Head, len(s.Diff.Workloads))
	}
	s.Close()
	// Committed, the head is clean, even with the run directories written
	// inside the checkout (the workflow's artifact is out/, not ignored):
	// the second workload starts after the first wrote its run there.
	second, _ := os.ReadFile(filepath.Join(dir, "suites", "tiny.bench.yaml"))
	if err := os.WriteFile(filepath.Join(dir, "suites", "tiny2.bench.yaml"), []byte(strings.Replace(string(second), "name: tiny", "name: tiny2", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"add", "."}, {"commit", "--quiet", "-m", "workload"}} {
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t.invalid", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	s, err = prcheck.RunSides(context.Background(), prcheck.SideOptions{Dir: dir, BaseRef: "main", HeadOut: filepath.Join(dir, "out", "runs")})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if strings.Contains(s.Diff.Head, "uncommitted") || len(s.Diff.Workloads) != 2 {
		t.Fatalf("clean head label %q, workloads %d", s.Diff.Head, len(s.Diff.Workloads))
	}
}
