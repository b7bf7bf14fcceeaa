package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/runrecord"
)

func recordAssembly(pipeline string) runrecord.Assembly {
	return runrecord.Assembly{
		Pipeline: pipeline, HarnessName: "harness-" + pipeline, SourceRevision: 2,
		Phases: []runrecord.AssemblyPhase{
			{N: 1, Kind: runrecord.KindStep, Skill: "summarize", Outputs: []runrecord.Output{{ID: "summary", File: "summary.md"}}},
			{N: 2, Kind: runrecord.KindLoop, Skill: "advance", Outputs: []runrecord.Output{{ID: "draft", File: "draft.yml"}}},
			{N: 3, Kind: runrecord.KindBranch, Pattern: "test-data", Chain: []string{"from-paper", "ask"}},
		},
	}
}

// completedRun writes a finished three-phase run and returns its directory
// and the _assembly.json path inside it.
func completedRun(t *testing.T) (string, string) {
	t.Helper()
	dir := t.TempDir()
	now := time.Date(2026, 9, 16, 18, 0, 0, 0, time.UTC)
	clock := func() time.Time { now = now.Add(time.Minute); return now }
	rec, err := runrecord.Create(dir, recordAssembly("paper-to-galaxy"), runrecord.Meta{RunSlug: "auris"}, clock)
	if err != nil {
		t.Fatal(err)
	}
	steps := []func() error{
		func() error { return rec.StartPhase(1) },
		func() error { return rec.AddArtifact(1, "summary", "summary.md") },
		func() error { return rec.DonePhase(1) },
		func() error { return rec.StartPhase(2) },
		func() error { _, err := rec.NextIteration(2); return err },
		func() error { return rec.AddLoopArtifact(2, 1, "draft", "draft.yml") },
		func() error { _, err := rec.NextIteration(2); return err },
		func() error { return rec.AddLoopArtifact(2, 2, "draft", "draft.yml") },
		func() error { return rec.DonePhase(2) },
		func() error { return rec.StartPhase(3) },
		func() error { return rec.SelectBranch(3, "ask") },
		func() error { return rec.DonePhase(3) },
		func() error { return rec.Complete() },
	}
	for i, s := range steps {
		if err := s(); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	putFile(t, dir, "draft.yml", "x")
	return dir, filepath.Join(dir, runrecord.AssemblyFile)
}

func writeAssembly(t *testing.T, a runrecord.Assembly) string {
	t.Helper()
	b, err := runrecord.EncodeAssembly(a)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "assembly.json")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRecordShowText(t *testing.T) {
	t.Parallel()
	dir, sameAssembly := completedRun(t)
	changed := recordAssembly("paper-to-galaxy")
	changed.Phases[0].Skill = "summarize-v2"
	drifted := writeAssembly(t, changed)
	other := writeAssembly(t, recordAssembly("interview-to-galaxy"))
	broken := filepath.Join(t.TempDir(), "broken.json")
	if err := os.WriteFile(broken, []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"plain", []string{"record", "show", dir}, exitOK, []string{
			"pipeline: paper-to-galaxy\n", "status: complete (no gate verdict: gate.json was not written)\n", "assembly: unchecked:",
			"  1  step    summarize  done    0           -",
			"  2  loop    advance    done    2           -",
			"  3  branch  test-data  done    0           ask",
			"  draft.yml   phase 2 iteration 2  draft",
			"(not in run directory)",
		}},
		{"match", []string{"record", "show", dir, "--assembly", sameAssembly}, exitOK, []string{"assembly: match:", "pipeline check: known:"}},
		{"drift", []string{"record", "show", "--assembly", drifted, dir}, exitOK, []string{"assembly: drift:"}},
		{"other pipeline not read against", []string{"record", "show", dir, "--assembly", other}, exitOK, []string{"pipeline check: no-workload:", "assembly: unchecked:"}},
		{"other pipeline when told", []string{"record", "show", dir, "--assembly", other, "--pipeline", "interview-to-galaxy"}, exitOK, []string{"pipeline check: explicit:", "assembly: drift:", "warning: the record names pipeline paper-to-galaxy"}},
		{"no args", []string{"record", "show"}, exitError, nil},
		{"two args", []string{"record", "show", dir, dir}, exitError, nil},
		{"bad flag", []string{"record", "show", "--nope", dir}, exitError, nil},
		{"bad assembly file", []string{"record", "show", dir, "--assembly", broken}, exitError, nil},
		{"missing run dir", []string{"record", "show", filepath.Join(dir, "nope")}, exitError, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errb := runCLI(t, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, out, errb)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("stdout lacks %q:\n%s", w, out)
				}
			}
		})
	}
}

func TestRecordShowJSON(t *testing.T) {
	t.Parallel()
	dir, assembly := completedRun(t)
	code, out, errb := runCLI(t, "record", "show", "--json", "--assembly", assembly, dir)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errb)
	}
	v, err := canon.Parse([]byte(strings.TrimSuffix(out, "\n")), 0)
	if err != nil {
		t.Fatalf("not strict JSON: %v\n%s", err, out)
	}
	again, err := canon.Encode(v)
	if err != nil || string(again)+"\n" != out {
		t.Fatalf("output is not canonical JSON:\n%s", out)
	}
	m := v.(map[string]any)
	rec := m["record"].(map[string]any)
	if m["state"] != "record" || rec["status"] != "complete" || m["assembly_check"].(map[string]any)["check"] != "match" {
		t.Fatalf("view: %s", out)
	}
	phases := rec["phases"].([]any)
	loop := phases[1].(map[string]any)
	branch := phases[2].(map[string]any)
	if loop["iterations"] != 2.0 || branch["selected"] != "ask" || branch["name"] != "test-data" {
		t.Fatalf("phases: %v", phases)
	}
	writers := m["last_writers"].([]any)
	draft := writers[0].(map[string]any)
	if len(writers) != 2 || draft["file"] != "draft.yml" || draft["phase"] != 2.0 || draft["iteration"] != 2.0 || draft["present"] != true {
		t.Fatalf("writers: %v", writers)
	}
}

func TestRecordShowBrokenRecords(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		body  *string
		state string
	}{
		{"missing", nil, "missing"},
		{"unparseable", strPtr("run_record_version: 1\nphases:\n  - {n: 1, kind"), "unparseable"},
	}
	for _, tc := range cases {
		for _, asJSON := range []bool{false, true} {
			t.Run(tc.name, func(t *testing.T) {
				dir := t.TempDir()
				putFile(t, dir, "summary.md", "x")
				if tc.body != nil {
					if err := os.WriteFile(filepath.Join(dir, runrecord.RecordFile), []byte(*tc.body), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				args := []string{"record", "show", dir}
				if asJSON {
					args = append(args, "--json")
				}
				code, out, errb := runCLI(t, args...)
				if code != exitNo {
					t.Fatalf("exit %d\n%s%s", code, out, errb)
				}
				if asJSON {
					v, err := canon.Parse([]byte(strings.TrimSpace(out)), 0)
					if err != nil {
						t.Fatal(err)
					}
					m := v.(map[string]any)
					rc := m["reconstructed"].(map[string]any)
					if m["state"] != tc.state || m["problem"] == nil || rc["label"] != "reconstructed" || rc["pipeline"] != nil {
						t.Fatalf("view: %s", out)
					}
					return
				}
				for _, w := range []string{"record: " + tc.state + ":", "reconstructed view", "pipeline: unknown", "summary.md: writer unknown"} {
					if !strings.Contains(out, w) {
						t.Errorf("stdout lacks %q:\n%s", w, out)
					}
				}
			})
		}
	}
}

func strPtr(s string) *string { return &s }

// TestRecordShowChecksTodaysWorkload runs a real workload, then reads its
// record against the workload as it is (match) and as a later revision
// (drift).
func TestRecordShowChecksTodaysWorkload(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	workload := triageBenchIn(t, tmp)
	body := readFile(t, workload)
	runs := filepath.Join(tmp, "runs")
	if code, _, errs := runCLI(t, "run", workload, "--dir", filepath.Join(tmp, "store"), "--out", runs); code != 0 {
		t.Fatalf("run: exit %d %s", code, errs)
	}
	dirs, _ := filepath.Glob(filepath.Join(runs, "ticket-triage", "ticket-triage-*"))
	if len(dirs) != 1 {
		t.Fatalf("run directories: %v", dirs)
	}
	if code, out, _ := runCLI(t, "record", "show", dirs[0], "--workloads", workload); code != 0 || !strings.Contains(out, "assembly: match") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	later := strings.Replace(body, "revision: 1", "revision: 2", 1)
	if later == body {
		t.Fatal("fixture has no revision: 1 line")
	}
	if err := os.WriteFile(workload, []byte(later), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, _ := runCLI(t, "record", "show", dirs[0], "--workloads", workload); code != 0 || !strings.Contains(out, "assembly: drift") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}

// record show puts the gate's verdict beside the run's status, and marks a
// run made on a modified working tree.
func TestRecordShowGateAndModified(t *testing.T) {
	t.Parallel()
	dir, _ := completedRun(t)
	gate := `{"passed":false,"rules":[{"passed":true},{"passed":false},{"passed":true}],"workload":"w"}`
	putFile(t, dir, "gate.json", gate)
	rec, err := os.ReadFile(filepath.Join(dir, runrecord.RecordFile))
	if err != nil {
		t.Fatal(err)
	}
	head := strings.Repeat("ab", 20)
	rec = []byte(strings.Replace(string(rec), "foundry_head: null\n", "foundry_head: \""+head+"\"\nfoundry_modified: true\n", 1))
	if err := os.WriteFile(filepath.Join(dir, runrecord.RecordFile), rec, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errb := runCLI(t, "record", "show", dir)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errb)
	}
	for _, want := range []string{
		"status: complete (gate FAILED, 2 of 3 rules hold)\n",
		"foundry_head: " + head + " (modified: the working tree had uncommitted changes",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
}
