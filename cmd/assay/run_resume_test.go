package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/algal-assay/assay/engine/crashtest"
	"github.com/algal-assay/assay/engine/store"
	"github.com/algal-assay/assay/harness/parts"
	"github.com/algal-assay/assay/harness/synth"
	"github.com/algal-assay/assay/runrecord"
)

// stagingReports counts the part reports visible in the staging
// directories of workload name under runs, those in skip aside.
func stagingReports(runs, name string, skip []string) int {
	dirs, _ := filepath.Glob(filepath.Join(runs, name, "."+name+"-r*.partial-*"))
	n := 0
	for _, d := range dirs {
		if slices.Contains(skip, d) || strings.HasSuffix(d, ".lock") {
			continue
		}
		reports, _ := filepath.Glob(filepath.Join(d, "part-*-report.json"))
		n += len(reports)
	}
	return n
}

// leftovers lists the staging directories of workload name under runs.
func leftovers(runs, name string) []string {
	dirs, _ := filepath.Glob(filepath.Join(runs, name, "."+name+"-r*.partial-*"))
	var out []string
	for _, d := range dirs {
		if !strings.HasSuffix(d, ".lock") {
			out = append(out, d)
		}
	}
	return out
}

// verifyStore reads every object of the store at dir through its digest
// check.
func verifyStore(t *testing.T, dir string) int {
	t.Helper()
	st, err := store.OpenFileStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ns := range []store.Namespace{store.Manifests, store.Values, store.Runs} {
		refs, err := st.List(ns)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range refs {
			if _, ok, err := st.Get(ns, d); err != nil || !ok {
				t.Fatalf("%s object %s does not verify after the kill: ok %v, %v", ns, d, ok, err)
			}
			n++
		}
	}
	return n
}

// startAssay starts this test binary as `assay args...` in dir.
func startAssay(t *testing.T, dir string, args ...string) *exec.Cmd {
	t.Helper()
	cmd, _ := assayProcess(t, dir, args...)
	cmd.Stdout, cmd.Stderr = nil, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd
}

// `assay run` of a 3-system x 2,000-case bench (8 parts) is SIGKILLed at
// a random count of visible part reports, re-run and killed again at a
// random later count, and run a third time to the end. After each kill
// every visible store object verifies. The last run reuses exactly the
// parts whose leftover reports are those an uninterrupted run writes and
// runs the others (the record names each reused report
// reused-part-report, and the summary says how many), leaves no staging
// directory, writes a run directory byte for byte the uninterrupted one's
// (the record aside) and verifies with `assay ci verify`.
func TestKilledRunResumesWithoutRerunningFinishedParts(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns and kills processes")
	}
	dir := t.TempDir()
	triage := filepath.Join("..", "..", "fixtures", "triage")
	if _, err := synth.Write(filepath.Join(dir, "suites", "big"), synth.Spec{Name: "big", Systems: 3, Cases: 2000, Triage: triage, Gate: true}); err != nil {
		t.Fatal(err)
	}
	const partCount = 8
	if code, out := assayAt(t, dir, "run", "suites", "--out", "whole/runs", "--dir", "whole/.algal"); code != 0 {
		t.Fatalf("uninterrupted run: exit %d\n%s", code, out)
	}
	want := runDirFiles(t, filepath.Join(dir, "whole", "runs"), "big")
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 19))
	t.Logf("seed %d", seed)

	// The same depth as whole/runs: part configs name the workload's files
	// relative to the run directory.
	runs := filepath.Join(dir, "again", "runs")
	args := []string{"run", "suites", "--out", "again/runs", "--dir", "again/.algal", "--concurrency", "4"}
	first := 1 + rng.IntN(partCount-2)
	killed, err := crashtest.KillWhen(startAssay(t, dir, args...), func() int { return stagingReports(runs, "big", nil) }, first)
	if err != nil || !killed {
		t.Fatalf("first run: killed %v, %v", killed, err)
	}
	verifyStore(t, filepath.Join(dir, "again", ".algal"))
	old := leftovers(runs, "big")
	if len(old) != 1 {
		t.Fatalf("after the first kill: staging directories %v", old)
	}
	second := 1 + rng.IntN(partCount-first-1)
	// The second run copies the reports it reuses into its own stage, then
	// runs the rest: kill it once it has written more than it reused.
	killed, err = crashtest.KillWhen(startAssay(t, dir, args...), func() int { return stagingReports(runs, "big", old) }, first+second)
	if err != nil {
		t.Fatalf("second run: %v", err)
	}
	if killed {
		verifyStore(t, filepath.Join(dir, "again", ".algal"))
	}
	t.Logf("killed after %d part reports, then the re-run after %d more (killed %v)", first, second, killed)

	// The parts an uninterrupted run's report is left for, in any leftover.
	finished := map[int]bool{}
	for _, d := range leftovers(runs, "big") {
		for n := 1; n <= partCount; n++ {
			name := fmt.Sprintf("part-%04d-report.json", n)
			if b, err := os.ReadFile(filepath.Join(d, name)); err == nil && bytes.Equal(b, want[name]) {
				finished[n] = true
			}
		}
	}
	if len(finished) < first-1 { // the last report visible may be torn
		t.Fatalf("only parts %v left finished after %d reports were visible", finished, first)
	}
	code, out := assayAt(t, dir, args...)
	if code != 0 {
		t.Fatalf("last run: exit %d\n%s", code, out)
	}
	note := fmt.Sprintf("note: resumed an unfinished run: %d of %d parts reused (each verified against the store and its part config), %d run", len(finished), partCount, partCount-len(finished))
	if !strings.Contains(out, note) {
		t.Errorf("the summary does not say %q:\n%s", note, out)
	}
	if left := leftovers(runs, "big"); len(left) != 0 {
		t.Errorf("staging directories left: %v", left)
	}
	slugs, _ := filepath.Glob(filepath.Join(runs, "big", "big-r*"))
	if len(slugs) != 1 {
		t.Fatalf("run directories %v", slugs)
	}
	v, err := runrecord.Read(slugs[0], runrecord.Options{})
	if err != nil || v.Record == nil || v.Record.Status != runrecord.RunComplete {
		t.Fatalf("record: %v %+v", err, v)
	}
	reused := map[int]bool{}
	for _, ph := range v.Record.Phases {
		for _, a := range ph.Artifacts {
			var n int
			if _, err := fmt.Sscanf(a.File, "part-%04d-report.json", &n); err == nil && a.ID == parts.ReusedReport {
				reused[n] = true
			}
		}
	}
	t.Logf("the last run reused %d parts and ran %d", len(reused), partCount-len(reused))
	if fmt.Sprint(reused) != fmt.Sprint(finished) {
		t.Errorf("the record says parts %v were reused; the leftovers held finished parts %v", reused, finished)
	}
	got := runDirFiles(t, runs, "big")
	if len(got) != len(want) {
		t.Errorf("%d files, the uninterrupted run has %d", len(got), len(want))
	}
	for f, b := range want {
		if !bytes.Equal(got[f], b) {
			t.Errorf("%s differs from the uninterrupted run's", f)
		}
	}
	if code, out := assayAt(t, dir, "ci", "verify", "again/runs", "--dir", "again/.algal", "--workloads", "suites"); code != 0 {
		t.Fatalf("ci verify of the resumed run: exit %d\n%s", code, out)
	}
}

// The reuse as the CLI shows it, on a 9-system x 2-case bench (2 parts):
// a leftover staging directory holding both part reports makes the next
// run reuse them (--json lists the parts); --fresh runs both and removes
// the leftover.
func TestRunReusesLeftoverPartsUnlessFresh(t *testing.T) {
	dir := t.TempDir()
	triage := filepath.Join("..", "..", "fixtures", "triage")
	if _, err := synth.Write(filepath.Join(dir, "suites", "wide"), synth.Spec{Name: "wide", Systems: 9, Cases: 2, Triage: triage}); err != nil {
		t.Fatal(err)
	}
	if code, out := assayAt(t, dir, "run", "suites"); code != 0 {
		t.Fatalf("first run: exit %d\n%s", code, out)
	}
	slugs, _ := filepath.Glob(filepath.Join(dir, "runs", "wide", "wide-r*"))
	if len(slugs) != 1 {
		t.Fatalf("run directories %v", slugs)
	}
	// A complete run is re-run in full: nothing is reused from it.
	if code, out := assayAt(t, dir, "run", "suites"); code != 0 || strings.Contains(out, "resumed") {
		t.Fatalf("re-run over a complete run: exit %d\n%s", code, out)
	}
	leave := func() string {
		left := filepath.Join(filepath.Dir(slugs[0]), "."+filepath.Base(slugs[0])+".partial-killed")
		if err := os.MkdirAll(left, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"part-0001-report.json", "part-0002-report.json"} {
			b, err := os.ReadFile(filepath.Join(slugs[0], name))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(left, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return left
	}
	left := leave()
	code, out := assayAt(t, dir, "run", "suites", "--json")
	if code != 0 {
		t.Fatalf("resumed run: exit %d\n%s", code, out)
	}
	var doc struct {
		Workloads []struct {
			Resumed *struct {
				ReusedParts, RanParts []int
			} `json:"resumed"`
		} `json:"workloads"`
	}
	if err := json.NewDecoder(strings.NewReader(out[strings.Index(out, "{"):])).Decode(&doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(doc.Workloads) != 1 || doc.Workloads[0].Resumed == nil || !slices.Equal(doc.Workloads[0].Resumed.ReusedParts, []int{1, 2}) || len(doc.Workloads[0].Resumed.RanParts) != 0 {
		t.Fatalf("--json does not list parts 1 and 2 as reused:\n%s", out)
	}
	if _, err := os.Stat(left); err == nil {
		t.Fatal("the resumed run left the leftover")
	}
	left = leave()
	if code, out := assayAt(t, dir, "run", "suites", "--fresh"); code != 0 || strings.Contains(out, "resumed") {
		t.Fatalf("--fresh: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(left); err == nil {
		t.Fatal("--fresh left the leftover")
	}
}
