package prcheck_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/algal-assay/assay/ci/artifact"
	"github.com/algal-assay/assay/ci/prcheck"
)

// flipsWorkload is a bench of systems a and b on ten cases; the head
// answers the first aFail cases wrong for a and the first bFail for b.
func flipsWorkload(aFail, bFail int, compare string) string {
	var b strings.Builder
	b.WriteString("name: flips\nrevision: 1\nsystems:\n  - { id: a, manifest: single.algal.json, executors: { ma: cases } }\n  - { id: b, manifest: single.algal.json, executors: { mb: cases } }\ncases:\n")
	for i := range 10 {
		ra, rb := "billing", "billing"
		if i < aFail {
			ra = "technical"
		}
		if i < bFail {
			rb = "technical"
		}
		fmt.Fprintf(&b, "  - { id: c%d, args: { ticket: t%d }, expect: { queue: billing }, responses: { ma: { route: %s }, mb: { route: %s } } }\n", i, i, ra, rb)
	}
	return b.String() + compare
}

// flipsRepo is a repository whose main commit (fixed dates, so the same
// commit on every run) passes every case, and whose working tree is the
// head workload.
func flipsRepo(t *testing.T, head string) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	organism, err := os.ReadFile(filepath.Join("..", "..", "fixtures", "triage", "triage-single.algal.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "suites"), 0o755); err != nil {
		t.Fatal(err)
	}
	wl := filepath.Join(dir, "suites", "flips.bench.yaml")
	for name, data := range map[string][]byte{"single.algal.json": organism, "flips.bench.yaml": []byte(flipsWorkload(0, 0, ""))} {
		if err := os.WriteFile(filepath.Join(dir, "suites", name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "--quiet", "--initial-branch=main"}, {"add", "."}, {"commit", "--quiet", "-m", "base"}, {"branch", "--quiet", "origin/main", "main"}} {
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t.invalid", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull,
			"GIT_AUTHOR_DATE=2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE=2026-01-01T00:00:00Z")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	if err := os.WriteFile(wl, []byte(head), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// checkFiles runs the PR check on a fresh repository and returns its
// result and the artifact's rendered files.
func checkFiles(t *testing.T, head string, concurrency int) (*prcheck.Result, map[string][]byte) {
	t.Helper()
	dir := flipsRepo(t, head)
	t.Setenv("GITHUB_BASE_REF", "main")
	art := filepath.Join(t.TempDir(), "art")
	if err := os.MkdirAll(art, 0o755); err != nil {
		t.Fatal(err)
	}
	res, err := prcheck.Run(context.Background(), prcheck.Options{Dir: dir, Artifact: art, Pointer: "See the artifact.", Concurrency: concurrency})
	if err != nil {
		t.Fatal(err)
	}
	requireRederived(t, art)
	files := map[string][]byte{}
	for _, f := range []string{"diff.json", "comment.md", "report.md", "pr.html"} {
		b, err := os.ReadFile(filepath.Join(art, f))
		if err != nil {
			t.Fatal(err)
		}
		files[f] = b
	}
	return res, files
}

// TestSignificanceEndToEnd: system a loses 7 of 10 cases (significant,
// p = 2/2^7 = 0.016), system b 3 (within noise, p = 2/2^3 = 0.25). diff.json,
// the comment and pr.html say so; fail-on: significant-regression fails
// the check for a alone; the bytes are the same at concurrency 1 and 32
// and across runs.
func TestSignificanceEndToEnd(t *testing.T) {
	res, files := checkFiles(t, flipsWorkload(7, 3, ""), 1)
	if res.Failed {
		t.Fatalf("without fail-on the head gates decide, and there are none: %+v", res.Diff.Verdict)
	}
	var d struct {
		Workloads []struct {
			Bench struct {
				Systems []struct {
					ID     string
					Base   struct{ PassRateCI95 []float64 }
					Head   struct{ PassRateCI95 []float64 }
					Change struct {
						Test                       string
						PairedCases, Fixed, Broken int
						Delta, PValue              float64
						CI95                       []float64
						Significant                bool
					}
				}
			}
			Statistics struct {
				Test            string
				Alpha           float64
				Cases, MinFlips int
				FailOn          string
				Failures        []string
			}
		}
	}
	if err := json.Unmarshal(files["diff.json"], &d); err != nil {
		t.Fatal(err)
	}
	sys := d.Workloads[0].Bench.Systems
	a, b := sys[0], sys[1]
	if a.ID != "a" || a.Change.Test != "mcnemar-exact" || a.Change.PairedCases != 10 || a.Change.Broken != 7 || a.Change.Fixed != 0 ||
		a.Change.PValue != 0.0156 || !a.Change.Significant || a.Change.Delta != -0.7 || fmt.Sprint(a.Change.CI95) != "[-0.9994 -0.4006]" {
		t.Errorf("a: %+v", a.Change)
	}
	if b.ID != "b" || b.Change.Broken != 3 || b.Change.PValue != 0.25 || b.Change.Significant || fmt.Sprint(b.Change.CI95) != "[-0.5994 -0.0006]" {
		t.Errorf("b: %+v", b.Change)
	}
	// Wilson at 10/10 and 3/10.
	if fmt.Sprint(a.Base.PassRateCI95) != "[0.7225 1]" || fmt.Sprint(a.Head.PassRateCI95) != "[0.1078 0.6032]" {
		t.Errorf("a intervals %v %v", a.Base.PassRateCI95, a.Head.PassRateCI95)
	}
	if st := d.Workloads[0].Statistics; st.Test != "mcnemar-exact" || st.Alpha != 0.05 || st.Cases != 10 || st.MinFlips != 6 || st.FailOn != "none" {
		t.Errorf("statistics %+v", st)
	}
	for _, want := range []string{
		"| a | 10/10 → 3/10 (−7) | significant (p = 0.016, 0 fixed / 7 broken) |",
		"| b | 10/10 → 7/10 (−3) | within noise (p = 0.25) |",
		"At least 6 cases must flip one way before a change can be significant (mcnemar-exact, alpha 0.05, 10 cases).",
	} {
		if !strings.Contains(string(files["comment.md"]), want) {
			t.Errorf("comment lacks %q:\n%s", want, files["comment.md"])
		}
	}
	for _, want := range []string{
		"<td>10/10 → 3/10</td><td>significant (p = 0.016, 0 fixed / 7 broken)</td>",
		"<td>10/10 → 7/10</td><td>within noise (p = 0.25)</td>",
		`class="errorbar head" data-system="a"`,
	} {
		if !bytes.Contains(files["pr.html"], []byte(want)) {
			t.Errorf("pr.html lacks %q", want)
		}
	}
	// The same evidence gives the same bytes, at any concurrency and on
	// every run.
	for _, c := range []int{32, 1} {
		_, again := checkFiles(t, flipsWorkload(7, 3, ""), c)
		for name, b := range files {
			if !bytes.Equal(b, again[name]) {
				t.Errorf("%s differs at concurrency %d", name, c)
			}
		}
	}

	// fail-on: significant-regression fails the check, naming a alone.
	res, files = checkFiles(t, flipsWorkload(7, 3, "compare: { fail-on: significant-regression }\n"), 32)
	if !res.Failed || len(res.Diff.Workloads) != 1 {
		t.Fatalf("a significant loss must fail the check: %+v", res.Diff.Verdict)
	}
	if f := res.Diff.Workloads[0].Statistics.Failures; len(f) != 1 || !strings.Contains(f[0], "system `a`: significant loss") {
		t.Errorf("failures %q", f)
	}
	if !strings.Contains(string(files["comment.md"]), "**flips**: compare fail-on significant-regression: system `a`: significant loss, significant (p = 0.016, 0 fixed / 7 broken)") {
		t.Errorf("comment:\n%s", files["comment.md"])
	}
	// b's three flips alone are noise: the check passes; any-regression
	// fails it.
	if res, _ = checkFiles(t, flipsWorkload(0, 3, "compare: { fail-on: significant-regression }\n"), 1); res.Failed {
		t.Errorf("3 flips are within noise: %+v", res.Diff.Verdict)
	}
	if res, _ = checkFiles(t, flipsWorkload(0, 3, "compare: { alpha: 0.3, fail-on: significant-regression }\n"), 1); !res.Failed {
		t.Errorf("p = 0.25 is significant at alpha 0.3: %+v", res.Diff.Verdict)
	}
	if res, _ = checkFiles(t, flipsWorkload(0, 3, "compare: { fail-on: any-regression }\n"), 1); !res.Failed ||
		!strings.Contains(strings.Join(res.Diff.Workloads[0].Statistics.Failures, ";"), "system `b`: pass count fell, 10/10 → 7/10") {
		t.Errorf("any-regression: %+v %q", res.Diff.Verdict, res.Diff.Workloads[0].Statistics.Failures)
	}
}

// A pull request controls the diff.json, comment.md and report.md its
// check uploads: a forged pValue, ci95 or significant there never reaches
// the posted comment, which the poster composes from the re-verified
// evidence with its own binary.
func TestForgedDiffNeverReachesTheComment(t *testing.T) {
	dir := flipsRepo(t, flipsWorkload(7, 3, ""))
	// The head is committed: the poster lists the workloads at the head
	// commit and confirms the artifact's tree against it.
	if out, err := exec.Command("git", "-C", dir, "-c", "user.name=t", "-c", "user.email=t@t.invalid", "-c", "commit.gpgsign=false", "commit", "--quiet", "-am", "head").CombinedOutput(); err != nil {
		t.Fatalf("git commit: %v\n%s", err, out)
	}
	t.Setenv("GITHUB_BASE_REF", "main")
	art := filepath.Join(t.TempDir(), "art")
	if err := os.MkdirAll(art, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := prcheck.Run(context.Background(), prcheck.Options{Dir: dir, Artifact: art, Pointer: "See the artifact."}); err != nil {
		t.Fatal(err)
	}
	requireRederived(t, art)
	p := filepath.Join(art, "diff.json")
	raw, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	forged := bytes.Replace(raw, []byte(`"pValue": 0.0156,`), []byte(`"pValue": 0.9,`), 1)
	forged = bytes.Replace(forged, []byte(`"significant": true`), []byte(`"significant": false`), 1)
	forged = bytes.Replace(forged, []byte("-0.9994,"), []byte("-0.01,"), 1)
	if bytes.Equal(forged, raw) {
		t.Fatal("the forgery did not apply")
	}
	md := []byte("a: within noise (p = 0.9)\n")
	for name, data := range map[string][]byte{"diff.json": forged, "comment.md": md, "report.md": md} {
		if err := os.WriteFile(filepath.Join(art, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// `ci verify` renders the files again from the evidence and names
	// the first forged field.
	a, err := artifact.Open(art)
	if err != nil {
		t.Fatal(err)
	}
	checked, err := a.CheckRendered(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"diff.json: workloads[0].bench.systems[0].change.ci95[0] is -0.01, re-derived -0.9994", "report.md: line 1 is", "", "comment.md: line 1 is"} {
		if got := strings.Join(checked[i].Mismatches, "; "); checked[i].OK == (want != "") || !strings.Contains(got, want) {
			t.Errorf("%s: ok %v, %q; want %q", checked[i].Path, checked[i].OK, got, want)
		}
	}
	posted, err := artifact.ComposeComment(context.Background(), art, artifact.CommentOptions{Marker: "<!-- assay:pr-check -->", Tree: artifact.GitTree(dir)})
	if err != nil || !posted.Verified {
		t.Fatalf("compose: %v %+v", err, posted)
	}
	if !strings.Contains(posted.Body, "| a | 10/10 → 3/10 (−7) | significant (p = 0.016, 0 fixed / 7 broken) |") || strings.Contains(posted.Body, "p = 0.9") {
		t.Errorf("the posted comment took the forged figures:\n%s", posted.Body)
	}
}
