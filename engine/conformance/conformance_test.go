package conformance

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/store"
)

// constant is an organism that needs no executor: one input, one const.
const constant = `{"contract":"algal.organism.v1","key":"organism:constant","name":"constant",
 "interface":{"inputs":{"review":{"cell":"inbox","port":"review"}},"outputs":{"v":{"cell":"answer","port":"value"}}},
 "cells":[{"id":"inbox","kind":"input","outputs":{"review":"text"}},
          {"id":"answer","kind":"const","outputs":{"value":{"type":"json","value":"positive"}}}],
 "edges":[]}`

func write(t *testing.T, dir, name, body string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// An example runs, verifies offline, and with a cache marker runs again
// through the memo (a constant makes no request, so the memo cannot hit
// and the example fails).
func TestRunVerifiesEveryExample(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, dir, "a.algal.json", constant)
	write(t, dir, "a.args.json", `{"inbox":{"review":"fine"}}`)
	write(t, dir, "b.algal.json", constant)
	write(t, dir, "b.cache.json", `{}`)
	write(t, dir, "notes.json", `{}`)
	exs, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(exs) != 2 || exs[0].ID != "a" || exs[1].ID != "b" || !exs[1].Cache || exs[0].Cache {
		t.Fatalf("examples: %+v", exs)
	}
	rep, err := Run(store.NewMemStore(), exs)
	if err != nil {
		t.Fatal(err)
	}
	if rep["ok"] != false {
		t.Errorf("a memo example with no hit passed: %v", rep)
	}
	got := Readable(rep)
	for _, want := range []string{"ok   a ", "FAIL b ", "memo hits=0", "1 of 2 examples complete and verified\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("readable lacks %q:\n%s", want, got)
		}
	}
}

// A directory with no examples, or a sidecar that is not an object, is a
// parse failure naming it.
func TestLoadRefusesBadSuites(t *testing.T) {
	t.Parallel()
	if _, err := Load(t.TempDir()); fault.CodeOf(err) != fault.Parse || !strings.Contains(err.Error(), "suite found no examples") {
		t.Errorf("empty: %v", err)
	}
	dir := t.TempDir()
	write(t, dir, "a.algal.json", constant)
	write(t, dir, "a.responses.json", `[]`)
	if _, err := Load(dir); fault.CodeOf(err) != fault.Parse || !strings.Contains(err.Error(), "responses must be an object") {
		t.Errorf("array sidecar: %v", err)
	}
	write(t, dir, "a.responses.json", `{}`)
	write(t, dir, "a.transports.json", `{"t":"https://example.com/b"}`)
	if _, err := Load(dir); fault.CodeOf(err) != fault.EffectUnbound {
		t.Errorf("remote transport: %v", err)
	}
}
