package rundoc

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/harness/rundir"
)

func write(t *testing.T, dir, name, body string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A run directory's report is report.json, else budget.json; a directory
// with neither fails naming both.
func TestReportFindsTheRunDirectorysReport(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, err := Report(dir); fault.CodeOf(err) != fault.IOFailed || !strings.Contains(err.Error(), "neither is there") {
		t.Fatalf("empty run directory: %v", err)
	}
	write(t, dir, rundir.BudgetFile, `{"budget":true}`)
	if v, err := Report(dir); err != nil || !reflect.DeepEqual(v, map[string]any{"budget": true}) {
		t.Fatalf("budget only: %v, %v", v, err)
	}
	write(t, dir, rundir.ReportFile, `{"report":true}`)
	if v, err := Report(dir); err != nil || !reflect.DeepEqual(v, map[string]any{"report": true}) {
		t.Fatalf("report and budget: %v, %v", v, err)
	}
	if v, err := Report(filepath.Join(dir, rundir.BudgetFile)); err != nil || !reflect.DeepEqual(v, map[string]any{"budget": true}) {
		t.Fatalf("a file: %v, %v", v, err)
	}
}

func TestGateVerdictCountsTheRulesThatHold(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ gate, want string }{
		{"", "no gate verdict: gate.json was not written"},
		{`{"rules":[]}`, "no gate verdict: gate.json does not parse"},
		{`{"passed":true,"rules":[]}`, "gate passed, no rules"},
		{`{"passed":true,"rules":[{"passed":true},{"passed":true}]}`, "gate passed, 2 of 2 rules hold"},
		{`{"passed":false,"rules":[{"passed":true},{"passed":false}]}`, "gate FAILED, 1 of 2 rules hold"},
	} {
		dir := t.TempDir()
		if c.gate != "" {
			write(t, dir, rundir.GateFile, c.gate)
		}
		if got := GateVerdict(dir); got != c.want {
			t.Errorf("gate %s: %q, want %q", c.gate, got, c.want)
		}
	}
}

// A workload that does not load is a warning and left out.
func TestAssembliesSkipWorkloadsThatDoNotLoad(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, dir, "broken.bench.yaml", "name: [")
	var warn bytes.Buffer
	got, err := Assemblies([]string{dir}, &warn)
	if err != nil || len(got) != 0 {
		t.Fatalf("assemblies %v, %v", got, err)
	}
	if !strings.HasPrefix(warn.String(), "assay: warning: ") {
		t.Errorf("warning %q", warn.String())
	}
}

// An --assembly that does not parse is refused; one that does is named
// by its pipeline unless another is asked for.
func TestAssemblyWorkloadIsNamed(t *testing.T) {
	t.Parallel()
	if _, err := AssemblyWorkload([]byte("{"), ""); err == nil {
		t.Error("a broken assembly accepted")
	}
	var warn bytes.Buffer
	today, err := Assemblies([]string{"../../suites/ticket-triage.bench.yaml"}, &warn)
	if err != nil || len(today) != 1 {
		t.Fatalf("the repository's workload: %v, %v (%s)", today, err, warn.String())
	}
	for asked, want := range map[string]string{"": today[0].Pipeline, "other": "other"} {
		w, err := AssemblyWorkload(today[0].Assembly, asked)
		if err != nil || w.Pipeline != want || !bytes.Equal(w.Assembly, today[0].Assembly) {
			t.Errorf("pipeline %q: %+v, %v", asked, w.Pipeline, err)
		}
	}
}
