package runrecord

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/fault/faulttest"
	"github.com/algal-assay/assay/internal/atomicfile"
)

// seedRecord is the seed's example record with real-length shas and the
// elided loop rows dropped. Phase 6's row is keyed `phase`, as a row copied
// from _assembly.json would be, and artifacts rows use flow style.
const seedRecord = `run_record_version: 1
pipeline: paper-to-galaxy
run_slug: auris-scf1
source_revision: 2
harness_name: pipeline-paper-to-galaxy
assembly_sha256: "4f3c000000000000000000000000000000000000000000000000000000000000"
foundry_head: "63a3f9cf00000000000000000000000000000000"
started_at: 2026-09-16T18:02:00Z
finished_at: null
status: running
phases:
  - n: 1
    kind: mold
    skill: summarize-paper
    status: done
    artifacts:
      - { id: freeform-summary, file: freeform-summary.md, at: 2026-09-16T18:09:00Z }
  - phase: 6
    kind: mold
    skill: advance-galaxy-draft-step
    status: done
    iterations: 26
    artifacts:
      - { id: galaxy-workflow-draft, file: galaxy-workflow-draft.gxwf.yml, at: 2026-09-16T18:20:00Z, iteration: 1 }
      - { id: galaxy-workflow-draft, file: galaxy-workflow-draft.gxwf.yml, at: 2026-09-16T21:36:00Z, iteration: 26 }
      - { id: galaxy-workflow, file: galaxy-workflow.gxwf.yml, at: 2026-09-16T21:40:00Z }
  - n: 7
    kind: branch
    pattern: test-data-resolution
    selected: paper-to-test-data
    status: done
    artifacts:
      - { id: test-data-refs, file: test-data-refs.json, at: 2026-09-16T21:56:00Z }
`

func TestReadSeedRecord(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, RecordFile, seedRecord)
	writeFile(t, dir, "galaxy-workflow-draft.gxwf.yml", "x")
	v, err := Read(dir, Options{})
	must(t, err)
	if v.State != StateRecord || len(v.Warnings) != 0 {
		t.Fatalf("state %s problem %v warnings %v", v.State, v.Problem, v.Warnings)
	}
	r := v.Record
	if r.Pipeline != "paper-to-galaxy" || r.Status != RunRunning || r.FinishedAt != nil || r.SourceRevision != 2 ||
		r.AssemblySHA256 != "4f3c"+strings.Repeat("0", 60) || !strings.HasPrefix(r.FoundryHead, "63a3f9cf") {
		t.Fatalf("header: %+v", r)
	}
	if r.Phases[1].N != 6 || r.Phases[1].Iterations != 26 || r.Phases[2].Selected != "paper-to-test-data" || r.Phases[2].Name() != "test-data-resolution" {
		t.Fatalf("phases: %+v", r.Phases)
	}
	want := []FileWriter{
		{File: "freeform-summary.md", Phase: 1, ID: "freeform-summary", At: at(9)},
		{File: "galaxy-workflow-draft.gxwf.yml", Phase: 6, ID: "galaxy-workflow-draft", Iteration: 26, At: at(3*60 + 36), Present: true},
		{File: "galaxy-workflow.gxwf.yml", Phase: 6, ID: "galaxy-workflow", At: at(3*60 + 40)},
		{File: "test-data-refs.json", Phase: 7, ID: "test-data-refs", At: at(3*60 + 56)},
	}
	for i := range v.Writers {
		v.Writers[i].At = v.Writers[i].At.UTC()
	}
	if !reflect.DeepEqual(v.Writers, want) {
		t.Fatalf("writers\n got %+v\nwant %+v", v.Writers, want)
	}
}

// TestLastWriterAcrossPhases: when two phases write one basename, the
// later row (record order) is the last writer.
func TestLastWriterAcrossPhases(t *testing.T) {
	dir := t.TempDir()
	a := paperAssembly()
	rec, err := Create(dir, a, Meta{}, stepClock())
	must(t, err)
	must(t, rec.StartPhase(1))
	must(t, rec.AddArtifact(1, "open-requirements", "open-requirements.ledger.yml"))
	must(t, rec.DonePhase(1))
	must(t, rec.StartPhase(6))
	it, _ := rec.NextIteration(6)
	must(t, rec.AddLoopArtifact(6, it, "open-requirements", "open-requirements.ledger.yml"))
	it, _ = rec.NextIteration(6)
	must(t, rec.AddLoopArtifact(6, it, "open-requirements", "open-requirements.ledger.yml"))
	v, err := Read(dir, Options{})
	must(t, err)
	if len(v.Writers) != 1 || v.Writers[0].Phase != 6 || v.Writers[0].Iteration != 2 {
		t.Fatalf("writers %+v", v.Writers)
	}
}

func TestUnquotedShaIgnored(t *testing.T) {
	digits := strings.Repeat("1234567890", 6) + "1234"
	cases := []struct {
		name, assembly, head string
		wantAssembly         string
		wantWarnings         int
	}{
		{"quoted digits", `"` + digits + `"`, "null", digits, 0},
		{"bare digits", digits, "null", "", 1},
		{"bare digits with an e", digits[:60] + "e001", "null", "", 1},
		{"bare digits with a huge exponent stay a string", "1e" + digits[:62], "null", "1e" + digits[:62], 0},
		{"bare head digits", `"` + digits + `"`, strings.Repeat("7", 40), digits, 1},
		{"bare hex with letters is a string", "4f3c" + strings.Repeat("a", 60), "null", "4f3c" + strings.Repeat("a", 60), 0},
		{"absent", "null", "null", "", 0},
		{"not hex", `"sha-please"`, "null", "", 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			body := strings.Replace(seedRecord, `"4f3c000000000000000000000000000000000000000000000000000000000000"`, tc.assembly, 1)
			body = strings.Replace(body, `"63a3f9cf00000000000000000000000000000000"`, tc.head, 1)
			writeFile(t, dir, RecordFile, body)
			v, err := Read(dir, Options{Workloads: []Workload{{Pipeline: "paper-to-galaxy", AssemblySHA256: digits}}})
			must(t, err)
			if v.State != StateRecord {
				t.Fatalf("state %s: %v", v.State, v.Problem)
			}
			if v.Record.AssemblySHA256 != tc.wantAssembly || len(v.Warnings) != tc.wantWarnings {
				t.Fatalf("sha %q warnings %v", v.Record.AssemblySHA256, v.Warnings)
			}
			if v.Record.FoundryHead != "" && tc.head != "null" && !strings.HasPrefix(tc.head, `"`) {
				t.Fatalf("a bare foundry_head was trusted: %q", v.Record.FoundryHead)
			}
			wantCheck := AssemblyDrift
			switch tc.wantAssembly {
			case "":
				wantCheck = AssemblyUnknown
			case digits:
				wantCheck = AssemblyMatch
			}
			if v.Assembly.Check != wantCheck {
				t.Fatalf("assembly check %s, want %s", v.Assembly.Check, wantCheck)
			}
		})
	}
}

func TestAssemblyAndPipelineVerdicts(t *testing.T) {
	dir := t.TempDir()
	a := paperAssembly()
	_, err := Create(dir, a, Meta{}, stepClock())
	must(t, err)
	today, err := EncodeAssembly(a)
	must(t, err)
	changed := paperAssembly()
	changed.Phases[0].Skill = "summarize-paper-v2"
	drifted, err := EncodeAssembly(changed)
	must(t, err)
	other := Workload{Pipeline: "interview-to-galaxy", Assembly: today}

	cases := []struct {
		name               string
		opts               Options
		pipeline, assembly string
		warnings           int
	}{
		{"no workloads", Options{}, PipelineUnchecked, AssemblyUnchecked, 0},
		{"match", Options{Workloads: []Workload{other, {Pipeline: "paper-to-galaxy", Assembly: today}}}, PipelineKnown, AssemblyMatch, 0},
		{"match by sha", Options{Workloads: []Workload{{Pipeline: "paper-to-galaxy", AssemblySHA256: strings.ToUpper(AssemblySHA256(today))}}}, PipelineKnown, AssemblyMatch, 0},
		{"drift", Options{Workloads: []Workload{{Pipeline: "paper-to-galaxy", Assembly: drifted}}}, PipelineKnown, AssemblyDrift, 0},
		// Same bytes under another name: never read against it unasked.
		{"no workload for the pipeline", Options{Workloads: []Workload{other}}, PipelineNoWorkload, AssemblyUnchecked, 0},
		{"explicit other pipeline", Options{Workloads: []Workload{other}, Pipeline: "interview-to-galaxy"}, PipelineExplicit, AssemblyMatch, 1},
		{"explicit unknown pipeline", Options{Workloads: []Workload{other}, Pipeline: "nope"}, PipelineNoWorkload, AssemblyUnchecked, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v, err := Read(dir, tc.opts)
			must(t, err)
			if v.Pipeline.Check != tc.pipeline || v.Assembly.Check != tc.assembly || len(v.Warnings) != tc.warnings {
				t.Fatalf("pipeline %+v assembly %+v warnings %v", v.Pipeline, v.Assembly, v.Warnings)
			}
		})
	}
}

func TestAssemblyUnknownWithoutSha(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, RecordFile, strings.Replace(seedRecord, "assembly_sha256: \"4f3c000000000000000000000000000000000000000000000000000000000000\"\n", "", 1))
	v, err := Read(dir, Options{Workloads: []Workload{{Pipeline: "paper-to-galaxy", AssemblySHA256: strings.Repeat("a", 64)}}})
	must(t, err)
	if v.Assembly.Check != AssemblyUnknown || v.Pipeline.Check != PipelineKnown {
		t.Fatalf("%+v %+v", v.Assembly, v.Pipeline)
	}
}

func TestBrokenRecords(t *testing.T) {
	cases := []struct {
		name  string
		body  *string
		state State
		code  string
	}{
		{"missing", nil, StateMissing, CodeMissing},
		{"empty", ptr(""), StateUnparseable, CodeUnparseable},
		{"truncated mid-write", ptr(seedRecord[:len(seedRecord)/2] + "\n  - { id: x, file"), StateUnparseable, CodeUnparseable},
		{"tab soup", ptr("pipeline: [a\n\tb: }"), StateUnparseable, CodeUnparseable},
		{"not a mapping", ptr("- 1\n- 2\n"), StateInvalid, CodeInvalid},
		{"version 2", ptr(strings.Replace(seedRecord, "run_record_version: 1", "run_record_version: 2", 1)), StateInvalid, CodeInvalid},
		{"bad run status", ptr(strings.Replace(seedRecord, "status: running", "status: paused", 1)), StateInvalid, CodeInvalid},
		{"bad phase status", ptr(strings.Replace(seedRecord, "status: done", "status: half", 1)), StateInvalid, CodeInvalid},
		{"duplicate key", ptr(strings.Replace(seedRecord, "run_slug: auris-scf1", "run_slug: a\nrun_slug: b", 1)), StateInvalid, CodeInvalid},
		{"duplicate phase", ptr(strings.Replace(seedRecord, "phase: 6", "phase: 1", 1)), StateInvalid, CodeInvalid},
		{"n and phase disagree", ptr(strings.Replace(seedRecord, "  - n: 7\n", "  - n: 7\n    phase: 8\n", 1)), StateInvalid, CodeInvalid},
		{"string iteration", ptr(strings.Replace(seedRecord, "iterations: 26", "iterations: many", 1)), StateInvalid, CodeInvalid},
		{"no phases", ptr(seedRecord[:strings.Index(seedRecord, "phases:")]), StateInvalid, CodeInvalid},
		// The writer emits one document and no aliases: a second document
		// would be silently ignored, and aliases let a small file stand for
		// an enormous record.
		{"second document", ptr(seedRecord + "---\nstatus: complete\n"), StateInvalid, CodeInvalid},
		{"alias", ptr(strings.Replace(strings.Replace(seedRecord, "    status: done\n    artifacts:\n      - { id: freeform", "    status: done\n    artifacts: &arts\n      - { id: freeform", 1),
			"    status: done\n    artifacts:\n      - { id: test-data-refs, file: test-data-refs.json, at: 2026-09-16T21:56:00Z }\n", "    status: done\n    artifacts: *arts\n", 1)), StateInvalid, CodeInvalid},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.body != nil {
				writeFile(t, dir, RecordFile, *tc.body)
			}
			v, err := Read(dir, Options{})
			must(t, err)
			if v.State != tc.state || v.Problem == nil || v.Problem.Code != tc.code || v.Record != nil {
				t.Fatalf("state %s problem %v", v.State, v.Problem)
			}
			if v.Reconstructed == nil {
				t.Fatal("no reconstructed view")
			}
		})
	}
}

func ptr(s string) *string { return &s }

func TestReadRunDirErrors(t *testing.T) {
	_, err := Read(filepath.Join(t.TempDir(), "nope"), Options{})
	faulttest.Want(t, err, CodeRunDir)
	f := filepath.Join(t.TempDir(), "file")
	must(t, os.WriteFile(f, nil, 0o644))
	_, err = Read(f, Options{})
	faulttest.Want(t, err, CodeRunDir)
}

func TestReconstructedView(t *testing.T) {
	paper := paperAssembly()
	paperBytes, err := EncodeAssembly(paper)
	must(t, err)
	// interview-to-galaxy declares the same files as paper-to-galaxy: no
	// file on disk tells them apart.
	interview := paperAssembly()
	interview.Pipeline, interview.HarnessName = "interview-to-galaxy", "pipeline-interview-to-galaxy"
	interview.Phases[0].Skill = "interview-to-freeform-summary"
	interviewBytes, err := EncodeAssembly(interview)
	must(t, err)
	unrelated := Assembly{Pipeline: "bench-smoke", HarnessName: "bench", Phases: []AssemblyPhase{
		{N: 1, Kind: KindStep, Skill: "run", Outputs: []Output{{ID: "report", File: "report.json"}}}}}
	unrelatedBytes, err := EncodeAssembly(unrelated)
	must(t, err)
	paperW := Workload{Pipeline: "paper-to-galaxy", Assembly: paperBytes}
	interviewW := Workload{Pipeline: "interview-to-galaxy", Assembly: interviewBytes}
	unrelatedW := Workload{Pipeline: "bench-smoke", Assembly: unrelatedBytes}

	cases := []struct {
		name         string
		withAssembly bool
		workloads    []Workload
		pipeline     string
		source       string
		candidates   []string
	}{
		{"indistinguishable pipelines", false, []Workload{paperW, interviewW, unrelatedW}, "", "", []string{"paper-to-galaxy", "interview-to-galaxy"}},
		{"one consistent workload", false, []Workload{paperW, unrelatedW}, "paper-to-galaxy", "file names", []string{"paper-to-galaxy"}},
		{"no workloads", false, nil, "", "", nil},
		{"run directory assembly names it", true, []Workload{paperW, interviewW}, "paper-to-galaxy", AssemblyFile, []string{"paper-to-galaxy", "interview-to-galaxy"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range []string{"freeform-summary.md", "galaxy-workflow-draft.gxwf.yml"} {
				writeFile(t, dir, f, "x")
			}
			writeFile(t, dir, atomicfile.TempPrefix+RecordFile+"-123", "half")
			if tc.withAssembly {
				writeFile(t, dir, AssemblyFile, string(paperBytes))
			}
			v, err := Read(dir, Options{Workloads: tc.workloads})
			must(t, err)
			r := v.Reconstructed
			if v.State != StateMissing || r == nil {
				t.Fatalf("state %s reconstructed %v", v.State, r)
			}
			if r.Pipeline != tc.pipeline || r.PipelineSource != tc.source || !reflect.DeepEqual(r.Candidates, tc.candidates) {
				t.Fatalf("pipeline %q (%q) candidates %v", r.Pipeline, r.PipelineSource, r.Candidates)
			}
			var files []string
			for _, f := range r.Files {
				files = append(files, f.File)
			}
			if !reflect.DeepEqual(files, []string{"freeform-summary.md", "galaxy-workflow-draft.gxwf.yml"}) {
				t.Fatalf("files %v (harness and temp files must be skipped)", files)
			}
			wantPhases := [][]int{nil, nil}
			if tc.pipeline != "" {
				wantPhases = [][]int{{1}, {6}}
			}
			for i, f := range r.Files {
				if !reflect.DeepEqual(f.Phases, wantPhases[i]) {
					t.Fatalf("%s phases %v want %v", f.File, f.Phases, wantPhases[i])
				}
			}
			if lost := strings.Contains(v.Problem.Message, "lost or never written"); lost != tc.withAssembly {
				t.Fatalf("diagnosis %q (assembly present: %v)", v.Problem.Message, tc.withAssembly)
			}
			val := v.Value()["reconstructed"].(map[string]any)
			if val["label"] != "reconstructed" {
				t.Fatal("reconstructed view is not labelled")
			}
		})
	}
}

func TestConsistencyWarnings(t *testing.T) {
	cases := []struct {
		name string
		edit func(string) string
		want string
	}{
		{"unknown field", func(s string) string { return strings.Replace(s, "phases:", "note: hi\nphases:", 1) }, `unknown field "note"`},
		{"complete with a pending phase", func(s string) string {
			s = strings.Replace(s, "status: running\nphases", "status: complete\nphases", 1)
			return strings.Replace(s, "selected: paper-to-test-data\n    status: done", "selected: paper-to-test-data\n    status: pending", 1)
		}, "phase 7 is pending"},
		{"failed without a failed phase", func(s string) string {
			return strings.Replace(s, "status: running\nphases", "status: failed\nphases", 1)
		}, "no phase is failed"},
		{"running but finished", func(s string) string {
			return strings.Replace(s, "finished_at: null", "finished_at: 2026-09-16T22:00:00Z", 1)
		}, "finished_at is set"},
		{"branch done unselected", func(s string) string { return strings.Replace(s, "    selected: paper-to-test-data\n", "", 1) }, "no selected member"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			body := tc.edit(seedRecord)
			if body == seedRecord {
				t.Fatal("edit did not apply")
			}
			writeFile(t, dir, RecordFile, body)
			v, err := Read(dir, Options{})
			must(t, err)
			if v.State != StateRecord || !strings.Contains(strings.Join(v.Warnings, "\n"), tc.want) {
				t.Fatalf("state %s warnings %v", v.State, v.Warnings)
			}
		})
	}
}

// A record whose aliases stand for more bytes than any record holds is
// refused by size, at the alias that tips it, before anything is decoded.
func TestRecordAliasBytesAreBounded(t *testing.T) {
	dir := t.TempDir()
	body := strings.Replace(seedRecord, "pipeline: ", "note: &big "+strings.Repeat("x", 4<<20)+"\npipeline: ", 1)
	for i := range 9 {
		body += fmt.Sprintf("extra%d: *big\n", i)
	}
	writeFile(t, dir, RecordFile, body)
	v, err := Read(dir, Options{})
	must(t, err)
	if v.Record != nil || v.Problem == nil || v.Problem.Code != CodeInvalid || !strings.Contains(v.Problem.Error(), "aliases expand it past 33554432 bytes") {
		t.Fatalf("state %s problem %v", v.State, v.Problem)
	}
	lines := strings.Split(body, "\n")
	want := fmt.Sprintf("line %d, column 9:", slices.Index(lines, "extra6: *big")+1)
	if !strings.Contains(v.Problem.Error(), want) {
		t.Fatalf("problem %v does not name %s", v.Problem, want)
	}
}
