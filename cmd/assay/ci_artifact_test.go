package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/algal-assay/assay/ci/artifact"
	"github.com/algal-assay/assay/ci/prcheck"
	civerify "github.com/algal-assay/assay/ci/verify"
	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/harness"
)

// A PR-check artifact built without git: the repository's suites and
// fixtures copied into a tree, with ticket-triage's gate raised so that
// one head gate honestly fails; the one run set serves as base and head.
// Built once; each test copies it.
// artifactHead is the commit the built artifact's head (and base) tree
// is, in the repository artifactRepo: the check's checkout.
var artifactHead, artifactRepo string

var (
	artifactOnce sync.Once
	artifactRoot string // removed by TestMain once every test has run
	artifactDir  string
	artifactErr  error
)

func builtArtifact(t *testing.T) string {
	t.Helper()
	artifactOnce.Do(func() {
		root, err := os.MkdirTemp("", "assay-artifact-test-")
		if err != nil {
			artifactErr = err
			return
		}
		artifactRoot = root
		artifactDir, artifactErr = buildArtifact(root)
	})
	if artifactErr != nil {
		t.Fatal(artifactErr)
	}
	dst := filepath.Join(t.TempDir(), "assay-pr-check")
	copyDir(t, artifactDir, dst)
	return dst
}

func buildArtifact(root string) (string, error) {
	tree := filepath.Join(root, "tree")
	for _, d := range []string{"suites", "fixtures"} {
		if err := copyTreeFiles(filepath.Join("..", "..", d), filepath.Join(tree, d), func(p string) bool { return !strings.HasSuffix(p, ".go") }); err != nil {
			return "", err
		}
	}
	wl := filepath.Join(tree, "suites", "ticket-triage.bench.yaml")
	data, err := os.ReadFile(wl)
	if err != nil {
		return "", err
	}
	if !bytes.Contains(data, []byte("    cheap-single: 4\n")) {
		return "", os.ErrInvalid
	}
	if err := os.WriteFile(wl, bytes.Replace(data, []byte("    cheap-single: 4\n"), []byte("    cheap-single: 5\n"), 1), 0o644); err != nil {
		return "", err
	}
	// The tree is a checkout: its files committed, as the check runs in one.
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@example.test", "commit", "-qm", "tree"}} {
		if err := exec.Command("git", append([]string{"-C", tree}, args...)...).Run(); err != nil {
			return "", err
		}
	}
	out, err := exec.Command("git", "-C", tree, "rev-parse", "HEAD").Output()
	if err != nil {
		return "", err
	}
	artifactHead, artifactRepo = strings.TrimSpace(string(out)), tree
	runs, st := filepath.Join(root, "runs"), filepath.Join(root, "store")
	problems, err := prcheck.RunTree(context.Background(), tree, []string{"suites"}, runs, st, 2, io.Discard)
	if err != nil {
		return "", err
	}
	if len(problems) > 0 {
		return "", &os.PathError{Op: "run", Path: tree, Err: os.ErrInvalid}
	}
	art := filepath.Join(root, "assay-pr-check")
	src := artifact.Source{Runs: runs, Store: st, Tree: tree, Commit: artifactHead}
	pres := artifact.Presentation{BaseLabel: "origin/main " + artifactHead[:12], HeadLabel: "HEAD " + artifactHead[:12], Command: "assay ci pr --base-ref origin/main"}
	if err := artifact.Write(context.Background(), art, src, src, []string{"suites"}, "", artifactHead, pres); err != nil {
		return "", err
	}
	// The files the check renders from the evidence, as ci pr writes them.
	a, err := artifact.Open(art)
	if err != nil {
		return "", err
	}
	files, err := a.Rederive(context.Background())
	if err != nil {
		return "", err
	}
	if err := artifact.WriteRendered(art, files); err != nil {
		return "", err
	}
	pr, _ := json.Marshal(map[string]any{"number": 12, "head_sha": artifactHead})
	if err := os.WriteFile(filepath.Join(art, "pr.json"), append(pr, '\n'), 0o644); err != nil {
		return "", err
	}
	return art, nil
}

func copyTreeFiles(src, dst string, keep func(string) bool) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if keep != nil && !keep(p) {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
}

func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	if err := copyTreeFiles(src, dst, nil); err != nil {
		t.Fatal(err)
	}
}

// headRun is the head run directory of workload name.
func headRun(t *testing.T, art, name string) string {
	t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(art, "head", "runs", name, name+"-*"))
	if len(dirs) != 1 {
		t.Fatalf("head runs of %s: %v", name, dirs)
	}
	return dirs[0]
}

// editJSON rewrites a JSON file through f.
func editJSON(t *testing.T, path string, f func(map[string]any)) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	f(v)
	out, _ := json.Marshal(v)
	if err := os.WriteFile(path, append(out, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

func editText(t *testing.T, path, old, new string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte(old)) {
		t.Fatalf("%s lacks %q", path, old)
	}
	if err := os.WriteFile(path, bytes.Replace(data, []byte(old), []byte(new), 1), 0o644); err != nil {
		t.Fatal(err)
	}
}

// tamper is one way of editing an artifact after the check wrote it, and
// the text every reader must name when it catches it.
type tamper struct {
	name  string
	apply func(t *testing.T, art string)
	want  []string
}

var tampers = []tamper{
	{"gate flipped to passed", func(t *testing.T, art string) {
		editJSON(t, filepath.Join(headRun(t, art, "ticket-triage"), "gate.json"), func(v map[string]any) {
			v["passed"] = true
			for _, r := range v["rules"].([]any) {
				r.(map[string]any)["passed"] = true
			}
		})
	}, []string{"gate.json: passed is true", "gate.json: rules["}},
	{"verification ok flipped", func(t *testing.T, art string) {
		editJSON(t, filepath.Join(headRun(t, art, "intent-select"), "verification.json"), func(v map[string]any) { v["ok"] = false })
	}, []string{"verification.json: ok is false"}},
	{"run-record status edited", func(t *testing.T, art string) {
		editText(t, filepath.Join(headRun(t, art, "ticket-triage"), "foundry-run.yml"), "status: complete", "status: failed")
	}, []string{"foundry-run.yml: status failed but no phase is failed"}},
	{"artifact file renamed", func(t *testing.T, art string) {
		run := headRun(t, art, "invoice-extraction")
		if err := os.Rename(filepath.Join(run, "summary.md"), filepath.Join(run, "summary.txt")); err != nil {
			t.Fatal(err)
		}
	}, []string{"lists summary.md", "summary.txt is in the run directory"}},
	{"report contract renamed", func(t *testing.T, art string) {
		editJSON(t, filepath.Join(headRun(t, art, "code-normalizer"), "report.json"), func(v map[string]any) { v["contract"] = "algal.foundry.v9" })
	}, []string{`report.json: contract "algal.foundry.v9" is not`}},
	{"receipt removed", func(t *testing.T, art string) {
		receipts, _ := filepath.Glob(filepath.Join(art, "head", "store", "runs", "*.json"))
		if len(receipts) == 0 {
			t.Fatal("the artifact carries no receipt")
		}
		for _, r := range receipts {
			if err := os.Remove(r); err != nil {
				t.Fatal(err)
			}
		}
	}, []string{"report.json does not verify", "verification.json: ok is true"}},
	{"contender file edited", func(t *testing.T, art string) {
		editJSON(t, filepath.Join(headRun(t, art, "ticket-triage"), "system-cheap-single.json"), func(v map[string]any) { v["passed"] = 6.0 })
	}, []string{"system-cheap-single.json differs from the contender re-derived"}},
	{"scripted table edited", func(t *testing.T, art string) {
		p := filepath.Join(headRun(t, art, "ticket-triage"), "scripted-cheap.json")
		editText(t, p, `"billing"`, `"technical"`)
	}, []string{"scripted-cheap.json differs from the scripted-table re-derived"}},
	{"run directory removed", func(t *testing.T, art string) {
		if err := os.RemoveAll(filepath.Join(art, "head", "runs", "intent-select")); err != nil {
			t.Fatal(err)
		}
	}, []string{"evidence missing for suites/intent-select.foundry.yaml (head commit"}},
}

// The untampered artifact verifies alone, diffs, and the one head gate
// that fails is reported as failing by all three readers.
func TestArtifactVerifiesAlone(t *testing.T) {
	clearActionsEnv(t)
	art := builtArtifact(t)
	t.Chdir(t.TempDir()) // no repository, no .algal
	if code, out, errb := runCLI(t, "ci", "verify", "--repo-dir", artifactRepo, art); code != 0 || !strings.Contains(out, "all 12 files verified") ||
		!strings.Contains(out, "ticket-triage-r1-") || !strings.Contains(out, "gate re-derived: fails") {
		t.Fatalf("ci verify: exit %d\n%s%s", code, out, errb)
	}
	if code, out, errb := runCLI(t, "ci", "diff", "--repo-dir", artifactRepo, "--artifact", art); code != 0 || !strings.Contains(out, "**❌ Fail**") ||
		!strings.Contains(out, "cheap-single passes at least 5 cases") {
		t.Fatalf("ci diff: exit %d\n%s%s", code, out, errb)
	}
}

// Each tamper is caught by ci verify, by ci diff and by the poster, and
// each names the file.
func TestArtifactTamperCaughtEverywhere(t *testing.T) {
	for _, tc := range tampers {
		t.Run(tc.name, func(t *testing.T) {
			clearActionsEnv(t)
			art := builtArtifact(t)
			tc.apply(t, art)

			code, out, errb := runCLI(t, "ci", "verify", "--repo-dir", artifactRepo, art)
			if code != 1 {
				t.Fatalf("ci verify: exit %d\n%s%s", code, out, errb)
			}
			_, verifyJSON, _ := runCLI(t, "ci", "verify", "--repo-dir", artifactRepo, "--json", art)
			for _, w := range tc.want {
				jw, _ := json.Marshal(w)
				if !strings.Contains(verifyJSON, strings.Trim(string(jw), `"`)) {
					t.Errorf("ci verify does not say %q:\n%s", w, verifyJSON)
				}
			}

			if code, out, errb = runCLI(t, "ci", "diff", "--repo-dir", artifactRepo, "--artifact", art); code != 1 {
				t.Fatalf("ci diff: exit %d\n%s%s", code, out, errb)
			}
			for _, w := range tc.want {
				if !strings.Contains(errb, w) {
					t.Errorf("ci diff does not say %q:\n%s", w, errb)
				}
			}

			body := postFromArtifact(t, art)
			if !strings.Contains(body, "**❌ Fail**") || strings.Contains(body, "✅ Pass") || !strings.Contains(body, "evidence does not verify") {
				t.Errorf("posted body does not say Fail:\n%s", body)
			}
			for _, w := range tc.want {
				if !strings.Contains(body, strings.ReplaceAll(strings.ReplaceAll(w, "[", `\[`), "_", `\_`)) && !strings.Contains(body, w) {
					t.Errorf("posted body does not say %q:\n%s", w, body)
				}
			}
		})
	}
}

// postFromArtifact runs the comment workflow's command on art against the
// fake API, as a workflow_run event for a failed check run, and returns
// the body it posted.
func postFromArtifact(t *testing.T, art string) string {
	t.Helper()
	return postFromArtifactAs(t, art, "failure")
}

// postFromArtifactAs is postFromArtifact for a check run that concluded
// conclusion.
func postFromArtifactAs(t *testing.T, art, conclusion string, extra ...string) string {
	t.Helper()
	head := artifactHead
	fx := newCIFixture(t)
	fx.env.eventPath = fx.write(t, "run-event.json", `{"action":"completed","workflow_run":{"id":55,"event":"pull_request","conclusion":"`+conclusion+`","head_sha":"`+head+
		`","html_url":"https://github.test/acme/widgets/actions/runs/55","pull_requests":[]},"repository":{"full_name":"acme/widgets"}}`)
	fx.fake.SetHead(12, head)
	// The commit holds the files the check really ran on: the pristine
	// artifact's head tree, whatever the test did to its copy.
	fx.fake.SetTree(head, committedFiles(t))
	code, out, errOut := fx.run(t, append([]string{"--from-artifact", art}, extra...)...)
	if code != 0 {
		t.Fatalf("ci comment: exit %d\n%s%s", code, out, errOut)
	}
	c := fx.fake.Comments(12)
	if len(c) != 1 {
		t.Fatalf("comments %#v", c)
	}
	return c[0].Body
}

// committedFiles are the built artifact's head tree files by path.
func committedFiles(t *testing.T) map[string]string {
	t.Helper()
	builtArtifact(t) // makes sure it exists
	tree := filepath.Join(artifactDir, "head", "tree")
	files := map[string]string{}
	err := filepath.WalkDir(tree, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(tree, p)
		files[filepath.ToSlash(rel)] = string(data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// The artifact's rendered files claim Pass (pull-request code can write
// anything there); the evidence says one gate fails: ci verify fails,
// naming each forged file, and the body posted to the fake GitHub API
// says Fail, states the run's conclusion, and carries none of the forged
// text.
func TestPosterComposesFromEvidenceNotTheRenderedFiles(t *testing.T) {
	clearActionsEnv(t)
	art := builtArtifact(t)
	claim := "<!-- assay:pr-check -->\n## Assay PR check\n\n**✅ Pass** · everything holds.\n"
	diffJSON, err := os.ReadFile(filepath.Join(art, "diff.json"))
	if err != nil {
		t.Fatal(err)
	}
	forgedDiff := bytes.Replace(diffJSON, []byte(`"passed": false,`), []byte(`"passed": true,`), 1)
	if bytes.Equal(forgedDiff, diffJSON) {
		t.Fatal("the diff.json forgery did not apply")
	}
	for name, data := range map[string]string{"comment.md": claim, "report.md": claim, "pr.html": "<p>✅ Pass · everything holds.</p>\n", "diff.json": string(forgedDiff)} {
		if err := os.WriteFile(filepath.Join(art, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errb := runCLI(t, "ci", "verify", "--repo-dir", artifactRepo, art)
	for _, want := range []string{"diff.json  rendered  diff.json: verdict.passed is true, re-derived false", "report.md  rendered  report.md: line 1 is", "pr.html  rendered  pr.html: line 1 is", "comment.md  rendered  comment.md: line 4 is", "4 of 12 files failed to verify"} {
		if code != 1 || !strings.Contains(out, want) {
			t.Errorf("ci verify: exit %d, does not say %q:\n%s%s", code, want, out, errb)
		}
	}
	body := postFromArtifact(t, art)
	for _, want := range []string{"<!-- assay:pr-check -->\n## Assay PR check\n\n**❌ Fail**", "ticket-triage", "cheap-single passes at least 5 cases",
		"Re-verified by the comment workflow", "The check run concluded **failure**."} {
		if !strings.Contains(body, want) {
			t.Errorf("posted body lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, "✅ Pass") || strings.Contains(body, "everything holds") {
		t.Errorf("posted body repeats the pull request's claim:\n%s", body)
	}

	// With --out the poster writes its own diff.json, report.md and
	// pr.html, rendered from the evidence it verified, and the comment
	// points at the artifact this run uploads them as, never the check's.
	outDir := filepath.Join(t.TempDir(), "verified")
	body = postFromArtifactAs(t, art, "failure", "--out", outDir)
	if !strings.Contains(body, "`pr.html` in the `assay-pr-verified` artifact of [this comment workflow's run](") || strings.Contains(body, "assay-pr-check") || strings.Contains(body, "✅ Pass") {
		t.Errorf("posted body with --out:\n%s", body)
	}
	for name, want := range map[string]string{"diff.json": `"passed": false,`, "report.md": "**❌ Fail**", "pr.html": "<!DOCTYPE html>"} {
		b, err := os.ReadFile(filepath.Join(outDir, name))
		if err != nil || !strings.Contains(string(b), want) || strings.Contains(string(b), "everything holds") {
			t.Errorf("--out %s: %v, lacks %q or carries the forged claim:\n%.400s", name, err, want, b)
		}
	}
	if entries, _ := os.ReadDir(outDir); len(entries) != 3 {
		t.Errorf("--out wrote %d files, want diff.json, report.md and pr.html", len(entries))
	}
	if !strings.Contains(body, "Re-verified by the comment workflow") {
		t.Errorf("posted body:\n%s", body)
	}
	report, _ := os.ReadFile(filepath.Join(outDir, "report.md"))
	if !strings.Contains(string(report), "Re-verified by the comment workflow") {
		t.Errorf("--out report.md lacks the workflow's account of how it checked:\n%s", report)
	}
}

// A forgery consistent in itself: the artifact's copy of the workload
// relaxes the gate, and gate.json is rewritten to what that copy
// re-derives to, so ci verify on the artifact alone passes. The poster
// confirms the head tree against the commit the check ran on, and says
// Fail, naming the file.
func TestPosterCatchesWorkloadNotCommitted(t *testing.T) {
	clearActionsEnv(t)
	art := builtArtifact(t)
	wl := filepath.Join(art, "head", "tree", "suites", "ticket-triage.bench.yaml")
	editText(t, wl, "    cheap-single: 5\n", "    cheap-single: 4\n")
	ev, ws, err := mustOpen(t, art).Evidence(artifact.Head)
	if err != nil {
		t.Fatal(err)
	}
	run := headRun(t, art, "ticket-triage")
	res, err := civerify.CheckRun(context.Background(), run, civerify.Options{Evidence: ev.Store, StoreDir: ev.StoreDir, Workloads: ws})
	if err != nil || res.Run == nil || res.Run.Derived == nil || !res.Run.Derived.GatesPassed() {
		t.Fatalf("the relaxed gate must pass: %v %+v", err, res)
	}
	b, err := canon.Encode(harness.GateValue(res.Run.Workload, res.Run.Derived.Gates))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(run, "gate.json"), append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, errb := runCLI(t, "ci", "verify", "--repo-dir", artifactRepo, art); code != 1 ||
		!strings.Contains(out, "head/tree/suites/ticket-triage.bench.yaml differs from suites/ticket-triage.bench.yaml at commit "+artifactHead) {
		t.Fatalf("ci verify holds the tree to its commit too: exit %d\n%s%s", code, out, errb)
	}
	body := postFromArtifact(t, art)
	if !strings.Contains(body, "**❌ Fail**") || strings.Contains(body, "✅") ||
		!strings.Contains(body, "head/tree/suites/ticket-triage.bench.yaml differs from suites/ticket-triage.bench.yaml at commit "+artifactHead) {
		t.Fatalf("posted body:\n%s", body)
	}
}

// An artifact whose head tree names another commit than the run's is not
// confirmed.
func TestPosterRefusesAnotherCommitsTree(t *testing.T) {
	clearActionsEnv(t)
	art := builtArtifact(t)
	editText(t, filepath.Join(art, artifact.MarkerFile), `"head_commit":"`+artifactHead, `"head_commit":"`+strings.Repeat("d", 40))
	body := postFromArtifact(t, art)
	if !strings.Contains(body, "**❌ Fail**") || !strings.Contains(body, "is of commit "+strings.Repeat("d", 40)+", not "+artifactHead) {
		t.Fatalf("posted body:\n%s", body)
	}
}

func mustOpen(t *testing.T, dir string) *artifact.Artifact {
	t.Helper()
	a, err := artifact.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
