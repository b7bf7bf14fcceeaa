package job

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/harness/workload"
)

// Discover fails, naming where it looked, when there is nothing to run.
func TestDiscoverNeedsWorkloads(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, err := Discover([]string{dir})
	e, ok := fault.As(err)
	if !ok || e.Code != workload.CodeWorkload || e.File != dir || !strings.Contains(e.Message, "assay init") {
		t.Fatalf("empty directory: %v", err)
	}
	path := filepath.Join(dir, "triage.bench.yaml")
	if err := os.WriteFile(path, []byte("name: triage\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	files, err := Discover([]string{dir})
	if err != nil || len(files) != 1 || files[0] != path {
		t.Fatalf("one workload: %v, %v", files, err)
	}
}

// An empty job with JSON and JUnit: no failures, the JSON on w and the
// JUnit report written; a stop counts the workloads that did not run.
func TestReportWritesJSONAndJUnit(t *testing.T) {
	t.Parallel()
	junit := filepath.Join(t.TempDir(), "junit.xml")
	var out bytes.Buffer
	failed, err := Report{JSON: true, JUnit: junit}.Write(&out, nil, 0, nil)
	if err != nil || failed != 0 {
		t.Fatalf("Write: %d, %v", failed, err)
	}
	if !strings.HasPrefix(out.String(), "{") || !strings.HasSuffix(out.String(), "}\n") {
		t.Errorf("JSON line %q", out.String())
	}
	if b, err := os.ReadFile(junit); err != nil || !bytes.Contains(b, []byte("<testsuites")) {
		t.Errorf("JUnit report %q, %v", b, err)
	}
	out.Reset()
	failed, err = Report{}.Write(&out, nil, 3, os.ErrClosed)
	if err != nil || failed != 3 {
		t.Errorf("stopped before 3 workloads: %d failed, %v", failed, err)
	}
	if !strings.Contains(out.String(), "STOP") {
		t.Errorf("summary of a stopped job %q", out.String())
	}
}
