package merge

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/algal-assay/assay/ci/verify"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/vm"
	"github.com/algal-assay/assay/harness"
	"github.com/algal-assay/assay/harness/parts"
	"github.com/algal-assay/assay/harness/synth"
)

// batch writes a workload in parts (9 systems x 300 cases: 4 parts) and
// one in a single part, and returns their files.
func batch(t *testing.T, dir string) []string {
	t.Helper()
	triage := filepath.Join("..", "..", "fixtures", "triage")
	var files []string
	for _, s := range []synth.Spec{{Name: "big", Systems: 9, Cases: 300}, {Name: "small", Systems: 3, Cases: 20}} {
		s.Triage, s.Gate = triage, true
		p, err := synth.Write(filepath.Join(dir, "suites", s.Name), s)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
	}
	return files
}

// runInto runs files (as shard s when s is not nil) into root/runs with
// the store root/.algal.
func runInto(t *testing.T, files []string, root string, s *parts.Shard) {
	t.Helper()
	wb, err := vm.NewWorkbench(filepath.Join(root, ShardStore))
	if err != nil {
		t.Fatal(err)
	}
	results, err := harness.RunAll(context.Background(), files, harness.BatchOptions{Options: harness.Options{Runner: wb, Store: wb, Out: filepath.Join(root, ShardRuns)}, Shard: s})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		if r.Err != nil {
			t.Fatalf("%s: %v", r.Path, r.Err)
		}
	}
}

// twoShards runs the batch's paired workload as shards 1/2 and 2/2 into
// dir/s1 and dir/s2, and returns its file and the shard directories.
func twoShards(t *testing.T, dir string) (files, dirs []string) {
	t.Helper()
	files = batch(t, dir)[:1]
	for i := 1; i <= 2; i++ {
		d := filepath.Join(dir, fmt.Sprintf("s%d", i))
		runInto(t, files, d, &parts.Shard{I: i, N: 2})
		dirs = append(dirs, d)
	}
	return files, dirs
}

func mergeInto(t *testing.T, root string, dirs []string) ([]*harness.Result, error) {
	t.Helper()
	wb, err := vm.NewWorkbench(filepath.Join(root, ShardStore))
	if err != nil {
		t.Fatal(err)
	}
	return Merge(context.Background(), dirs, Options{Out: filepath.Join(root, ShardRuns), Store: wb})
}

// runFiles reads every file of workload name's one run directory under
// root, the record aside (it carries wall-clock times).
func runFiles(t *testing.T, root, name string) map[string][]byte {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(root, ShardRuns, name, name+"-r*"))
	if err != nil || len(dirs) != 1 {
		t.Fatalf("%s/%s: run directories %v (%v)", root, name, dirs, err)
	}
	entries, err := os.ReadDir(dirs[0])
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, e := range entries {
		if e.Name() == "foundry-run.yml" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dirs[0], e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = b
	}
	return out
}

// The batch run as 2, 4 and 8 shards (at 8, three hold nothing and write
// no store) merges to the one-machine run byte for byte, the record
// aside; every part a shard shares with others carries its verification
// record.
func TestShardsMergeByteIdenticalForTwoFourEight(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := batch(t, dir)
	runInto(t, files, filepath.Join(dir, "whole"), nil)
	for _, n := range []int{2, 4, 8} {
		var dirs []string
		for i := 1; i <= n; i++ {
			d := filepath.Join(dir, fmt.Sprintf("n%d-s%d", n, i))
			runInto(t, files, d, &parts.Shard{I: i, N: n})
			dirs = append(dirs, d)
		}
		records, _ := filepath.Glob(filepath.Join(dir, fmt.Sprintf("n%d-s*", n), ShardRuns, "big", "big-r*", "part-*-verified.json"))
		if len(records) != 4 {
			t.Fatalf("%d shards: %d verification records of big's 4 parts", n, len(records))
		}
		merged := filepath.Join(dir, fmt.Sprintf("merged%d", n))
		results, err := mergeInto(t, merged, dirs)
		if err != nil {
			t.Fatalf("merge of %d shards: %v", n, err)
		}
		for _, r := range results {
			if r.Err != nil {
				t.Fatalf("merge of %d shards: %s: %v", n, r.Path, r.Err)
			}
		}
		for _, name := range []string{"big", "small"} {
			want, got := runFiles(t, filepath.Join(dir, "whole"), name), runFiles(t, merged, name)
			if _, ok := want["aggregate.json"]; name == "big" && !ok {
				t.Fatal("big: no aggregate")
			}
			if len(got) != len(want) {
				t.Errorf("%d shards, %s: %d files, want %d", n, name, len(got), len(want))
			}
			for f, b := range want {
				if !bytes.Equal(got[f], b) {
					t.Errorf("%d shards, %s: %s differs from the whole run's", n, name, f)
				}
			}
		}
	}
}

// A forged or missing shard fails the merge naming it: a part report
// edited after its shard verified it (its record no longer matches, so
// the merge verifies it in full), a receipt edited in a shard's store, a
// part report removed, a shard left out.
func TestMergeNamesAForgedOrMissingShard(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, dirs := twoShards(t, dir)
	runDir, _ := filepath.Glob(filepath.Join(dirs[1], ShardRuns, "big", "big-r*"))
	if len(runDir) != 1 {
		t.Fatalf("s2: %v", runDir)
	}
	report := filepath.Join(runDir[0], "part-0002-report.json")
	good, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	forged := bytes.Replace(good, []byte(`"passed":true`), []byte(`"passed":false`), 1)
	if bytes.Equal(forged, good) {
		t.Fatal("no verdict to flip")
	}
	if err := os.WriteFile(report, forged, 0o644); err != nil {
		t.Fatal(err)
	}
	results, err := mergeInto(t, filepath.Join(dir, "m1"), dirs)
	if err != nil {
		t.Fatal(err)
	}
	if e := results[0].Err; e == nil || !strings.Contains(e.Error(), "shard "+dirs[1]) || !strings.Contains(e.Error(), report) {
		t.Fatalf("merge of an edited part report: %v, want an error naming %s", e, report)
	}
	if err := os.WriteFile(report, good, 0o644); err != nil {
		t.Fatal(err)
	}

	receipts, _ := filepath.Glob(filepath.Join(dirs[0], ShardStore, "runs", "*.json"))
	if len(receipts) == 0 {
		t.Fatal("no receipts in s1's store")
	}
	rb, err := os.ReadFile(receipts[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(receipts[0], bytes.Replace(rb, []byte(`"complete"`), []byte(`"failed"`), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := mergeInto(t, filepath.Join(dir, "m2"), dirs); fault.CodeOf(err) != fault.DigestMismatch || !strings.Contains(err.Error(), receipts[0]) {
		t.Fatalf("merge of a shard with an edited receipt: %v, want %s naming %s", err, fault.DigestMismatch, receipts[0])
	}
	if err := os.WriteFile(receipts[0], rb, 0o644); err != nil {
		t.Fatal(err)
	}

	if err := os.Remove(report); err != nil {
		t.Fatal(err)
	}
	results, err = mergeInto(t, filepath.Join(dir, "m3"), dirs)
	if err != nil {
		t.Fatal(err)
	}
	if e := results[0].Err; e == nil || !strings.Contains(e.Error(), report) {
		t.Fatalf("merge of a shard missing a part report: %v, want an error naming %s", e, report)
	}

	if _, err := mergeInto(t, filepath.Join(dir, "m4"), dirs[:1]); fault.CodeOf(err) != CodeShards || !strings.Contains(err.Error(), "shard(s) 2/2 missing") {
		t.Fatalf("merge without shard 2: %v", err)
	}
}

// The merge takes the shards' objects as hard links (one file per
// receipt, not a second written one), and the store stays verified on
// read: a shard's receipt edited in place after the merge changes the
// merged store's object too, and `ci verify` of the merged run fails on
// its digest.
func TestMergeLinksTheShardsObjects(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files, dirs := twoShards(t, dir)
	merged := filepath.Join(dir, "m")
	results, err := mergeInto(t, merged, dirs)
	if err != nil || results[0].Err != nil {
		t.Fatalf("merge: %v %v", err, results)
	}
	shardFiles := map[string][]string{} // a receipt two shards wrote is in both
	for _, d := range dirs {
		fs, _ := filepath.Glob(filepath.Join(d, ShardStore, "runs", "*.json"))
		for _, f := range fs {
			shardFiles[filepath.Base(f)] = append(shardFiles[filepath.Base(f)], f)
		}
	}
	objects, _ := filepath.Glob(filepath.Join(merged, ShardStore, "runs", "*.json"))
	if len(objects) == 0 || len(objects) != len(shardFiles) {
		t.Fatalf("%d receipts merged of the shards' %d", len(objects), len(shardFiles))
	}
	var victim string
	for _, o := range objects {
		if victim = shardFile(t, o, shardFiles[filepath.Base(o)]); victim == "" {
			t.Fatalf("%s is none of its shards' files %v", o, shardFiles[filepath.Base(o)])
		}
	}

	check := func() (verify.Result, error) {
		wb, err := vm.NewWorkbench(filepath.Join(merged, ShardStore))
		if err != nil {
			t.Fatal(err)
		}
		ws, err := verify.LoadWorkloads(files...)
		if err != nil {
			t.Fatal(err)
		}
		runDir := results[0].Outcome.RunDir
		return verify.CheckRun(context.Background(), runDir, verify.Options{Evidence: wb, Workloads: ws})
	}
	if chk, err := check(); err != nil || !chk.OK {
		t.Fatalf("ci verify of the merged run: %v %v", err, chk.Mismatches)
	}
	rb, err := os.ReadFile(victim)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(victim, bytes.Replace(rb, []byte(`"complete"`), []byte(`"failed"`), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	chk, err := check()
	if err == nil && chk.OK {
		t.Fatal("ci verify of the merged run passed with a shard receipt edited after the merge")
	}
	if msg := fmt.Sprint(err, chk.Mismatches); !strings.Contains(msg, fault.DigestMismatch) && !strings.Contains(msg, "does not match its digest") {
		t.Fatalf("ci verify after the edit: %s, want a digest mismatch", msg)
	}
}

// shardFile is the one of candidates that is the file merged names ("":
// none is).
func shardFile(t *testing.T, merged string, candidates []string) string {
	t.Helper()
	a, err := os.Stat(merged)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range candidates {
		if b, err := os.Stat(c); err == nil && os.SameFile(a, b) {
			return c
		}
	}
	return ""
}
