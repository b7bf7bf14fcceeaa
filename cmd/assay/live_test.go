package main

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/effect/openai/openaitest"
)

const cliKey = "sk-cli-test-4Rt8YpQ1SECRET"

// liveWorkload writes a one-system bench on openai:small and returns its
// directory.
func liveWorkload(t *testing.T, base string) string {
	t.Helper()
	dir := t.TempDir()
	src, err := os.ReadFile("../../fixtures/triage/triage-single.algal.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "triage.algal.json"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	y := "name: live-cli\nrevision: 1\nbackends:\n  small: { api: openai, model: small-1, base-url: \"" + base + "\", max-retries: 1 }\n" +
		"systems:\n  - { id: one, manifest: triage.algal.json, executors: { cheap: \"openai:small\" } }\n" +
		"cases:\n  - { id: a, args: { ticket: \"charged twice\" }, expect: { queue: billing } }\n" +
		"  - { id: b, args: { ticket: \"refund please\" }, expect: { queue: billing } }\n" +
		"gate:\n  min-passed: { one: 2 }\n"
	putFile(t, dir, "live-cli.bench.yaml", y)
	return dir
}

func noKeyUnder(t *testing.T, roots ...string) {
	t.Helper()
	for _, root := range roots {
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			b, _ := os.ReadFile(p)
			if bytes.Contains(b, []byte(cliKey)) {
				t.Errorf("the key is written in %s", p)
			}
			return nil
		})
	}
}

// runKeyless runs `assay args...` in-process and fails the test if
// stdout or stderr carries the key.
func runKeyless(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	code, out, errb := runCLI(t, args...)
	if strings.Contains(out+errb, cliKey) {
		t.Errorf("the key is printed:\nstdout:\n%s\nstderr:\n%s", out, errb)
	}
	return code, out, errb
}

func liveRun(t *testing.T, dir string, args ...string) (int, string, string) {
	t.Helper()
	full := append([]string{"run", "--dir", filepath.Join(dir, ".algal"), "--out", filepath.Join(dir, "runs"), "--archive", filepath.Join(dir, "receipts")}, args...)
	return runKeyless(t, append(full, filepath.Join(dir, "live-cli.bench.yaml"))...)
}

func TestRunRecordsLiveAnswersAndReplaysWithoutKey(t *testing.T) {
	t.Setenv("CI", "")
	fake := openaitest.New(func(int, openaitest.Request) openaitest.Reply { return openaitest.Reply{Value: "billing"} })
	defer fake.Close()
	dir := liveWorkload(t, fake.BaseURL())

	t.Setenv("OPENAI_API_KEY", cliKey)
	if code, out, errb := liveRun(t, dir, "--record", "all"); code != exitOK {
		t.Fatalf("--record all: exit %d\n%s%s", code, out, errb)
	}
	if fake.Count() != 2 {
		t.Fatalf("%d requests, want 2", fake.Count())
	}
	noKeyUnder(t, dir)

	t.Setenv("OPENAI_API_KEY", "")
	fake.Reset()
	if code, out, errb := liveRun(t, dir); code != exitOK || fake.Count() != 0 {
		t.Fatalf("replay: exit %d, %d requests\n%s%s", code, fake.Count(), out, errb)
	}
}

func TestRunCouldNotReplayPrintsTheCommand(t *testing.T) {
	t.Setenv("CI", "")
	fake := openaitest.New(nil)
	defer fake.Close()
	dir := liveWorkload(t, fake.BaseURL())
	code, out, errb := liveRun(t, dir)
	if code != exitNo || fake.Count() != 0 {
		t.Fatalf("empty archive under --record none: exit %d, %d requests", code, fake.Count())
	}
	all := out + errb
	for _, want := range []string{"could-not-replay", `cell "route"`, "--record missing"} {
		if !strings.Contains(all, want) {
			t.Errorf("output lacks %q:\n%s", want, all)
		}
	}
}

// keyEchoingFailures answers like a server that refuses the key and
// quotes it back (401), alternating with a body that does not parse and
// carries it: the worst case for a leak.
func keyEchoingFailures(n int, _ openaitest.Request) openaitest.Reply {
	if n%2 == 0 {
		return openaitest.Reply{Raw: `{"oops": "` + cliKey + `"`}
	}
	return openaitest.Reply{Status: 401, Raw: `{"error":{"message":"Incorrect API key provided: ` + cliKey + `"}}`}
}

func TestRunServerFailureNeverPrintsTheKey(t *testing.T) {
	t.Setenv("CI", "")
	fake := openaitest.New(keyEchoingFailures)
	defer fake.Close()
	dir := liveWorkload(t, fake.BaseURL())
	t.Setenv("OPENAI_API_KEY", cliKey)
	if code, _, _ := liveRun(t, dir, "--record", "all"); code == exitOK {
		t.Fatal("a run whose server refuses every request passed")
	}
	noKeyUnder(t, dir)
}

func TestRecordingIsRefusedInCI(t *testing.T) {
	t.Setenv("CI", "true")
	dir := liveWorkload(t, "http://127.0.0.1:1/v1")
	if code, _, errb := liveRun(t, dir, "--record", "missing"); code != exitError || !strings.Contains(errb, "CI") {
		t.Fatalf("exit %d, stderr %s", code, errb)
	}
}
