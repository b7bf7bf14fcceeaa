package runrecord

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/algal-assay/assay/internal/atomicfile"
)

// stepClock returns a clock that advances one minute per call from a fixed
// start, so every timestamp in a test is predictable.
func stepClock() Clock {
	t := time.Date(2026, 9, 16, 18, 0, 0, 0, time.UTC)
	return func() time.Time {
		t = t.Add(time.Minute)
		return t
	}
}

func at(minute int) time.Time {
	return time.Date(2026, 9, 16, 18, 0, 0, 0, time.UTC).Add(time.Duration(minute) * time.Minute)
}

// paperAssembly mirrors the seed's example: a step, a loop and a branch.
func paperAssembly() Assembly {
	return Assembly{
		Pipeline: "paper-to-galaxy", HarnessName: "pipeline-paper-to-galaxy", SourceRevision: 2,
		Phases: []AssemblyPhase{
			{N: 1, Kind: KindStep, Skill: "summarize-paper", Outputs: []Output{{ID: "freeform-summary", File: "freeform-summary.md"}}},
			{N: 6, Kind: KindLoop, Skill: "advance-galaxy-draft-step", Outputs: []Output{
				{ID: "galaxy-workflow-draft", File: "galaxy-workflow-draft.gxwf.yml"},
				{ID: "galaxy-workflow", File: "galaxy-workflow.gxwf.yml"}}},
			{N: 7, Kind: KindBranch, Pattern: "test-data-resolution", Chain: []string{"paper-to-test-data", "ask-for-test-data"},
				Outputs: []Output{{ID: "test-data-refs", File: "test-data-refs.json"}}},
		},
	}
}

// paperRecorder creates a record of paperAssembly on the step clock in a
// fresh directory, and returns its recorder and the directory.
func paperRecorder(t *testing.T) (*Recorder, string) {
	t.Helper()
	dir := t.TempDir()
	rec, err := Create(dir, paperAssembly(), Meta{}, stepClock())
	must(t, err)
	return rec, dir
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// readBack parses the record on disk with the reader (no workloads) and
// fails unless it is a readable record.
func readBack(t *testing.T, dir string) *Record {
	t.Helper()
	v, err := Read(dir, Options{})
	must(t, err)
	if v.State != StateRecord {
		t.Fatalf("state %s: %v", v.State, v.Problem)
	}
	return v.Record
}

// noTemps fails if a writer temporary file is left in dir.
func noTemps(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	must(t, err)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), atomicfile.TempPrefix) {
			t.Fatalf("temporary file left behind: %s", filepath.Join(dir, e.Name()))
		}
	}
}

func writeFile(t *testing.T, dir, name, body string) {
	t.Helper()
	must(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644))
}
