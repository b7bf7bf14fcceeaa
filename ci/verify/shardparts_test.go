package verify

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/vm"
	"github.com/algal-assay/assay/harness"
	"github.com/algal-assay/assay/harness/parts"
	"github.com/algal-assay/assay/harness/synth"
)

// shardRun runs shard 1 of 2 of a synthetic 9-system x 300-case bench
// (4 parts: the shard holds parts 1 and 3) and returns the workload's
// parts directory and the options that check the shard's runs root.
func shardRun(t *testing.T) (string, string, Options) {
	t.Helper()
	dir := t.TempDir()
	p, err := synth.Write(filepath.Join(dir, "suites"), synth.Spec{Systems: 9, Cases: 300, Triage: filepath.Join("..", "..", "fixtures", "triage"), Gate: true})
	if err != nil {
		t.Fatal(err)
	}
	storeDir := filepath.Join(dir, "shard", ".algal")
	wb, err := vm.NewWorkbench(storeDir)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "shard", "runs")
	if _, err := harness.RunAll(context.Background(), []string{p}, harness.BatchOptions{Shard: &parts.Shard{I: 1, N: 2}, Options: harness.Options{Runner: wb, Store: wb, Out: out}}); err != nil {
		t.Fatal(err)
	}
	ws, err := LoadWorkloads(p)
	if err != nil {
		t.Fatal(err)
	}
	parts, _ := filepath.Glob(filepath.Join(out, "*", "*"))
	if len(parts) != 1 {
		t.Fatalf("shard directories: %v", parts)
	}
	return out, parts[0], Options{Evidence: wb, StoreDir: storeDir, Workloads: ws}
}

// A shard's runs root verifies as it is: its parts directory is one item
// whose every file is re-derived (configs, tables), verified (each part's
// report, against its part) or re-derived from that verification (each
// part's record, byte for byte). A forged or stale record fails, naming
// it; so does a record in a run directory, where no run writes one.
func TestShardPartsVerify(t *testing.T) {
	t.Parallel()
	root, dir, opts := shardRun(t)
	ctx := context.Background()
	verify := func() *Report {
		t.Helper()
		rep, err := Verify(ctx, []string{root}, opts)
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	rep := verify()
	if !rep.OK() || len(rep.Results) != 1 || rep.Results[0].Kind != KindParts || rep.Results[0].Detail() != "2 of 4 parts verified" {
		t.Fatalf("an honest shard: %+v", rep.Results)
	}
	for _, f := range []string{"part-0001-verified.json", "part-0003-verified.json", "part-0001-report.json", "part-0003-config.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Fatalf("the shard did not write %s: %v", f, err)
		}
	}
	items, err := Find([]string{root}, opts.StoreDir)
	if err != nil || len(items) != 1 || items[0].Kind != KindParts {
		t.Fatalf("Find: %v %+v", err, items)
	}

	rec := filepath.Join(dir, "part-0001-verified.json")
	orig, _ := os.ReadFile(rec)
	other, _ := os.ReadFile(filepath.Join(dir, "part-0003-verified.json"))
	report := filepath.Join(dir, "part-0001-report.json")
	origReport, _ := os.ReadFile(report)
	edit := func(what string, m map[string]any) []byte {
		b, err := canon.Encode(m)
		if err != nil {
			t.Fatal(what, err)
		}
		return append(b, '\n')
	}
	parsed := func() map[string]any {
		v, err := canon.Parse(orig, 0)
		if err != nil {
			t.Fatal(err)
		}
		return v.(map[string]any)
	}
	forged := parsed()
	forged["checkedReceipts"] = forged["checkedReceipts"].(float64) + 1
	stale := parsed()
	stale["report"] = "sha256:" + strings.Repeat("0", 64)
	otherSlug := parsed()
	otherSlug["slug"] = "scale-r1-0000000000"
	for _, tc := range []struct {
		name         string
		file         string
		data         []byte
		want         []string
		restoreAfter []byte
	}{
		{"receipts counted that were not", rec, edit("forged", forged), []string{"part-0001-verified.json differs from the record re-derived by verifying part-0001-report.json"}, orig},
		{"a record of other bytes (stale)", rec, edit("stale", stale), []string{"part-0001-verified.json differs from the record re-derived"}, orig},
		{"a record of another run", rec, edit("slug", otherSlug), []string{"part-0001-verified.json differs"}, orig},
		{"part 3's record as part 1's", rec, other, []string{"part-0001-verified.json differs"}, orig},
		{"a record not in the canonical form", rec, append([]byte(" "), orig...), []string{"part-0001-verified.json differs"}, orig},
		{"the report edited after its record", report, []byte(strings.Replace(string(origReport), `"passed":true`, `"passed":false`, 1)),
			[]string{"part-0001-report.json", "part-0001-verified.json records part 1 as verified, but it does not verify here"}, origReport},
		{"a record of a part the shard does not hold", filepath.Join(dir, "part-0002-verified.json"), orig,
			[]string{"part-0002-config.json is missing", "part-0002-report.json is missing"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			write(t, tc.file, tc.data)
			defer func() {
				if tc.restoreAfter != nil {
					write(t, tc.file, tc.restoreAfter)
				} else if err := os.Remove(tc.file); err != nil {
					t.Fatal(err)
				}
			}()
			rep := verify()
			got := ""
			if len(rep.Results) == 1 {
				got = strings.Join(rep.Results[0].Mismatches, "\n")
			}
			if rep.OK() {
				t.Fatalf("passes: %+v", rep.Results)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("want a failure naming %q, got:\n%s", w, got)
				}
			}
		})
	}
	if rep := verify(); !rep.OK() {
		t.Fatalf("restored: %+v", rep.Results)
	}

	// No run writes a record into a run directory: the merge takes a
	// shard's records and does not copy them.
	run, ropts := runInParts(t)
	write(t, filepath.Join(run, "part-0001-verified.json"), orig)
	res, err := CheckRun(ctx, run, ropts)
	if err != nil {
		t.Fatal(err)
	}
	if res.OK || !strings.Contains(strings.Join(res.Mismatches, "\n"), "part-0001-verified.json is not a file this run writes") {
		t.Fatalf("a record in a run directory: %v", res.Mismatches)
	}
}
