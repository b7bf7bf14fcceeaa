package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/algal-assay/assay/harness/synth"
)

// runDirFiles reads every file of the one run directory of workload name
// under root, the record aside (it carries wall-clock times).
func runDirFiles(t *testing.T, root, name string) map[string][]byte {
	t.Helper()
	slugs, err := filepath.Glob(filepath.Join(root, name, name+"-r*"))
	if err != nil || len(slugs) != 1 {
		t.Fatalf("%s/%s: run directories %v (%v)", root, name, slugs, err)
	}
	entries, err := os.ReadDir(slugs[0])
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, e := range entries {
		if e.Name() == "foundry-run.yml" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(slugs[0], e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = b
	}
	return out
}

// The batch of a workload in parts (9 systems x 300 cases: 4 parts) and
// one in a single part, run whole at concurrency 1 and 32 and as 4 shards
// in 4 processes at once, merged: every file of every run directory but
// the record is byte for byte the same, aggregate.json included, and the
// merged runs verify. A merge missing a shard, or given one twice, writes
// nothing and says which.
func TestShardsMergeToTheWholeRun(t *testing.T) {
	dir := t.TempDir()
	triage := filepath.Join("..", "..", "fixtures", "triage")
	if _, err := synth.Write(filepath.Join(dir, "suites", "big"), synth.Spec{Name: "big", Systems: 9, Cases: 300, Triage: triage, Gate: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := synth.Write(filepath.Join(dir, "suites", "small"), synth.Spec{Name: "small", Systems: 3, Cases: 20, Triage: triage, Gate: true}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"1", "32"} {
		if code, out := assayAt(t, dir, "run", "suites", "--concurrency", c, "--out", "whole"+c+"/runs", "--dir", "whole"+c+"/.algal"); code != 0 {
			t.Fatalf("whole run at concurrency %s: exit %d\n%s", c, code, out)
		}
	}
	var procs []*exec.Cmd
	var outs []*bytes.Buffer
	for i := 1; i <= 4; i++ {
		s := "s" + string(rune('0'+i))
		cmd, b := assayProcess(t, dir, "run", "suites", "--shard", string(rune('0'+i))+"/4", "--out", s+"/runs", "--dir", s+"/.algal")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		procs, outs = append(procs, cmd), append(outs, b)
	}
	for i, p := range procs {
		if err := p.Wait(); err != nil {
			t.Fatalf("shard %d/4: %v\n%s", i+1, err, outs[i])
		}
	}
	// Each shard's runs verify as they are, its parts' verification
	// records re-derived.
	for i := 1; i <= 4; i++ {
		s := "s" + string(rune('0'+i))
		if code, out := assayAt(t, dir, "ci", "verify", s+"/runs", "--dir", s+"/.algal", "--workloads", "suites"); code != 0 || !strings.Contains(out, "parts verified") {
			t.Fatalf("ci verify of shard %d/4: exit %d\n%s", i, code, out)
		}
	}
	if code, out := assayAt(t, dir, "ci", "merge", "s1", "s2", "s3"); code != 2 || !strings.Contains(out, "shard(s) 4/4 missing") {
		t.Fatalf("merge without shard 4: exit %d\n%s", code, out)
	}
	if code, out := assayAt(t, dir, "ci", "merge", "s1", "s2", "s3", "s3"); code != 2 || !strings.Contains(out, "are both shard 3/4") {
		t.Fatalf("merge with shard 3 twice: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "runs")); err == nil {
		t.Fatal("a refused merge wrote runs/")
	}
	if code, out := assayAt(t, dir, "ci", "merge", "s1", "s2", "s3", "s4", "--out", "merged/runs", "--dir", "merged/.algal"); code != 0 {
		t.Fatalf("merge: exit %d\n%s", code, out)
	}
	for _, name := range []string{"big", "small"} {
		want := runDirFiles(t, filepath.Join(dir, "whole1", "runs"), name)
		if name == "big" {
			if _, ok := want["aggregate.json"]; !ok || len(want) < 4*3 {
				t.Fatalf("big: %d files, no aggregate", len(want))
			}
		}
		for _, other := range []string{"whole32/runs", "merged/runs"} {
			got := runDirFiles(t, filepath.Join(dir, other), name)
			if len(got) != len(want) {
				t.Errorf("%s %s: %d files, want %d", other, name, len(got), len(want))
			}
			for f, b := range want {
				if !bytes.Equal(got[f], b) {
					t.Errorf("%s %s: %s differs from the whole run's", other, name, f)
				}
			}
		}
	}
	if code, out := assayAt(t, dir, "ci", "verify", "merged/runs", "--dir", "merged/.algal", "--workloads", "suites"); code != 0 {
		t.Fatalf("ci verify of the merged runs: exit %d\n%s", code, out)
	}
}

// Shards run and merged inside the checkout, as the sharded workflow does
// (runs, stores and downloaded shards under the workspace, none of them
// ignored by git), record the commit and an unmodified checkout: the
// store and the shards are Assay's own directories, not changes to what
// the runs read. Otherwise every run after the first would say
// foundry_modified, and the comment workflow, which holds each run to its
// commit, would refuse honest evidence.
func TestShardsInTheCheckoutRecordAnUnmodifiedCommit(t *testing.T) {
	repo := newPRRepo(t)
	head := repo.git(t, "rev-parse", "HEAD")
	// Each shard runs on its own machine: the other's output is not there
	// yet, and arrives (downloaded) before the merge.
	away := t.TempDir()
	for _, s := range []string{"1", "2"} {
		if code, out := assayAt(t, repo.dir, "run", "suites", "--shard", s+"/2", "--out", "shards/s"+s+"/runs", "--dir", "shards/s"+s+"/.algal"); code != 0 {
			t.Fatalf("shard %s/2: exit %d\n%s", s, code, out)
		}
		if err := os.Rename(filepath.Join(repo.dir, "shards", "s"+s), filepath.Join(away, "s"+s)); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range []string{"s1", "s2"} {
		if err := os.Rename(filepath.Join(away, s), filepath.Join(repo.dir, "shards", s)); err != nil {
			t.Fatal(err)
		}
	}
	if code, out := assayAt(t, repo.dir, "ci", "merge", "shards/s1", "shards/s2", "--out", "merged/head/runs", "--dir", "merged/head/.algal"); code != 0 {
		t.Fatalf("merge: exit %d\n%s", code, out)
	}
	records, _ := filepath.Glob(filepath.Join(repo.dir, "shards", "*", "runs", "*", "*", "foundry-run.yml"))
	more, _ := filepath.Glob(filepath.Join(repo.dir, "merged", "head", "runs", "*", "*", "foundry-run.yml"))
	records = append(records, more...)
	if len(records) < 8 {
		t.Fatalf("want the shards' and the merge's records, found %v", records)
	}
	for _, p := range records {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), "foundry_head: \""+head+"\"\n") || strings.Contains(string(b), "foundry_modified") {
			t.Errorf("%s does not record an unmodified %s:\n%s", p, head, b)
		}
	}
}
