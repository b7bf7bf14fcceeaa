package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// replayFixture records the triage organism into a file store and returns
// the directory, the receipt path and the store path.
func replayFixture(t *testing.T) (dir, receiptPath, st string) {
	t.Helper()
	dir = t.TempDir()
	st = filepath.Join(dir, "store")
	receiptPath = filepath.Join(dir, "receipt.json")
	recordTriage(t, dir, "it crashes", st, receiptPath)
	return dir, receiptPath, st
}

func decodeComparison(t *testing.T, stdout string) map[string]any {
	t.Helper()
	v := decodeObject(t, stdout)
	if v["contract"] != "algal.replay-comparison.v1" {
		t.Fatalf("contract: %s", stdout)
	}
	return v
}

func countFiles(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	_ = filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			n++
		}
		return nil
	})
	return n
}

func TestReplayCLIIdentical(t *testing.T) {
	t.Parallel()
	dir, rec, st := replayFixture(t)
	before := countFiles(t, st)
	code, stdout, stderr := runCLI(t, "replay", rec, "--with", filepath.Join(dir, "triage.algal.json"), "--dir", st)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	v := decodeComparison(t, stdout)
	if v["verdict"] != "identical" || v["divergence"] != nil {
		t.Fatalf("%s", stdout)
	}
	if countFiles(t, st) != before {
		t.Fatal("replay without --write changed the store")
	}
}

func TestReplayCLIDivergedWrite(t *testing.T) {
	t.Parallel()
	dir, rec, st := replayFixture(t)
	rev := putFile(t, dir, "revised.algal.json", strings.Replace(runTriage, "Classify.", "Classify carefully.", 1))
	resp := putFile(t, dir, "live.json", `{"route":"feature"}`)
	out := filepath.Join(dir, "comparison.json")
	code, stdout, stderr := runCLI(t, "replay", rec, "--with", rev, "--responses", resp, "--dir", st, "--write", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	v := decodeComparison(t, stdout)
	div, _ := v["divergence"].(map[string]any)
	if v["verdict"] != "diverged" || div["path"] != "route" {
		t.Fatalf("%s", stdout)
	}
	if b, _ := os.ReadFile(out); string(b)+"\n" != stdout {
		t.Fatal("--out is not stdout's bytes without the newline")
	}
	// --write persisted the revised receipt and its manifest: find the
	// receipt in the store and verify it from the store alone.
	runs, _ := filepath.Glob(filepath.Join(st, "runs", "*.json"))
	var revised string
	for _, p := range runs {
		b, _ := os.ReadFile(p)
		if strings.Contains(string(b), v["revisedReceipt"].(string)) {
			revised = p
		}
	}
	if revised == "" {
		t.Fatalf("revised receipt %v not persisted among %v", v["revisedReceipt"], runs)
	}
	if code, stdout, stderr := runCLI(t, "verify", revised, "--dir", st); code != 0 {
		t.Fatalf("persisted revised receipt does not verify: %s %s", stdout, stderr)
	}
}

func TestReplayCLICouldNotReplay(t *testing.T) {
	t.Parallel()
	dir, rec, st := replayFixture(t)
	rev := putFile(t, dir, "revised.algal.json", strings.Replace(runTriage, "Classify.", "Classify carefully.", 1))
	code, stdout, _ := runCLI(t, "replay", rec, "--with", rev, "--dir", st)
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	v := decodeComparison(t, stdout)
	reason, _ := v["reason"].(map[string]any)
	if v["verdict"] != "could-not-replay" || reason["code"] != "missing-effect" || reason["path"] != "route" {
		t.Fatalf("%s", stdout)
	}
	bad := putFile(t, dir, "bad.algal.json", `{"contract":"algal.organism.v1","key":"bogus"}`)
	code, stdout, _ = runCLI(t, "replay", rec, "--with", bad)
	if code != 1 || !strings.Contains(stdout, `"manifest-invalid"`) {
		t.Fatalf("exit %d: %s", code, stdout)
	}
}

func TestReplayCLIUsage(t *testing.T) {
	t.Parallel()
	_, rec, _ := replayFixture(t)
	if code, _, _ := runCLI(t, "replay", rec); code != 2 {
		t.Fatalf("missing --with: exit %d, want 2", code)
	}
	// A receipt given as the revision is not a manifest: the record cannot
	// replay it (exit 1), and --write writes nothing.
	dir := t.TempDir()
	if code, out, _ := runCLI(t, "replay", rec, "--with", rec, "--write", "--dir", dir); code != exitNo || decodeComparison(t, out)["verdict"] != "could-not-replay" {
		t.Fatalf("receipt as revision: exit %d, want 1: %s", code, out)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("a rejected replay wrote %d entries", len(entries))
	}
}
