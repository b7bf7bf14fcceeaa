package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

const runTriage = `{"contract":"algal.organism.v1","key":"organism:triage","name":"Ticket triage",
 "cells":[{"id":"ticket","kind":"input","outputs":{"text":"text"}},
  {"id":"route","kind":"classifier","inputs":{"ticket":"text"},"prompt":"Classify.",
   "output":{"kind":"choice","labels":["bug","feature"],"onMiss":"feature"}},
  {"id":"as-bug","kind":"fn","fn":"tag.v1"}],
 "edges":[{"from":{"cell":"ticket","port":"text"},"to":{"cell":"route","port":"ticket"}},
  {"from":{"cell":"route","port":"out"},"to":{"cell":"as-bug","port":"tag"},"guard":{"equals":"bug"}},
  {"from":{"cell":"ticket","port":"text"},"to":{"cell":"as-bug","port":"value"}}]}`

// The helpers every CLI test shares: run the command in-process, write its
// input files, read its JSON answers. (assayProcess, beside TestMain, runs
// it as a process of its own.)

// runCLI runs `assay args...` in-process with an empty stdin and returns
// the exit code, stdout and stderr.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return runCLIInput(t, "", args...)
}

// runCLIInput is runCLI with stdin.
func runCLIInput(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, strings.NewReader(stdin), &out, &errb)
	requireRederived(t, args)
	return code, out.String(), errb.String()
}

// putFile writes body to dir/name, making the directories it needs, and
// returns the path.
func putFile(t testing.TB, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// upstreamExamples is upstream's examples directory under
// $ASSAY_UPSTREAM_DIR; without it the test skips, saying that what is
// not available.
func upstreamExamples(t *testing.T, what string) string {
	t.Helper()
	up := os.Getenv("ASSAY_UPSTREAM_DIR")
	if up == "" {
		t.Skip("ASSAY_UPSTREAM_DIR unset: " + what + " is not available")
	}
	return filepath.Join(up, "examples")
}

// putFIFO makes the named pipe dir/name and returns its path: an input
// that blocks whoever opens it for reading.
func putFIFO(t *testing.T, dir, name string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func decodeObject(t *testing.T, s string) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("not a JSON object: %v\n%s", err, s)
	}
	return v
}

// stderrCode is the code of the one JSON error a verb printed on stderr.
func stderrCode(t *testing.T, stderr string) string {
	t.Helper()
	e, _ := decodeObject(t, stderr)["error"].(map[string]any)
	c, _ := e["code"].(string)
	return c
}

// recordTriage runs runTriage, its classifier scripted to answer "bug", on
// one ticket, persisting into the store st and writing the receipt to out;
// it returns the manifest's path (dir/triage.algal.json) and stdout.
func recordTriage(t *testing.T, dir, ticket, st, out string) (string, string) {
	t.Helper()
	m := putFile(t, dir, "triage.algal.json", runTriage)
	args := putFile(t, dir, "args.json", `{"ticket":{"text":"`+ticket+`"}}`)
	resp := putFile(t, dir, "responses.json", `{"route":"bug"}`)
	code, stdout, stderr := runCLI(t, "run", m, "--args", args, "--responses", resp, "--dir", st, "--out", out)
	if code != 0 {
		t.Fatalf("run exit %d: %s", code, stderr)
	}
	return m, stdout
}

func TestRunAndVerify(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st := filepath.Join(dir, "store")
	out := filepath.Join(dir, "receipt.json")
	m, stdout := recordTriage(t, dir, "it crashes", st, out)
	var rec map[string]any
	if err := json.Unmarshal([]byte(stdout), &rec); err != nil {
		t.Fatalf("receipt is not JSON: %v", err)
	}
	if rec["outcome"] != "complete" || rec["contract"] != "algal.run.v1" {
		t.Fatalf("receipt: %s", stdout)
	}
	cells := rec["cells"].(map[string]any)
	if got := cells["as-bug"].(map[string]any)["outputs"].(map[string]any)["value"]; got != "BUG: it crashes" {
		t.Fatalf("as-bug: %v", got)
	}
	if b, _ := os.ReadFile(out); string(b)+"\n" != stdout {
		t.Fatal("--out is not stdout's bytes without the newline")
	}
	// Verify with the manifest, and without it (resolved from the store).
	for _, a := range [][]string{{"verify", out, m}, {"verify", out, "--dir", st}} {
		code, stdout, stderr := runCLI(t, a...)
		if v := decodeObject(t, stdout); code != 0 || v["ok"] != true || v["outcome"] != "complete" || !strings.HasPrefix(v["digest"].(string), "sha256:") || len(v["mismatches"].([]any)) != 0 {
			t.Fatalf("%v: exit %d %s %s", a, code, stdout, stderr)
		}
	}
	// A tampered receipt fails with named mismatches and exit 1.
	b, _ := os.ReadFile(out)
	bad := putFile(t, dir, "bad.json", strings.Replace(string(b), `"work":110`, `"work":111`, 1))
	code, stdout, _ := runCLI(t, "verify", bad, m)
	if code != 1 {
		t.Fatalf("tampered receipt exit %d", code)
	}
	var rep map[string]any
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if rep["ok"] != false || !strings.Contains(stdout, "cell as-bug: work 111 vs 110") {
		t.Fatalf("mismatches: %s", stdout)
	}
}

func TestRunFailedOutcomeExitsOne(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	m := putFile(t, dir, "triage.algal.json", runTriage)
	args := putFile(t, dir, "args.json", `{"ticket":{"text":"x"}}`)
	// No executor: the classifier's effect is unbound and the run fails;
	// the command printed its receipt and exits 1, as upstream's does.
	code, stdout, stderr := runCLI(t, "run", m, "--args", args)
	if code != exitNo {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, `"outcome":"failed"`) || !strings.Contains(stdout, `"EFFECT_UNBOUND"`) {
		t.Fatalf("receipt: %s", stdout)
	}
}

func TestRunCacheEffects(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	m := putFile(t, dir, "triage.algal.json", runTriage)
	args := putFile(t, dir, "args.json", `{"ticket":{"text":"x"}}`)
	resp := putFile(t, dir, "responses.json", `{"route":"bug"}`)
	st := filepath.Join(dir, "store")
	for i, wantCached := range []bool{false, true} {
		code, stdout, stderr := runCLI(t, "run", m, "--args", args, "--responses", resp, "--dir", st, "--cache-effects")
		if code != 0 {
			t.Fatalf("run %d: %s", i, stderr)
		}
		if got := strings.Contains(stdout, `"cached":true`); got != wantCached {
			t.Fatalf("run %d cached=%v: %s", i, got, stdout)
		}
	}
}

func TestRunRejections(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := putFile(t, dir, "bad.algal.json", `{"contract":"algal.organism.v1"}`)
	code, _, stderr := runCLI(t, "run", bad)
	if code != exitError || !strings.Contains(stderr, `"code":"PARSE_FAILED"`) {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	// Without a manifest, run is the main job over suites/ at the project
	// root (TestRunWithoutSuitesSaysWhatToDo, outside any project, and the
	// mistake_run_from_subdirectory script).
	code, _, stderr = runCLI(t, "verify", filepath.Join(dir, "missing.json"))
	if code != exitError {
		t.Fatalf("missing receipt: exit %d %s", code, stderr)
	}
}

func TestRunModulesAndVerifyFromStore(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mods := filepath.Join(dir, "mods")
	putFile(t, mods, "child.algal.json", `{"contract":"algal.organism.v1","key":"organism:child","name":"C",
	 "interface":{"inputs":{"q":{"cell":"in","port":"q"}},"outputs":{"a":{"cell":"up","port":"value"}}},
	 "cells":[{"id":"in","kind":"input","outputs":{"q":"text"}},{"id":"up","kind":"fn","fn":"uppercase.v1"}],
	 "edges":[{"from":{"cell":"in","port":"q"},"to":{"cell":"up","port":"value"}}]}`)
	child := checkedDigest(t, filepath.Join(mods, "child.algal.json"))
	parent := putFile(t, dir, "parent.algal.json", `{"contract":"algal.organism.v1","key":"organism:parent","name":"P",
	 "cells":[{"id":"in","kind":"input","outputs":{"q":"text"}},{"id":"sub","kind":"organism","manifest":"`+child+`"}],
	 "edges":[{"from":{"cell":"in","port":"q"},"to":{"cell":"sub","port":"q"}}]}`)
	args := putFile(t, dir, "args.json", `{"in":{"q":"hi"}}`)
	st := filepath.Join(dir, "store")
	out := filepath.Join(dir, "r.json")
	code, stdout, stderr := runCLI(t, "run", parent, "--modules", mods, "--args", args, "--dir", st, "--out", out)
	if code != 0 || !strings.Contains(stdout, `"sub/up":{"outputs":{"value":"HI"}`) {
		t.Fatalf("run: %d %s %s", code, stdout, stderr)
	}
	code, stdout, _ = runCLI(t, "verify", out, "--dir", st)
	if code != 0 {
		t.Fatalf("verify from store: %s", stdout)
	}
}

func TestRunTransport(t *testing.T) {
	t.Parallel()
	ex := upstreamExamples(t, "upstream's remote example")
	dir := t.TempDir()
	args := putFile(t, dir, "args.json", `{"q":{"text":"hello"}}`)
	resp := putFile(t, dir, "resp.json", `{"answer":"hi"}`)
	code, stdout, stderr := runCLI(t, "run", filepath.Join(ex, "remote.algal.json"), "--args", args, "--responses", resp,
		"--transport", "bundles="+filepath.Join(ex, "bundles"))
	if code != 0 || !strings.Contains(stdout, `"via":"bundles"`) || !strings.Contains(stdout, `"outcome":"complete"`) {
		t.Fatalf("exit %d: %s %s", code, stdout, stderr)
	}
	code, _, _ = runCLI(t, "run", filepath.Join(ex, "remote.algal.json"), "--transport", "bundles")
	if code != 2 {
		t.Fatalf("bad --transport: exit %d", code)
	}
}
