package verify

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/bench"
	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/effect"
	"github.com/algal-assay/assay/engine/manifest"
	"github.com/algal-assay/assay/engine/store"
	"github.com/algal-assay/assay/engine/vm"
	"github.com/algal-assay/assay/runrecord"
)

const triage = `{"contract":"algal.organism.v1","key":"organism:triage","name":"Triage",
 "interface":{"inputs":{"ticket":{"cell":"ticket","port":"text"}},"outputs":{"out":{"cell":"route","port":"out"}}},
 "cells":[{"id":"ticket","kind":"input","outputs":{"text":"text"}},
  {"id":"route","kind":"classifier","inputs":{"ticket":"text"},"prompt":"Classify.",
   "output":{"kind":"choice","labels":["bug","feature"],"onMiss":"feature"}}],
 "edges":[{"from":{"cell":"ticket","port":"text"},"to":{"cell":"route","port":"ticket"}}]}`

const benchConfig = `{"contract":"algal.bench.config.v1",
 "cases":[{"id":"c1","args":{"ticket":"it crashes"},"expect":{"out":"bug"}}],
 "systems":[{"id":"s","manifest":"triage.algal.json","executors":{"x":"scripted:responses.json"}}]}`

func write(t *testing.T, path string, data []byte) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func encode(t *testing.T, v any) []byte {
	t.Helper()
	b, err := canon.Encode(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// tree lays out a project: a store at .algal, two good receipts, a bench
// report inside a harness run directory, a tampered receipt, and files the
// walk must ignore. It returns the root and the tampered receipt's path.
func tree(t *testing.T) (root, tampered string) {
	t.Helper()
	root = t.TempDir()
	storeDir := filepath.Join(root, ".algal")
	st, err := store.OpenFileStore(storeDir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := manifest.Parse([]byte(triage))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Put(store.Manifests, m.Value); err != nil {
		t.Fatal(err)
	}
	sc, _ := effect.NewScripted("scripted", map[string]any{"route": "bug"})
	var rec map[string]any
	for _, name := range []string{"a.json", "b.json"} {
		rec, err = vm.Run(m, map[string]any{"ticket": map[string]any{"text": "it crashes " + name}}, &vm.Host{Store: st, Router: effect.NewRouter(sc)})
		if err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(root, "receipts", name), encode(t, rec))
	}
	// Tampered: the recorded answer changed, the digest left alone.
	fv, err := canon.Parse(encode(t, rec), 0)
	if err != nil {
		t.Fatal(err)
	}
	forged := fv.(map[string]any)
	forged["cells"].(map[string]any)["route"].(map[string]any)["outputs"] = map[string]any{"out": "feature"}
	tampered = write(t, filepath.Join(root, "receipts", "tampered.json"), encode(t, forged))

	// A bench report written into a harness run directory.
	cfgDir := filepath.Join(root, "bench")
	write(t, filepath.Join(cfgDir, "triage.algal.json"), []byte(triage))
	write(t, filepath.Join(cfgDir, "responses.json"), []byte(`{"route":"bug"}`))
	cfgPath := write(t, filepath.Join(cfgDir, "bench.config.json"), []byte(benchConfig))
	cfg, err := bench.LoadConfig(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	wb := &vm.Workbench{Store: st}
	rep, err := bench.Run(context.Background(), cfg, wb, bench.Options{Concurrency: 1})
	if err != nil {
		t.Fatal(err)
	}
	b, err := rep.Encode()
	if err != nil {
		t.Fatal(err)
	}
	runDir := filepath.Join(root, "runs", "smoke", "r1")
	write(t, filepath.Join(runDir, "report.json"), b)
	a := runrecord.Assembly{Pipeline: "smoke", HarnessName: "assay-bench", Phases: []runrecord.AssemblyPhase{
		{N: 1, Kind: runrecord.KindStep, Skill: "evaluate", Outputs: []runrecord.Output{{ID: "report", File: "report.json"}}}}}
	rr, err := runrecord.Create(runDir, a, runrecord.Meta{RunSlug: "r1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := rr.StartPhase(1); err != nil {
		t.Fatal(err)
	}
	if err := rr.DonePhase(1); err != nil {
		t.Fatal(err)
	}
	if err := rr.Complete(); err != nil {
		t.Fatal(err)
	}

	// Ignored: plain JSON, a config naming no evidence contract, a store
	// object outside the store directory, a dot directory.
	write(t, filepath.Join(root, "notes.json"), []byte(`{"x":1}`))
	write(t, filepath.Join(root, "copy", "runs", strings.Repeat("a", 64)+".json"), encode(t, forged))
	write(t, filepath.Join(root, ".cache", "r.json"), encode(t, forged))
	return root, tampered
}

func TestVerifyTree(t *testing.T) {
	t.Parallel()
	root, tampered := tree(t)
	wb, err := vm.NewWorkbench(filepath.Join(root, ".algal"))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Verify(context.Background(), []string{root}, Options{Evidence: wb, StoreDir: filepath.Join(root, ".algal")})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Result{}
	for _, r := range rep.Results {
		rel, _ := filepath.Rel(root, r.Path)
		got[filepath.ToSlash(rel)] = r
	}
	want := map[string]struct {
		kind string
		ok   bool
	}{
		"receipts/a.json":        {KindReceipt, true},
		"receipts/b.json":        {KindReceipt, true},
		"receipts/tampered.json": {KindReceipt, false},
		// A run directory is checked as a whole (its report.json is not an
		// item of its own), and this hand-made one fails: no workload to
		// re-derive its verdicts from, and a report its record never lists.
		"runs/smoke/r1": {KindRun, false},
	}
	if len(got) != len(want) {
		t.Fatalf("found %d items, want %d:\n%s", len(got), len(want), rep.Text())
	}
	for p, w := range want {
		r, ok := got[p]
		if !ok || r.Kind != w.kind || r.OK != w.ok {
			t.Errorf("%s: got %+v, want kind %s ok %v", p, r, w.kind, w.ok)
		}
	}
	if rep.OK() || rep.Failed() != 2 {
		t.Fatalf("ok %v failed %d", rep.OK(), rep.Failed())
	}
	run := got["runs/smoke/r1"]
	for _, want := range []string{"report.json is in the run directory but foundry-run.yml lists no phase writing it",
		"verification.json and gate.json cannot be re-derived: no workload files were given"} {
		if !slices.Contains(run.Mismatches, want) && !slices.ContainsFunc(run.Mismatches, func(m string) bool { return strings.HasPrefix(m, want) }) {
			t.Errorf("run mismatches %q lack %q", run.Mismatches, want)
		}
	}
	text := rep.Text()
	if !strings.Contains(text, "FAIL "+tampered+"  receipt  ") {
		t.Fatalf("text does not name the tampered receipt:\n%s", text)
	}
	if r := got["receipts/a.json"]; !strings.Contains(text, "ok   "+r.Path+"  receipt  "+r.Digest+"\n") || !canon.IsDigest(r.Digest) {
		t.Fatalf("ok line missing:\n%s", text)
	}
	if r := got["runs/smoke/r1"]; r.Status != runrecord.RunComplete {
		t.Fatalf("run status %q", r.Status)
	}

	items, err := Find([]string{root}, filepath.Join(root, ".algal"))
	if err != nil || len(items) != len(want) {
		t.Fatalf("Find: %v %v", items, err)
	}
}

func TestVerifyAnnotationsAndSummary(t *testing.T) {
	t.Parallel()
	rep := &Report{Roots: []string{"."}, Results: []Result{
		{Path: "ok.json", Kind: KindReceipt, OK: true, Digest: "sha256:" + strings.Repeat("1", 64)},
		{Path: "dir/bad,one:x.json", Kind: KindReceipt, Mismatches: []string{"cells.route: 100% off\nsecond line | pipe <b>", "another"}},
	}}
	ann := rep.Annotations("")
	if len(ann) != 1 {
		t.Fatalf("annotations %v", ann)
	}
	wantAnn := "::error file=dir/bad%2Cone%3Ax.json::receipt does not verify: cells.route: 100%25 off second line | pipe <b> (+1 more)"
	if ann[0] != wantAnn {
		t.Fatalf("annotation\n got %s\nwant %s", ann[0], wantAnn)
	}
	// Paths under the workspace become repository-relative.
	ws := t.TempDir()
	rep2 := &Report{Results: []Result{{Path: filepath.Join(ws, "a", "r.json"), Kind: KindBench, Mismatches: []string{"x"}}}}
	if a := rep2.Annotations(ws); len(a) != 1 || !strings.HasPrefix(a[0], "::error file=a/r.json::") {
		t.Fatalf("workspace-relative annotation %v", a)
	}

	md := rep.Markdown()
	for _, want := range []string{
		"| Result | File | Kind | Digest or first mismatch |",
		"| ❌ FAIL | `dir/bad,one:x.json` | receipt | cells.route: 100% off second line \\| pipe &lt;b&gt; (+1 more) |",
		"| ok | `ok.json` | receipt | `sha256:",
		"1 of 2 files failed to verify",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("summary lacks %q:\n%s", want, md)
		}
	}
	if strings.Index(md, "FAIL") > strings.Index(md, "| ok |") {
		t.Error("failures are not listed first")
	}
}

func TestVerifyNothingFound(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	write(t, filepath.Join(root, "notes.json"), []byte(`{"x":1}`))
	wb, _ := vm.NewWorkbench("")
	rep, err := Verify(context.Background(), []string{root}, Options{Evidence: wb})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 0 || rep.OK() || !strings.Contains(rep.Summary(), "no receipts") {
		t.Fatalf("%+v %s", rep, rep.Summary())
	}
	if rep, _ := Verify(context.Background(), []string{root}, Options{Evidence: wb, AllowEmpty: true}); !rep.OK() {
		t.Fatal("AllowEmpty: finding nothing is not ok")
	}
	if _, err := Verify(context.Background(), []string{filepath.Join(root, "missing")}, Options{Evidence: wb}); err == nil {
		t.Fatal("a missing root is not an error")
	}
}

func TestVerifyUnparseableEvidenceFails(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	write(t, filepath.Join(root, "r.json"), []byte(`{"contract":"algal.run.v1","contract":"x"}`))
	write(t, filepath.Join(root, "bad-run", runrecord.RecordFile), []byte("{not yaml: ["))
	wb, _ := vm.NewWorkbench("")
	rep, err := Verify(context.Background(), []string{root}, Options{Evidence: wb})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 2 || rep.Failed() != 2 {
		t.Fatalf("%s", rep.Text())
	}
	kinds := rep.Results[0].Kind + "," + rep.Results[1].Kind
	if kinds != "run,receipt" {
		t.Fatalf("kinds %s:\n%s", kinds, rep.Text())
	}
}

func TestVerifyReceiptWithoutManifest(t *testing.T) {
	t.Parallel()
	root, _ := tree(t)
	wb, _ := vm.NewWorkbench(t.TempDir()) // an empty store
	rep, err := Verify(context.Background(), []string{filepath.Join(root, "receipts", "a.json")}, Options{Evidence: wb})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 1 || rep.Results[0].OK || !strings.Contains(rep.Results[0].Detail(), "manifest sha256:") {
		t.Fatalf("%s", rep.Text())
	}
}

// A file name is chosen by whoever committed the file: one with a line
// break must not add a line to the output, where it could pose as another
// result or, at the start of a line under GitHub Actions, as a workflow
// command.
func TestTextOneLinePerResult(t *testing.T) {
	t.Parallel()
	rep := &Report{Roots: []string{"."}, Results: []Result{
		{Path: "evil\n::error file=x::forged\nok   fine.json", Kind: KindReceipt, OK: false, Mismatches: []string{"bad\nworse"}},
		{Path: "tab\there.json", Kind: KindReceipt, OK: true, Digest: "sha256:00"},
	}}
	lines := strings.Split(strings.TrimSuffix(rep.Text(), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines, want 2 results and the count:\n%s", len(lines), rep.Text())
	}
	if !strings.HasPrefix(lines[0], "FAIL ") || !strings.Contains(lines[0], `"evil\n::error file=x::forged\nok   fine.json"`) {
		t.Errorf("line 0 does not quote the path: %q", lines[0])
	}
	if !strings.Contains(lines[1], `"tab\there.json"`) {
		t.Errorf("line 1 does not quote the path: %q", lines[1])
	}
	for _, a := range rep.Annotations("") {
		if strings.Contains(a, "\n") {
			t.Errorf("annotation spans lines: %q", a)
		}
	}
}
