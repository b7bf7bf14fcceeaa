package verify

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/algal-assay/assay/engine/vm"
	"github.com/algal-assay/assay/runrecord"
)

func verifyWithin(t *testing.T, roots []string, opts Options) *Report {
	t.Helper()
	type out struct {
		rep *Report
		err error
	}
	done := make(chan out, 1)
	go func() {
		rep, err := Verify(context.Background(), roots, opts)
		done <- out{rep, err}
	}()
	select {
	case o := <-done:
		if o.err != nil {
			t.Fatal(o.err)
		}
		return o.rep
	case <-time.After(20 * time.Second):
		t.Fatal("Verify blocked")
		return nil
	}
}

// A FIFO named as a root fails at once instead of blocking the open; one
// met by the walk is passed over like a symbolic link.
func TestFIFONeverBlocks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "f.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("mkfifo:", err)
	}
	wb, _ := vm.NewWorkbench("")
	rep := verifyWithin(t, []string{fifo}, Options{Evidence: wb})
	if len(rep.Results) != 1 || rep.Results[0].OK || rep.Results[0].Kind != KindUnknown ||
		!strings.Contains(rep.Results[0].Detail(), "not a regular file") {
		t.Fatalf("%s", rep.Text())
	}
	rep = verifyWithin(t, []string{dir}, Options{Evidence: wb, AllowEmpty: true})
	if len(rep.Results) != 0 || !rep.OK() {
		t.Fatalf("%s", rep.Text())
	}
}

// Renaming a contract, or calling something report.json that is not a
// report, makes evidence fail, not disappear; other contracts stay none of
// the verifier's business.
func TestUnrecognisedEvidenceFails(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	write(t, filepath.Join(root, "a", "report.json"), []byte(`{"contract":"algal.bench.v9","digest":"x"}`))
	write(t, filepath.Join(root, "b", "report.json"), []byte(`{"x":1}`))
	write(t, filepath.Join(root, "c", "receipt.json"), []byte(`{"contract":"algal.run.v2"}`))
	write(t, filepath.Join(root, "d", "mailbox.json"), []byte(`{"contract":"algal.mailbox.v1"}`))
	write(t, filepath.Join(root, "e", "notes.json"), []byte(`{"see":"algal.bench.v1 reports"}`))
	wb, _ := vm.NewWorkbench("")
	rep := verifyWithin(t, []string{root}, Options{Evidence: wb})
	if len(rep.Results) != 3 || rep.Failed() != 3 {
		t.Fatalf("%s", rep.Text())
	}
	for _, r := range rep.Results {
		if r.Kind != KindUnknown || !strings.Contains(r.Detail(), "is not one this verifier knows") {
			t.Errorf("%s: %s %s", r.Path, r.Kind, r.Detail())
		}
	}
}

// A directory with a run's derived files but no record is a run that
// fails, not a folder of JSON to skim.
func TestRunDirectoryWithoutRecordFails(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	write(t, filepath.Join(root, "w", "r1", "gate.json"), []byte(`{"passed":true,"rules":[],"workload":"w"}`))
	wb, _ := vm.NewWorkbench("")
	rep := verifyWithin(t, []string{root}, Options{Evidence: wb})
	if len(rep.Results) != 1 || rep.Results[0].Kind != KindRun || rep.Results[0].OK {
		t.Fatalf("%s", rep.Text())
	}
}

// What interrupted writers leave is listed, as such, without failing.
func TestLeftoversListed(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	storeDir := filepath.Join(root, ".algal")
	stage := filepath.Join(root, "runs", "w", ".w-r1-0123456789.partial-42")
	a := runrecord.Assembly{Pipeline: "w", HarnessName: "assay-bench", Phases: []runrecord.AssemblyPhase{{N: 1, Kind: runrecord.KindStep, Skill: "s"}}}
	if err := os.MkdirAll(stage, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := runrecord.Create(stage, a, runrecord.Meta{RunSlug: "w-r1-0123456789"}, nil); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "runs", "w", ".w-r1-0123456789.old-7", "run"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(storeDir, "runs", ".tmp-123"), []byte("x"))
	write(t, filepath.Join(root, "notes", ".assay-tmp-9"), []byte("x"))
	wb, _ := vm.NewWorkbench(storeDir)
	rep := verifyWithin(t, []string{root}, Options{Evidence: wb, StoreDir: storeDir, AllowEmpty: true})
	if !rep.OK() || len(rep.Results) != 0 {
		t.Fatalf("leftovers must not fail:\n%s", rep.Text())
	}
	kinds := map[string]Leftover{}
	for _, l := range rep.Leftovers {
		kinds[l.Kind] = l
	}
	if len(rep.Leftovers) != 4 || kinds[LeftInterrupted].Status != runrecord.RunRunning || kinds[LeftInterrupted].Path != stage ||
		kinds[LeftReplaced].Path == "" || kinds[LeftTemp].Path == "" {
		t.Fatalf("leftovers %+v", rep.Leftovers)
	}
	text := rep.Text()
	if !strings.Contains(text, "note "+stage+"  interrupted  staging directory of a run that never finished (record status running)") ||
		!strings.Contains(text, "4 leftovers of interrupted writes listed") {
		t.Fatalf("text:\n%s", text)
	}
	if v := rep.Value(); len(v["leftovers"].([]any)) != 4 {
		t.Fatalf("json %v", v["leftovers"])
	}
	if ann := rep.Annotations(root); len(ann) != 4 || !strings.HasPrefix(ann[2], "::notice file=runs/w/.w-r1-0123456789.partial-42::interrupted: ") {
		t.Fatalf("annotations %q", ann)
	}
	if md := rep.Markdown(); !strings.Contains(md, "Left by interrupted writes (not evidence):") {
		t.Fatalf("markdown:\n%s", md)
	}
}
