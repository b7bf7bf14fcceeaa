package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const checkChild = `{"contract":"algal.organism.v1","key":"organism:child","name":"Child",
 "cells":[{"id":"in","kind":"input","outputs":{"q":"text"}},{"id":"echo","kind":"fn","fn":"echo.v1"}],
 "edges":[{"from":{"cell":"in","port":"q"},"to":{"cell":"echo","port":"value"}}],
 "interface":{"inputs":{"q":{"cell":"in","port":"q"}},"outputs":{"a":{"cell":"echo","port":"value"}}}}`

// runCheck runs `assay check ARGS` in-process and decodes its stdout.
func runCheck(t *testing.T, args ...string) (int, map[string]any, string) {
	t.Helper()
	code, out, errb := runCLI(t, append([]string{"check"}, args...)...)
	var v map[string]any
	// A manifest that is not admitted is an error: its JSON is on stderr.
	doc := out
	if len(doc) == 0 {
		doc = errb
	}
	if len(doc) > 0 {
		if err := json.Unmarshal([]byte(doc), &v); err != nil {
			t.Fatalf("output is not JSON: %q", doc)
		}
	}
	return code, v, errb
}

// checkedDigest is the digest `assay check` prints for the manifest at path.
func checkedDigest(t *testing.T, path string) string {
	t.Helper()
	code, out, errb := runCLI(t, "check", path)
	if code != 0 {
		t.Fatalf("check: %s", errb)
	}
	return decodeObject(t, out)["digest"].(string)
}

func TestCheckAdmitsAndResolvesModules(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mods := filepath.Join(dir, "mods")
	child := putFile(t, mods, "child.algal.json", checkChild)
	code, v, _ := runCheck(t, child)
	if code != 0 || v["ok"] != true || v["key"] != "organism:child" || v["cells"] != 2.0 {
		t.Fatalf("child: exit %d %v", code, v)
	}
	digest := v["digest"].(string)
	if !strings.HasPrefix(digest, "sha256:") || len(digest) != 71 {
		t.Fatalf("digest %q", digest)
	}
	parent := putFile(t, dir, "parent.algal.json", `{"contract":"algal.organism.v1","key":"organism:parent","name":"P",
	 "cells":[{"id":"in","kind":"input","outputs":{"q":"text"}},{"id":"sub","kind":"organism","manifest":"`+digest+`"}],
	 "edges":[{"from":{"cell":"in","port":"q"},"to":{"cell":"sub","port":"q"}}]}`)

	code, v, _ = runCheck(t, parent)
	if code != exitError || v["ok"] != false {
		t.Fatalf("without modules: exit %d %v", code, v)
	}
	if e := v["error"].(map[string]any); e["code"] != "STORE_MISS" || !strings.Contains(e["message"].(string), `cells[1] "sub"`) {
		t.Fatalf("without modules: %v", e)
	}
	code, v, _ = runCheck(t, parent, "--modules", mods)
	if code != 0 || v["ok"] != true || v["key"] != "organism:parent" || v["cells"] != 2.0 {
		t.Fatalf("with modules: exit %d %v", code, v)
	}
}

func TestCheckRejections(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := putFIFO(t, dir, "fifo.algal.json")
	big := putFile(t, dir, "big.algal.json", `{"contract":"algal.organism.v1","key":"organism:b","name":"`+strings.Repeat("x", 1<<20)+`","cells":[]}`)
	cases := []struct {
		name, path, code, contains string
	}{
		{"directory", dir, "IO_FAILED", "not a regular file"},
		{"fifo", fifo, "IO_FAILED", "not a regular file"},
		{"missing", filepath.Join(dir, "nope.json"), "IO_FAILED", "nope.json"},
		{"over 1 MiB", big, "BUDGET_EXHAUSTED", "bound"},
		{"bom", putFile(t, dir, "bom.json", "\uFEFF"+checkChild), "PARSE_FAILED", "byte-order mark"},
		{"bad utf8", putFile(t, dir, "utf8.json", `{"contract":"algal.organism.v1","key":"organism:b","name":"`+"\xff"+`","cells":[]}`), "PARSE_FAILED", "UTF-8"},
		{"duplicate key", putFile(t, dir, "dup.json", `{"key":"organism:a","key":"organism:b"}`), "PARSE_FAILED", "duplicate"},
		{"duplicate label", putFile(t, dir, "label.json", `{"contract":"algal.organism.v1","key":"organism:b","name":"B","cells":[
			{"id":"in","kind":"input","outputs":{"q":"text"}},{"id":"x","kind":"store"},{"id":"y","kind":"store"},
			{"id":"route","kind":"classifier","inputs":{"q":"text"},"prompt":"p","output":{"kind":"choice","labels":["bug","bug"]}}]}`),
			"PARSE_FAILED", `cells[3] "route": output.labels: duplicate label "bug"`},
		{"cycle", putFile(t, dir, "cycle.json", `{"contract":"algal.organism.v1","key":"organism:c","name":"C",
			"cells":[{"id":"a","kind":"fn","fn":"echo.v1"},{"id":"b","kind":"fn","fn":"echo.v1"}],
			"edges":[{"from":{"cell":"a","port":"value"},"to":{"cell":"b","port":"value"}},{"from":{"cell":"b","port":"value"},"to":{"cell":"a","port":"value"}}]}`),
			"GRAPH_CYCLE", "cycle"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, v, _ := runCheck(t, tc.path)
			if code != exitError || v["ok"] != false {
				t.Fatalf("exit %d %v", code, v)
			}
			e := v["error"].(map[string]any)
			if e["code"] != tc.code || !strings.Contains(e["message"].(string), tc.contains) {
				t.Fatalf("got %v, want %s containing %q", e, tc.code, tc.contains)
			}
		})
	}
}

func TestCheckSymlinkAndStdin(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	target := putFile(t, dir, "child.algal.json", checkChild)
	link := filepath.Join(dir, "link.algal.json")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	code, v, _ := runCheck(t, link)
	if code != 0 || v["ok"] != true {
		t.Fatalf("symlink: exit %d %v", code, v)
	}
	code, out, _ := runCLIInput(t, checkChild, "check", "-")
	if code != 0 {
		t.Fatalf("stdin: exit %d %s", code, out)
	}
	var w map[string]any
	if err := json.Unmarshal([]byte(out), &w); err != nil {
		t.Fatal(err)
	}
	if w["digest"] != v["digest"] {
		t.Fatalf("stdin digest %v != file digest %v", w["digest"], v["digest"])
	}
}

func TestCheckUsage(t *testing.T) {
	t.Parallel()
	if code, _, _ := runCLI(t, "check"); code != 2 {
		t.Fatalf("no args: exit %d", code)
	}
	if code, _, _ := runCLI(t, "check", "a", "--modules"); code != 2 {
		t.Fatalf("flag without value: exit %d", code)
	}
}
