package main

import (
	"io"
	"path/filepath"
	"strings"
	"testing"
)

// On a terminal the answer verbs print a sentence; --json (and any
// non-terminal stdout) keeps upstream's JSON. The exit status is the same
// either way.
func TestReadableOutputOnATerminal(t *testing.T) {
	dir := t.TempDir()
	m := putFile(t, dir, "echo.algal.json", `{"contract":"algal.organism.v1","key":"organism:echo","name":"E",
	 "cells":[{"id":"in","kind":"input","outputs":{"q":"text"}},{"id":"echo","kind":"fn","fn":"echo.v1"}],
	 "edges":[{"from":{"cell":"in","port":"q"},"to":{"cell":"echo","port":"value"}}]}`)
	args := putFile(t, dir, "args.json", `{"in":{"q":"hi"}}`)
	rec := filepath.Join(dir, "r.json")
	if code, _, errb := runCLI(t, "run", m, "--args", args, "--out", rec); code != 0 {
		t.Fatalf("run: %s", errb)
	}
	tampered := putFile(t, dir, "bad.json", strings.Replace(readFile(t, rec), `"hi"`, `"HI"`, 1))
	ex := filepath.Dir(putFile(t, dir, "ex/echo.algal.json", readFile(t, m)))
	putFile(t, dir, "ex/echo.args.json", `{"in":{"q":"hi"}}`)

	saved := isTerminal
	isTerminal = func(io.Writer) bool { return true }
	defer func() { isTerminal = saved }()
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"check", m}, 0, "admitted organism:echo: 2 cells\nmanifestDigest sha256:"},
		{[]string{"verify", rec, m}, 0, "verified: the replay reproduces the receipt (outcome complete)"},
		{[]string{"verify", tampered, m}, 1, "NOT VERIFIED: "},
		{[]string{"suite", "--examples", ex}, 0, "ok   echo"},
		{[]string{"replay", rec, "--with", m}, 0, "verdict: identical\n"},
	} {
		code, out, errb := runCLI(t, tc.args...)
		if code != tc.code || !strings.Contains(out, tc.want) || strings.HasPrefix(out, "{") {
			t.Errorf("%v: exit %d, stdout %q (stderr %s); want %d and %q", tc.args, code, out, errb, tc.code, tc.want)
		}
		code, out, _ = runCLI(t, append([]string{"--json"}, tc.args...)...)
		if code != tc.code || !strings.HasPrefix(out, "{") {
			t.Errorf("--json %v: exit %d, stdout %q", tc.args, code, out)
		}
	}
}
