package diff_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/algal-assay/assay/ci/diff"
	"github.com/algal-assay/assay/engine/fault"
)

// cloneDir copies a whole directory (the base tree with its runs and store).
func cloneDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	return dst
}

// A run's stored verdicts are compared with what its evidence re-derives
// to, never used: an edited gate.json, verification.json or record fails
// the load, naming the file and the field; the re-derived verdicts are the
// ones the diff carries.
func TestLoadSetRederivesAndRefusesEditedVerdicts(t *testing.T) {
	t.Parallel()
	bt, _ := base(t)
	for _, tc := range []struct {
		name, file string
		edit       func(map[string]any)
		text       [2]string
		want       string
	}{
		{name: "gate", file: "gate.json", edit: func(v map[string]any) {
			v["rules"].([]any)[0].(map[string]any)["passed"] = false
			v["passed"] = false
		}, want: "gate.json: passed is false, but re-deriving it from"},
		{name: "verification", file: "verification.json", edit: func(v map[string]any) { v["checkedReceipts"] = 1.0 }, want: "verification.json: checkedReceipts is 1"},
		{name: "record", file: "foundry-run.yml", text: [2]string{"status: complete", "status: running"}, want: "foundry-run.yml: status running"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tree := cloneDir(t, bt)
			runs, _ := filepath.Glob(filepath.Join(tree, "runs", "ticket-triage", "ticket-triage-*", tc.file))
			if len(runs) != 1 {
				t.Fatalf("%v", runs)
			}
			data, err := os.ReadFile(runs[0])
			if err != nil {
				t.Fatal(err)
			}
			if tc.edit != nil {
				var v map[string]any
				if err := json.Unmarshal(data, &v); err != nil {
					t.Fatal(err)
				}
				tc.edit(v)
				data, _ = json.Marshal(v)
			} else {
				data = []byte(strings.Replace(string(data), tc.text[0], tc.text[1], 1))
			}
			if err := os.WriteFile(runs[0], data, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err = loadSet(tree)
			var f *fault.Error
			if !errors.As(err, &f) || f.Code != diff.CodeEvidence || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %s naming %q", err, diff.CodeEvidence, tc.want)
			}
		})
	}

	// Untouched, the set loads with the re-derived verdicts.
	set, err := loadSet(cloneDir(t, bt))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range set.Runs {
		if r.Gate == nil || r.Verification == nil || !r.Passed() || len(r.Gate.Rules) == 0 {
			t.Errorf("%s: %+v", r.Workload, r)
		}
	}
	// Without the workloads nothing can be re-derived, so nothing loads.
	ev, err := evidence(bt)
	if err != nil {
		t.Fatal(err)
	}
	ev.Workloads = nil
	if _, err := diff.LoadSet(context.Background(), filepath.Join(bt, "runs"), ev); err == nil || !strings.Contains(err.Error(), "cannot be re-derived") {
		t.Fatalf("err = %v", err)
	}
}
