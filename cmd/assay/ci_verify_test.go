package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
	// A missing root and a symbolic link loop: one JSON line, exit 2.
	loop := filepath.Join(empty, "loop")
	if err := os.Symlink(filepath.Join(empty, "loop2"), loop); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(loop, filepath.Join(empty, "loop2")); err != nil {
		t.Fatal(err)
	}
	for root, why := range map[string]string{filepath.Join(empty, "missing"): "does not exist", loop: "symbolic link loop"} {
		code, stdout, stderr := runCLI(t, "ci", "verify", root)
		if code != 2 || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, `{"error":{"code":"IO_FAILED","message":"`) ||
			!strings.HasSuffix(stderr, `},"ok":false}`+"\n") || !strings.Contains(stderr, why) || !strings.Contains(stderr, root) {
			t.Fatalf("%s: exit %d\nstdout %q\nstderr %q", root, code, stdout, stderr)
		}
	}
}

// mkfifo f.json; assay ci verify f.json: fails at once, says why.
func TestCIVerifyFIFORootFails(t *testing.T) {
	dir := t.TempDir()
	fifo := putFIFO(t, dir, "f.json")
	type result struct {
		code           int
		stdout, stderr string
	}
	done := make(chan result, 1)
	go func() {
		code, out, errOut := runCLI(t, "ci", "verify", "--dir", filepath.Join(dir, "store"), fifo)
		done <- result{code, out, errOut}
	}()
	select {
	case r := <-done:
		if r.code != exitNo || !strings.Contains(r.stdout, "FAIL "+fifo+"  unrecognised  cannot be read as evidence") || !strings.Contains(r.stdout, "not a regular file") {
			t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
	case <-time.After(30 * time.Second):
		// Unblock the reader so the test process can exit.
		if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			f.Close()
		}
		t.Fatal("ci verify blocked on a FIFO")
	}
}

// The staging directory of a killed run is listed, and does not fail the
// verification of the complete run beside it.
func TestCIVerifyListsInterruptedRun(t *testing.T) {
	clearActionsEnv(t)
	art := builtArtifact(t)
	runs := filepath.Join(art, "head", "runs")
	run := headRun(t, art, "ticket-triage")
	stage := filepath.Join(runs, "ticket-triage", "."+filepath.Base(run)+".partial-1234")
	rec, err := os.ReadFile(filepath.Join(run, "foundry-run.yml"))
	if err != nil {
		t.Fatal(err)
	}
	putFile(t, stage, "foundry-run.yml", strings.Replace(string(rec), "status: complete", "status: running", 1))
	t.Chdir(filepath.Join(art, "head", "tree"))
	code, out, errOut := runCLI(t, "ci", "verify", "--dir", filepath.Join(art, "head", "store"), runs)
	if code != exitOK || !strings.Contains(out, "note "+stage+"  interrupted  staging directory of a run that never finished (record status running)") ||
		!strings.Contains(out, "all 4 files verified; 1 leftover of interrupted writes listed") {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
}
