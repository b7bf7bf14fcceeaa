package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// verifyTree records two triage runs into root/store, keeps their receipts
// under root/evidence and adds a tampered copy of the second.
func verifyTree(t *testing.T) (root, st, tampered string) {
	t.Helper()
	root = t.TempDir()
	st = filepath.Join(root, "store")
	ev := filepath.Join(root, "evidence")
	if err := os.Mkdir(ev, 0o755); err != nil {
		t.Fatal(err)
	}
	var last string
	for _, name := range []string{"one", "two"} {
		last = filepath.Join(ev, name+".receipt.json")
		recordTriage(t, root, name, st, last)
	}
	b, _ := os.ReadFile(last)
	forged := strings.Replace(string(b), `"out":"bug"`, `"out":"feature"`, 1)
	if forged == string(b) {
		t.Fatal("tamper did not apply")
	}
	tampered = putFile(t, ev, "tampered.receipt.json", forged)
	return root, st, tampered
}

func TestCIVerifyFailsOnTamperedReceipt(t *testing.T) {
	t.Setenv("GITHUB_ACTIONS", "")
	root, st, tampered := verifyTree(t)
	// The whole project: the store inside it is skipped, not verified.
	code, stdout, stderr := runCLI(t, "ci", "verify", root, "--dir", st)
	if code != 1 {
		t.Fatalf("exit %d, want 1: %s %s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "FAIL "+tampered+"  receipt  ") {
		t.Fatalf("tampered receipt not named:\n%s", stdout)
	}
	ok := 0
	for _, line := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(line, "ok   ") {
			ok++
		}
	}
	if ok != 2 || strings.Contains(stdout, filepath.Join(st, "")+string(filepath.Separator)) {
		t.Fatalf("want exactly the 2 good receipts ok, nothing from the store:\n%s", stdout)
	}
	if strings.Contains(stdout, "::error") {
		t.Fatal("annotations outside GitHub Actions")
	}
	// Without the tampered copy everything verifies.
	os.Remove(tampered)
	if code, stdout, _ := runCLI(t, "ci", "verify", filepath.Join(root, "evidence"), "--dir", st); code != 0 {
		t.Fatalf("exit %d:\n%s", code, stdout)
	}
}

func TestCIVerifyJSON(t *testing.T) {
	t.Setenv("GITHUB_ACTIONS", "")
	root, st, tampered := verifyTree(t)
	code, stdout, _ := runCLI(t, "ci", "verify", filepath.Join(root, "evidence"), "--dir", st, "--json")
	if code != 1 {
		t.Fatalf("exit %d", code)
	}
	var v struct {
		OK      bool
		Checked int
		Failed  int
		Files   []struct {
			Path, Kind string
			OK         bool
			Mismatches []string
		}
	}
	if err := json.Unmarshal([]byte(stdout), &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, stdout)
	}
	if v.OK || v.Checked != 3 || v.Failed != 1 {
		t.Fatalf("%s", stdout)
	}
	for _, f := range v.Files {
		if (f.Path == tampered) == f.OK || (f.Path == tampered && len(f.Mismatches) == 0) {
			t.Fatalf("file %+v", f)
		}
	}
}

func TestCIVerifyGitHubActions(t *testing.T) {
	root, st, tampered := verifyTree(t)
	summary := filepath.Join(t.TempDir(), "summary.md")
	t.Setenv("GITHUB_ACTIONS", "true")
	t.Setenv("GITHUB_STEP_SUMMARY", summary)
	t.Setenv("GITHUB_WORKSPACE", root)
	code, stdout, _ := runCLI(t, "ci", "verify", filepath.Join(root, "evidence"), "--dir", st)
	if code != 1 {
		t.Fatalf("exit %d", code)
	}
	if !strings.Contains(stdout, "\n::error file=evidence/tampered.receipt.json::receipt does not verify: ") {
		t.Fatalf("annotation missing:\n%s", stdout)
	}
	if strings.Count(stdout, "::error") != 1 {
		t.Fatalf("one annotation per failure:\n%s", stdout)
	}
	md, err := os.ReadFile(summary)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| Result | File | Kind | Digest or first mismatch |", "| ❌ FAIL | `" + tampered + "` | receipt |", "1 of 3 files failed to verify"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("summary lacks %q:\n%s", want, md)
		}
	}
	// --json keeps stdout pure JSON: annotations go to stderr.
	code, stdout, stderr := runCLI(t, "ci", "verify", filepath.Join(root, "evidence"), "--dir", st, "--json")
	if code != 1 || strings.Contains(stdout, "::error") || !strings.Contains(stderr, "::error file=evidence/tampered.receipt.json::") {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
}

func TestCIVerifyNothingFound(t *testing.T) {
	t.Setenv("GITHUB_ACTIONS", "")
	empty := t.TempDir()
	putFile(t, empty, "notes.json", `{"x":1}`)
	code, stdout, _ := runCLI(t, "ci", "verify", empty)
	if code != 1 || !strings.Contains(stdout, "no receipts, reports, budget accounts or run directories found under "+empty) {
		t.Fatalf("explicit empty root: exit %d\n%s", code, stdout)
	}
	t.Chdir(empty)
	if code, stdout, _ := runCLI(t, "ci", "verify"); code != 0 || !strings.Contains(stdout, "no receipts") {
		t.Fatalf("default root: exit %d\n%s", code, stdout)
	}
	if code, _, _ := runCLI(t, "ci", "verify", filepath.Join(empty, "missing")); code != 2 {
		t.Fatalf("missing root: exit %d, want 2", code)
	}
}
