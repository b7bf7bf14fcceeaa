package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// omission is a way of forging a pass by leaving evidence out of the
// artifact, and what the poster must then name.
type omission struct {
	name  string
	apply func(t *testing.T, art string)
	want  []string
}

func remove(t *testing.T, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if _, err := os.Lstat(p); err != nil {
			t.Fatalf("nothing to remove at %s", p)
		}
		if err := os.RemoveAll(p); err != nil {
			t.Fatal(err)
		}
	}
}

var omissions = []omission{
	{"the failing workload removed", func(t *testing.T, art string) {
		remove(t, filepath.Join(art, "head", "runs", "ticket-triage"), filepath.Join(art, "head", "tree", "suites", "ticket-triage.bench.yaml"))
	}, []string{"evidence missing for suites/ticket-triage.bench.yaml (head commit"}},
	{"every head workload removed", func(t *testing.T, art string) {
		remove(t, filepath.Join(art, "head", "runs"), filepath.Join(art, "head", "tree", "suites"))
		if err := os.MkdirAll(filepath.Join(art, "head", "runs"), 0o755); err != nil {
			t.Fatal(err)
		}
	}, []string{"evidence missing for suites/ticket-triage.bench.yaml (head commit", "evidence missing for suites/intent-select.foundry.yaml (head commit",
		"evidence missing for suites/code-normalizer.foundry.yaml (head commit", "evidence missing for suites/invoice-extraction.bench.yaml (head commit"}},
	{"a base workload removed", func(t *testing.T, art string) {
		remove(t, filepath.Join(art, "base", "runs", "intent-select"), filepath.Join(art, "base", "tree", "suites", "intent-select.foundry.yaml"))
	}, []string{"evidence missing for suites/intent-select.foundry.yaml (base commit"}},
	{"a workload renamed", func(t *testing.T, art string) {
		dir := filepath.Join(art, "head", "tree", "suites")
		if err := os.Rename(filepath.Join(dir, "ticket-triage.bench.yaml"), filepath.Join(dir, "triage-renamed.bench.yaml")); err != nil {
			t.Fatal(err)
		}
	}, []string{"evidence missing for suites/ticket-triage.bench.yaml (head commit", "suites/triage-renamed.bench.yaml is not in commit"}},
	{"the head commit's workloads left out of the marker's paths", func(t *testing.T, art string) {
		editText(t, filepath.Join(art, "artifact.json"), `"paths":["suites"]`, `"paths":["suites/invoice-extraction.bench.yaml"]`)
		remove(t, filepath.Join(art, "head", "runs", "ticket-triage"))
	}, []string{"the artifact's check covered suites/invoice-extraction.bench.yaml, but the check's paths are suites"}},
}

// Each omission, posted by the comment workflow against the fake GitHub
// API for a check run that concluded success, gives a failing comment
// naming what is missing: the workloads come from the commit's tree,
// never from the artifact, and the conclusion decides nothing.
func TestPosterCatchesOmissions(t *testing.T) {
	for _, tc := range omissions {
		t.Run(tc.name, func(t *testing.T) {
			clearActionsEnv(t)
			art := builtArtifact(t)
			tc.apply(t, art)
			body := postFromArtifactAs(t, art, "success")
			if !strings.Contains(body, "**❌ Fail**") || strings.Contains(body, "✅ Pass") || !strings.Contains(body, "concluded **success**") {
				t.Fatalf("posted body does not say Fail:\n%s", body)
			}
			for _, w := range tc.want {
				if !strings.Contains(body, w) {
					t.Errorf("posted body does not name %q:\n%s", w, body)
				}
			}
			if tc.name != omissions[0].name && tc.name != omissions[len(omissions)-1].name {
				return // ci verify lists like the poster; two cases show it
			}
			code, out, errb := runCLI(t, "ci", "verify", "--repo-dir", artifactRepo, "--paths", "suites", art)
			if code != 1 {
				t.Fatalf("ci verify: exit %d\n%s%s", code, out, errb)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("ci verify does not name %q:\n%s", w, out)
				}
			}
		})
	}
}

// A head commit with no workloads under the paths fails unless the
// workflow says --allow-empty; two empty runs roots are no Pass either.
func TestEmptyIsNoPass(t *testing.T) {
	clearActionsEnv(t)
	e1, e2 := t.TempDir(), t.TempDir()
	code, out, errb := runCLI(t, "ci", "diff", "--base", e1, "--head", e2)
	if strings.Contains(out, "✅") || !strings.Contains(out, "**❌ Fail**") || !strings.Contains(out, "nothing was compared") {
		t.Fatalf("ci diff of two empty roots: exit %d\n%s%s", code, out, errb)
	}
	if _, out, _ = runCLI(t, "ci", "diff", "--allow-empty", "--base", e1, "--head", e2); strings.Contains(out, "nothing was compared") {
		t.Fatalf("--allow-empty still fails:\n%s", out)
	}
}
