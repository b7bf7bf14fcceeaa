package verify

import (
	"context"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/vm"
	"github.com/algal-assay/assay/harness"
	"github.com/algal-assay/assay/harness/synth"
	"github.com/algal-assay/assay/harness/workload"
)

// runInParts runs a synthetic 9-system x 300-case bench (4 parts) on a
// memory workbench and returns its run directory and the options that
// check it.
func runInParts(t *testing.T) (string, Options) {
	t.Helper()
	p, err := synth.Write(t.TempDir(), synth.Spec{Systems: 9, Cases: 300, Triage: filepath.Join("..", "..", "fixtures", "triage"), Gate: true})
	if err != nil {
		t.Fatal(err)
	}
	w, err := workload.Load(p)
	if err != nil {
		t.Fatal(err)
	}
	wb, _ := vm.NewWorkbench("")
	o, err := harness.Run(context.Background(), w, harness.Options{Runner: wb, Store: wb, Out: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ws, err := LoadWorkloads(p)
	if err != nil {
		t.Fatal(err)
	}
	return o.RunDir, Options{Evidence: wb, Workloads: ws}
}

func TestRunInPartsVerifiesAndAForgedAggregateFails(t *testing.T) {
	t.Parallel()
	dir, opts := runInParts(t)
	res, err := CheckRun(context.Background(), dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK || res.Run.Derived == nil || len(res.Run.Derived.Bench.Systems) != 9 {
		t.Fatalf("a run in parts does not check: %v", res.Mismatches)
	}

	path := filepath.Join(dir, workload.AggregateFile)
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := canon.Parse(orig, 0)
	sys := v.(map[string]any)["systems"].([]any)[2].(map[string]any)
	sys["passed"] = sys["passed"].(float64) + 1
	b, _ := canon.Encode(v)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	res, err = CheckRun(context.Background(), dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.OK || !strings.Contains(strings.Join(res.Mismatches, "\n"), "aggregate.json: systems[2].passed is ") {
		t.Fatalf("a forged aggregate: %v", res.Mismatches)
	}
	if err := os.WriteFile(path, orig, 0o644); err != nil {
		t.Fatal(err)
	}

	// A part report edited in place no longer verifies, and says which.
	part := filepath.Join(dir, "part-0002-report.json")
	pb, _ := os.ReadFile(part)
	if err := os.WriteFile(part, []byte(strings.Replace(string(pb), `"passed":true`, `"passed":false`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err = CheckRun(context.Background(), dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.OK || !strings.Contains(strings.Join(res.Mismatches, "\n"), "part-0002-report.json") {
		t.Fatalf("an edited part: %v", res.Mismatches)
	}
}

// A part's config is held to the one its part compiles to: the same
// bytes agree; a path written from elsewhere that names the same tree
// file agrees too (compared field by field against the part's config
// compiled again); any other member that differs is named.
func TestPartConfigIsHeldToTheCompiledOne(t *testing.T) {
	t.Parallel()
	dir, opts := runInParts(t)
	part := filepath.Join(dir, "part-0002-config.json")
	orig, err := os.ReadFile(part)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		edit func(m map[string]any)
		want string // "" for a config that agrees
	}{
		{"as compiled", func(map[string]any) {}, ""},
		{"a manifest named from the workload's directory", func(m map[string]any) {
			sys := m["systems"].([]any)[0].(map[string]any)
			sys["manifest"] = path.Base(sys["manifest"].(string))
		}, ""},
		{"a forged price", func(m map[string]any) {
			m["prices"].(map[string]any)["small-1"].(map[string]any)["input"] = 9.0
		}, "part-0002-config.json: prices.small-1.input is 9, but "},
	} {
		editJSON(t, part, tc.edit)
		res, err := CheckRun(context.Background(), dir, opts)
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Join(res.Mismatches, "\n")
		if tc.want == "" && !res.OK || tc.want != "" && (res.OK || !strings.Contains(got, tc.want)) {
			t.Errorf("%s: want a mismatch naming %q (none when empty), got %v", tc.name, tc.want, res.Mismatches)
		}
		write(t, part, orig)
	}
}

// A part report must be in the canonical form a run writes, though the
// parts' re-derivation already parsed it: bytes that parse to the very
// value that verifies, but are not that form, fail naming the file (the
// check by digest takes only bytes the re-derivation found canonical).
func TestPartReportNotInCanonicalFormFails(t *testing.T) {
	t.Parallel()
	dir, opts := runInParts(t)
	part := filepath.Join(dir, "part-0003-report.json")
	orig, err := os.ReadFile(part)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		data []byte
		ok   bool
	}{
		{"as written", orig, true},
		{"without its final newline", orig[:len(orig)-1], false},
		{"with a newline more", append(append([]byte{}, orig...), '\n'), false},
	} {
		write(t, part, tc.data)
		res, err := CheckRun(context.Background(), dir, opts)
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Join(res.Mismatches, "\n")
		if res.OK != tc.ok || !tc.ok && !strings.Contains(got, "part-0003-report.json is not in the canonical form a run writes") {
			t.Errorf("%s: OK %v, mismatches %v", tc.name, res.OK, res.Mismatches)
		}
	}
	write(t, part, orig)
}
