package runrecord

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/algal-assay/assay/engine/fault/faulttest"
)

func TestCreateWritesRosterPending(t *testing.T) {
	dir := t.TempDir()
	a := paperAssembly()
	rec, err := Create(dir, a, Meta{RunSlug: "auris-scf1", FoundryHead: "63a3f9cf63a3f9cf63a3f9cf63a3f9cf63a3f9cf"}, stepClock())
	must(t, err)
	assemblyBytes, err := os.ReadFile(filepath.Join(dir, AssemblyFile))
	must(t, err)
	want, err := EncodeAssembly(a)
	must(t, err)
	if !bytes.Equal(assemblyBytes, want) {
		t.Fatalf("_assembly.json = %s, want %s", assemblyBytes, want)
	}
	got := readBack(t, dir)
	if got.Status != RunRunning || got.FinishedAt != nil || !got.StartedAt.Equal(at(1)) {
		t.Fatalf("run header: %+v", got)
	}
	if got.Pipeline != "paper-to-galaxy" || got.HarnessName != "pipeline-paper-to-galaxy" || got.SourceRevision != 2 || got.RunSlug != "auris-scf1" {
		t.Fatalf("identity: %+v", got)
	}
	if got.AssemblySHA256 != AssemblySHA256(assemblyBytes) {
		t.Fatalf("assembly_sha256 %q is not the sha of _assembly.json", got.AssemblySHA256)
	}
	if got.FoundryHead != "63a3f9cf63a3f9cf63a3f9cf63a3f9cf63a3f9cf" {
		t.Fatalf("foundry_head %q", got.FoundryHead)
	}
	var ns []int
	for _, p := range got.Phases {
		if p.Status != PhasePending {
			t.Fatalf("phase %d starts %s", p.N, p.Status)
		}
		ns = append(ns, p.N)
	}
	if !reflect.DeepEqual(ns, []int{1, 6, 7}) || got.Phases[2].Pattern != "test-data-resolution" || got.Phases[0].Skill != "summarize-paper" {
		t.Fatalf("roster copied wrongly: %+v", got.Phases)
	}
	if !reflect.DeepEqual(*got, rec.Snapshot()) {
		t.Fatalf("disk and memory disagree:\n%+v\n%+v", *got, rec.Snapshot())
	}
	noTemps(t, dir)
}

// TestFullLifecycle drives the seed's example run end to end: a step, a
// 26-iteration loop that writes every iteration, and a branch.
func TestFullLifecycle(t *testing.T) {
	dir := t.TempDir()
	rec, err := Create(dir, paperAssembly(), Meta{RunSlug: "auris-scf1"}, stepClock())
	must(t, err)
	must(t, rec.StartPhase(1))
	must(t, rec.AddArtifact(1, "freeform-summary", "freeform-summary.md"))
	must(t, rec.DonePhase(1))

	must(t, rec.StartPhase(6))
	for i := 1; i <= 26; i++ {
		it, err := rec.NextIteration(6)
		must(t, err)
		if it != i {
			t.Fatalf("iteration %d, want %d", it, i)
		}
		must(t, rec.AddLoopArtifact(6, it, "galaxy-workflow-draft", "galaxy-workflow-draft.gxwf.yml"))
	}
	must(t, rec.AddArtifact(6, "galaxy-workflow", "galaxy-workflow.gxwf.yml"))
	must(t, rec.DonePhase(6))

	must(t, rec.StartPhase(7))
	must(t, rec.SelectBranch(7, "paper-to-test-data"))
	must(t, rec.AddArtifact(7, "test-data-refs", "test-data-refs.json"))
	must(t, rec.DonePhase(7))
	must(t, rec.Complete())

	got := readBack(t, dir)
	if got.Status != RunComplete || got.FinishedAt == nil {
		t.Fatalf("final status %s finished %v", got.Status, got.FinishedAt)
	}
	loop := got.Phases[1]
	if loop.Iterations != 26 || len(loop.Artifacts) != 27 {
		t.Fatalf("loop: iterations %d rows %d", loop.Iterations, len(loop.Artifacts))
	}
	for i, a := range loop.Artifacts[:26] {
		if a.Iteration != i+1 || a.File != "galaxy-workflow-draft.gxwf.yml" {
			t.Fatalf("loop row %d: %+v", i, a)
		}
	}
	if loop.Artifacts[26].Iteration != 0 {
		t.Fatalf("a non-iteration row carries iteration %d", loop.Artifacts[26].Iteration)
	}
	if got.Phases[2].Selected != "paper-to-test-data" || got.Phases[0].Iterations != 0 {
		t.Fatalf("branch/step: %+v %+v", got.Phases[2], got.Phases[0])
	}
	for _, p := range got.Phases {
		if p.Status != PhaseDone {
			t.Fatalf("phase %d is %s", p.N, p.Status)
		}
	}
	if !reflect.DeepEqual(*got, rec.Snapshot()) {
		t.Fatalf("disk and memory disagree")
	}
	// Every update after the run finished is refused; Cancel is a no-op.
	faulttest.Want(t, rec.StartPhase(1), CodeClosed)
	must(t, rec.Cancel())
	if readBack(t, dir).Status != RunComplete {
		t.Fatal("a late cancel rewrote a complete run")
	}
	noTemps(t, dir)

	v, err := Read(dir, Options{})
	must(t, err)
	draft := v.Writers[slicesIndex(v.Writers, "galaxy-workflow-draft.gxwf.yml")]
	if draft.Phase != 6 || draft.Iteration != 26 {
		t.Fatalf("last writer of the draft: %+v", draft)
	}
}

func slicesIndex(ws []FileWriter, file string) int {
	for i, w := range ws {
		if w.File == file {
			return i
		}
	}
	return -1
}

func TestLoopWritesOnlySomeIterations(t *testing.T) {
	rec, dir := paperRecorder(t)
	must(t, rec.SkipPhase(1))
	must(t, rec.StartPhase(6))
	for i := 1; i <= 5; i++ {
		it, err := rec.NextIteration(6)
		must(t, err)
		if it%2 == 1 { // iterations 2 and 4 write nothing
			must(t, rec.AddLoopArtifact(6, it, "galaxy-workflow-draft", "galaxy-workflow-draft.gxwf.yml"))
		}
	}
	faulttest.Want(t, rec.AddLoopArtifact(6, 6, "galaxy-workflow-draft", "galaxy-workflow-draft.gxwf.yml"), CodeTransition)
	must(t, rec.DonePhase(6))
	got := readBack(t, dir).Phases[1]
	var its []int
	for _, a := range got.Artifacts {
		its = append(its, a.Iteration)
	}
	if got.Iterations != 5 || !reflect.DeepEqual(its, []int{1, 3, 5}) {
		t.Fatalf("iterations %d rows %v", got.Iterations, its)
	}
}

func TestFailPhaseFailsRun(t *testing.T) {
	rec, dir := paperRecorder(t)
	must(t, rec.StartPhase(1))
	must(t, rec.DonePhase(1))
	must(t, rec.StartPhase(6))
	must(t, rec.FailPhase(6, errors.New("step timed out")))
	got := readBack(t, dir)
	if got.Status != RunFailed || got.FinishedAt == nil || got.Phases[1].Status != PhaseFailed || got.Phases[2].Status != PhasePending {
		t.Fatalf("after failure: %+v", got)
	}
	faulttest.Want(t, rec.StartPhase(7), CodeClosed)
	faulttest.Want(t, rec.Complete(), CodeClosed)
	must(t, rec.Cancel()) // no-op
	if readBack(t, dir).Status != RunFailed {
		t.Fatal("cancel overwrote failed")
	}
}

func TestCancel(t *testing.T) {
	rec, dir := paperRecorder(t)
	must(t, rec.StartPhase(1))
	must(t, rec.Cancel())
	got := readBack(t, dir)
	if got.Status != RunCancelled || got.FinishedAt == nil || got.Phases[0].Status != PhaseRunning {
		t.Fatalf("after cancel: %+v", got)
	}
	faulttest.Want(t, rec.DonePhase(1), CodeClosed)
}

func TestTransitionsRefused(t *testing.T) {
	cases := []struct {
		name string
		prep func(*Recorder) error
		op   func(*Recorder) error
		code string
	}{
		{"unknown phase", nil, func(r *Recorder) error { return r.StartPhase(2) }, CodePhase},
		{"start twice", func(r *Recorder) error { return r.StartPhase(1) }, func(r *Recorder) error { return r.StartPhase(1) }, CodeTransition},
		{"done while pending", nil, func(r *Recorder) error { return r.DonePhase(1) }, CodeTransition},
		{"artifact while pending", nil, func(r *Recorder) error { return r.AddArtifact(1, "x", "x.md") }, CodeTransition},
		{"artifact path escapes", func(r *Recorder) error { return r.StartPhase(1) }, func(r *Recorder) error { return r.AddArtifact(1, "x", "../x.md") }, CodeTransition},
		{"artifact without id", func(r *Recorder) error { return r.StartPhase(1) }, func(r *Recorder) error { return r.AddArtifact(1, "", "x.md") }, CodeTransition},
		{"iteration while pending", nil, func(r *Recorder) error { _, err := r.NextIteration(6); return err }, CodeTransition},
		{"loop artifact iteration 0", func(r *Recorder) error { return r.StartPhase(6) }, func(r *Recorder) error { return r.AddLoopArtifact(6, 0, "x", "x") }, CodeTransition},
		{"select on a step", func(r *Recorder) error { return r.StartPhase(1) }, func(r *Recorder) error { return r.SelectBranch(1, "paper-to-test-data") }, CodeTransition},
		{"select a non-member", func(r *Recorder) error { return r.StartPhase(7) }, func(r *Recorder) error { return r.SelectBranch(7, "nope") }, CodeTransition},
		{"branch done unselected", func(r *Recorder) error { return r.StartPhase(7) }, func(r *Recorder) error { return r.DonePhase(7) }, CodeTransition},
		{"skip a running phase", func(r *Recorder) error { return r.StartPhase(1) }, func(r *Recorder) error { return r.SkipPhase(1) }, CodeTransition},
		{"complete with pending phases", nil, func(r *Recorder) error { return r.Complete() }, CodeIncomplete},
		{"fail a done phase", func(r *Recorder) error {
			if err := r.StartPhase(1); err != nil {
				return err
			}
			return r.DonePhase(1)
		}, func(r *Recorder) error { return r.FailPhase(1, nil) }, CodeTransition},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec, _ := paperRecorder(t)
			if tc.prep != nil {
				must(t, tc.prep(rec))
			}
			before, err := os.ReadFile(rec.Path())
			must(t, err)
			faulttest.Want(t, tc.op(rec), tc.code)
			after, err := os.ReadFile(rec.Path())
			must(t, err)
			if !bytes.Equal(before, after) {
				t.Fatal("a refused update rewrote the record")
			}
		})
	}
}

func TestCreateRejectsBadAssembly(t *testing.T) {
	cases := map[string]func(*Assembly){
		"no pipeline":         func(a *Assembly) { a.Pipeline = "" },
		"no harness":          func(a *Assembly) { a.HarnessName = "" },
		"no phases":           func(a *Assembly) { a.Phases = nil },
		"duplicate n":         func(a *Assembly) { a.Phases[1].N = 1 },
		"zero n":              func(a *Assembly) { a.Phases[0].N = 0 },
		"step without skill":  func(a *Assembly) { a.Phases[0].Skill = "" },
		"branch no chain":     func(a *Assembly) { a.Phases[2].Chain = nil },
		"branch no pattern":   func(a *Assembly) { a.Phases[2].Pattern = "" },
		"branch repeated":     func(a *Assembly) { a.Phases[2].Chain = []string{"a", "a"} },
		"output with a slash": func(a *Assembly) { a.Phases[0].Outputs[0].File = "sub/x.md" },
		"negative revision":   func(a *Assembly) { a.SourceRevision = -1 },
	}
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			a := paperAssembly()
			mutate(&a)
			dir := t.TempDir()
			_, err := Create(dir, a, Meta{}, stepClock())
			faulttest.Want(t, err, CodeAssembly)
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Fatalf("a rejected assembly left files: %v", entries)
			}
		})
	}
}

func TestShasAreQuoted(t *testing.T) {
	dir := t.TempDir()
	digits40 := strings.Repeat("1234567890", 4)
	rec, err := Create(dir, paperAssembly(), Meta{FoundryHead: digits40}, stepClock())
	must(t, err)
	// Force an all-digit assembly sha too: the writer must quote it.
	rec.rec.AssemblySHA256 = strings.Repeat("0123456789", 6) + "0123"
	must(t, rec.StartPhase(1))
	data, err := os.ReadFile(rec.Path())
	must(t, err)
	for _, line := range []string{
		`assembly_sha256: "` + rec.rec.AssemblySHA256 + `"`,
		`foundry_head: "` + digits40 + `"`,
	} {
		if !bytes.Contains(data, []byte(line+"\n")) {
			t.Fatalf("missing %s in\n%s", line, data)
		}
	}
	v, err := Read(dir, Options{})
	must(t, err)
	if v.Record.AssemblySHA256 != rec.rec.AssemblySHA256 || v.Record.FoundryHead != digits40 || len(v.Warnings) != 1 {
		// The one expected warning is the assembly sha disagreeing with
		// _assembly.json, since the test forged it.
		t.Fatalf("read back %q %q warnings %v", v.Record.AssemblySHA256, v.Record.FoundryHead, v.Warnings)
	}
}

func TestStringsThatLookLikeOtherTypesRoundTrip(t *testing.T) {
	dir := t.TempDir()
	a := paperAssembly()
	a.Pipeline = "123"
	a.HarnessName = "true"
	a.Phases[0].Skill = "null"
	a.Phases[0].Outputs = []Output{{ID: "0x1F", File: "1e5"}}
	rec, err := Create(dir, a, Meta{RunSlug: "2026-09-16"}, stepClock())
	must(t, err)
	must(t, rec.StartPhase(1))
	must(t, rec.AddArtifact(1, "0x1F", "1e5"))
	got := readBack(t, dir)
	if got.Pipeline != "123" || got.HarnessName != "true" || got.RunSlug != "2026-09-16" || got.Phases[0].Skill != "null" ||
		got.Phases[0].Artifacts[0].ID != "0x1F" || got.Phases[0].Artifacts[0].File != "1e5" {
		t.Fatalf("round trip changed strings: %+v", got)
	}
}

// TestFailedWriteKeepsState removes the run directory under the recorder:
// the rewrite fails, and neither memory nor disk moves.
func TestFailedWriteKeepsState(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	must(t, os.Mkdir(dir, 0o755))
	rec, err := Create(dir, paperAssembly(), Meta{}, stepClock())
	must(t, err)
	before := rec.Snapshot()
	must(t, os.RemoveAll(dir))
	faulttest.Want(t, rec.StartPhase(1), CodeWrite)
	if !reflect.DeepEqual(before, rec.Snapshot()) {
		t.Fatal("a failed write changed the in-memory record")
	}
}

// TestAtomicRewrites reads the record continuously while another goroutine
// rewrites it: every read must parse, and no temporary file may remain.
func TestAtomicRewrites(t *testing.T) {
	dir := t.TempDir()
	rec, err := Create(dir, paperAssembly(), Meta{}, nil)
	must(t, err)
	must(t, rec.StartPhase(6))
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	var reads int
	var bad error
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			data, err := os.ReadFile(rec.Path())
			if err == nil {
				_, err = decodeRecord(data, rec.Path())
			}
			if err != nil {
				bad = err
				return
			}
			reads++
			time.Sleep(50 * time.Microsecond) // leave the writer some CPU on a small machine
		}
	}()
	for i := 0; i < 50; i++ {
		it, err := rec.NextIteration(6)
		must(t, err)
		must(t, rec.AddLoopArtifact(6, it, "galaxy-workflow-draft", "galaxy-workflow-draft.gxwf.yml"))
	}
	close(stop)
	wg.Wait()
	if bad != nil {
		t.Fatalf("a concurrent read saw a torn record: %v", bad)
	}
	if reads == 0 {
		t.Fatal("the reader never ran")
	}
	if got := readBack(t, dir).Phases[1]; got.Iterations != 50 || len(got.Artifacts) != 50 {
		t.Fatalf("iterations %d rows %d", got.Iterations, len(got.Artifacts))
	}
	noTemps(t, dir)
}
