package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const cliGate = `{"contract":"algal.organism.v1","key":"organism:gated","name":"G",
 "cells":[{"id":"pr","kind":"input","outputs":{"diff":"text"}},
  {"id":"review","kind":"agent","prompt":"p","inputs":{"diff":"text"},"output":{"kind":"text"}},
  {"id":"gate","kind":"gate","prompt":"ok?","inputs":{"summary":"text"},"output":{"kind":"choice","labels":["approve","reject"]}},
  {"id":"merge","kind":"agent","prompt":"p","inputs":{"decision":"text"},"output":{"kind":"text"}}],
 "edges":[{"from":{"cell":"pr","port":"diff"},"to":{"cell":"review","port":"diff"}},
  {"from":{"cell":"review","port":"out"},"to":{"cell":"gate","port":"summary"}},
  {"from":{"cell":"gate","port":"out"},"to":{"cell":"merge","port":"decision"},"guard":{"equals":"approve"}}]}`

func gateDigest(rec map[string]any) string {
	for _, e := range rec["events"].([]any) {
		m := e.(map[string]any)
		if m["kind"] == "effect" && m["path"] == "gate" {
			return m["digest"].(string)
		}
	}
	return ""
}

func TestGateSuspendsThenResumesFromCLI(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	m := putFile(t, dir, "gated.algal.json", cliGate)
	args := putFile(t, dir, "args.json", `{"pr":{"diff":"+1"}}`)
	// The fixture would reject; approvals take gate requests ahead of it.
	resp := putFile(t, dir, "resp.json", `{"review":"tiny","merge":"feat: x","gate":"reject"}`)
	approvals := putFile(t, dir, "approvals.json", `{}`)
	st := filepath.Join(dir, "store")
	cp := filepath.Join(dir, "cp.json")
	code, out, errb := runCLI(t, "run", m, "--args", args, "--responses", resp, "--approvals", approvals, "--dir", st, "--out", cp)
	if code != exitNo {
		t.Fatalf("run: %s", errb)
	}
	first := decodeObject(t, out)
	if first["outcome"] != "suspended" {
		t.Fatalf("outcome %v", first["outcome"])
	}
	if code, _, errb = runCLI(t, "verify", cp, "--dir", st); code != 0 {
		t.Fatalf("a suspended receipt verifies: %s", errb)
	}
	if err := os.WriteFile(approvals, []byte(`{"gate":"approve"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	// The resumed host has no review answer: the prefix must replay.
	resp2 := putFile(t, dir, "resp2.json", `{"merge":"feat: x"}`)
	done := filepath.Join(dir, "done.json")
	code, out, errb = runCLI(t, "resume", cp, "--dir", st, "--responses", resp2, "--approvals", approvals, "--out", done)
	if code != 0 {
		t.Fatalf("resume: %s", errb)
	}
	rec := decodeObject(t, out)
	if rec["outcome"] != "complete" || gateDigest(rec) != gateDigest(first) || gateDigest(rec) == "" {
		t.Fatalf("resumed: %v, gate %s vs %s", rec["outcome"], gateDigest(rec), gateDigest(first))
	}
	merge := rec["cells"].(map[string]any)["merge"].(map[string]any)["outputs"].(map[string]any)
	if merge["out"] != "feat: x" {
		t.Fatalf("merge %v", merge)
	}
	if code, _, errb = runCLI(t, "verify", done, m); code != 0 {
		t.Fatalf("resumed receipt verifies: %s", errb)
	}
	// A tampered checkpoint is refused.
	b, _ := os.ReadFile(cp)
	bad := putFile(t, dir, "bad.json", strings.Replace(string(b), `"tiny"`, `"huge"`, 1))
	if code, _, _ = runCLI(t, "resume", bad, "--dir", st); code != exitError {
		t.Fatalf("tampered checkpoint: exit %d", code)
	}
}
