package verify

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/vm"
	"github.com/algal-assay/assay/harness"
	"github.com/algal-assay/assay/harness/repeats"
	"github.com/algal-assay/assay/harness/workload"
)

// triageRun runs the ticket-triage suite on a fresh store, repeats times
// over (--repeats; 0 keeps the workload's own), and returns its run
// directory and the options that check it.
func triageRun(tb testing.TB, repeats int) (string, Options) {
	tb.Helper()
	dir := tb.TempDir()
	storeDir := filepath.Join(dir, "store")
	wb, err := vm.NewWorkbench(storeDir)
	if err != nil {
		tb.Fatal(err)
	}
	wlPath := filepath.Join("..", "..", "suites", "ticket-triage.bench.yaml")
	w, err := workload.Load(wlPath)
	if err != nil {
		tb.Fatal(err)
	}
	o, err := harness.Run(context.Background(), w, harness.Options{Runner: wb, Store: wb, Out: filepath.Join(dir, "runs"), Repeats: repeats})
	if err != nil {
		tb.Fatal(err)
	}
	ws, err := LoadWorkloads(wlPath)
	if err != nil {
		tb.Fatal(err)
	}
	return o.RunDir, Options{Evidence: wb, StoreDir: storeDir, Workloads: ws}
}

func editJSON(t *testing.T, path string, edit func(m map[string]any)) {
	t.Helper()
	v, err := canon.ReadFile(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	m := v.(map[string]any)
	edit(m)
	write(t, path, append(encode(t, m), '\n'))
}

func TestVerifyRepeatedRun(t *testing.T) {
	t.Parallel()
	dir, opts := triageRun(t, 3)
	res, err := CheckRun(context.Background(), dir, opts)
	if err != nil || !res.OK {
		t.Fatalf("an honest repeated run: %v %v", err, res.Mismatches)
	}
	if res.Run.Derived.Repeats == nil || res.Run.Derived.Repeats.K != 3 || res.Run.Workload.Repeats != 3 {
		t.Fatalf("re-derived without its repeats: %+v", res.Run.Derived.Repeats)
	}

	for _, tc := range []struct {
		name string
		edit func(t *testing.T, dir string)
		want string
	}{
		{"forged pass rate", func(t *testing.T, dir string) {
			editJSON(t, filepath.Join(dir, repeats.File), func(m map[string]any) {
				c := m["contenders"].([]any)[0].(map[string]any)
				c["passRate"] = map[string]any{"exact": "1", "value": 1.0}
			})
		}, `repeats.json: contenders[cheap-single].passRate.exact is "1", but re-deriving it from the reports gives "2/3"`},
		{"forged flaky list", func(t *testing.T, dir string) {
			editJSON(t, filepath.Join(dir, repeats.File), func(m map[string]any) {
				c := m["contenders"].([]any)[1].(map[string]any)
				c["flaky"] = []any{"wrong-totals"}
			})
		}, `repeats.json: contenders[frontier-single].flaky is ["wrong-totals"], but re-deriving it from the reports gives []`},
		{"forged repeat count", func(t *testing.T, dir string) {
			editJSON(t, filepath.Join(dir, repeats.File), func(m map[string]any) { m["repeats"] = 2.0 })
		}, "compiles to run"},
		{"tampered repeat report", func(t *testing.T, dir string) {
			editJSON(t, filepath.Join(dir, "report-r03.json"), func(m map[string]any) {
				m["systems"].([]any)[0].(map[string]any)["passed"] = 6.0
			})
		}, "report-r03.json: "},
		{"missing repeat report", func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, "report-r02.json")); err != nil {
				t.Fatal(err)
			}
		}, "report-r02.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, opts := triageRun(t, 3)
			tc.edit(t, dir)
			res, err := CheckRun(context.Background(), dir, opts)
			if err != nil {
				t.Fatal(err)
			}
			if res.OK || !strings.Contains(strings.Join(res.Mismatches, "\n"), tc.want) {
				t.Fatalf("want a mismatch naming %q, got %v", tc.want, res.Mismatches)
			}
		})
	}
}

// A workload that declares repeats, run once with --repeats 1, verifies
// as the single run it is.
func TestVerifyRepeatsOverriddenToOne(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src, err := os.ReadFile(filepath.Join("..", "..", "suites", "ticket-triage.bench.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	fixtures, _ := filepath.Abs(filepath.Join("..", "..", "fixtures"))
	body := strings.Replace(strings.ReplaceAll(string(src), "../fixtures", filepath.ToSlash(fixtures)), "revision: 1\n", "revision: 1\nrepeats: 3\n", 1)
	wlPath := write(t, filepath.Join(dir, "suites", "ticket-triage.bench.yaml"), []byte(body))
	wb, err := vm.NewWorkbench(filepath.Join(dir, "store"))
	if err != nil {
		t.Fatal(err)
	}
	w, err := workload.Load(wlPath)
	if err != nil {
		t.Fatal(err)
	}
	ws, err := LoadWorkloads(wlPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []int{1, 3} {
		o, err := harness.Run(context.Background(), w, harness.Options{Runner: wb, Store: wb, Out: filepath.Join(dir, "runs"), Repeats: k})
		if err != nil {
			t.Fatal(err)
		}
		res, err := CheckRun(context.Background(), o.RunDir, Options{Evidence: wb, Workloads: ws})
		if err != nil || !res.OK || res.Run.Workload.Repeats != k {
			t.Fatalf("--repeats %d: %v %v", k, err, res.Mismatches)
		}
	}
}

// BenchmarkRepeatedRunDirectory measures what checking a run directory
// costs per repeat: the ticket-triage suite at 1 and at 3 repeats, side by
// side (each repeat's report verified and aligned, repeats.json
// re-derived and compared).
func BenchmarkRepeatedRunDirectory(b *testing.B) {
	for _, k := range []int{1, 3} {
		runDir, opts := triageRun(b, k)
		b.Run(fmt.Sprintf("repeats-%d", k), func(b *testing.B) {
			for b.Loop() {
				res, err := CheckRun(context.Background(), runDir, opts)
				if err != nil || !res.OK {
					b.Fatalf("%v %v", err, res.Mismatches)
				}
			}
		})
	}
}
