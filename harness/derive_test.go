package harness

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/foundry"
	"github.com/algal-assay/assay/harness/rundir"
	"github.com/algal-assay/assay/harness/workload"
)

// Rederive reproduces, byte for byte, the verification.json and gate.json
// every fixture run writes, from report.json (or budget.json), the
// workload and the store alone.
func TestRederiveMatchesWhatTheRunWrote(t *testing.T) {
	t.Parallel()
	runEveryFixture(t, func(t *testing.T, o *Outcome, b *testBench) { rederiveAndCompare(t, o, b) })
	t.Run("exhausted budget", func(t *testing.T) {
		p := copyFixture(t, "intent-select.foundry.yaml", func(s string) string {
			return s + "budget: { work: 1000000, attempts: 64, runs: 3 }\n"
		})
		o, b := runWorkloadFile(t, p, 0)
		if o.Foundry.Report != nil {
			t.Fatal("the budget was not exhausted")
		}
		d := rederiveAndCompare(t, o, b)
		if d.GatesPassed() {
			t.Fatal("an exhausted budget re-derived as passing gates")
		}
	})
}

func rederiveAndCompare(t *testing.T, o *Outcome, b *testBench) *Derived {
	t.Helper()
	name := rundir.ReportFile
	if o.Foundry != nil && o.Foundry.Report == nil {
		name = rundir.BudgetFile
	}
	v, err := canon.ReadFile(filepath.Join(o.RunDir, name), 0)
	if err != nil {
		t.Fatal(err)
	}
	c, err := workload.Compile(o.Workload, t.TempDir(), foundry.AdmitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Slug != filepath.Base(o.RunDir) {
		t.Fatalf("recompiled slug %s, run directory %s", c.Slug, filepath.Base(o.RunDir))
	}
	d, err := Rederive(context.Background(), c, v, b)
	if err != nil {
		t.Fatal(err)
	}
	for file, val := range map[string]any{rundir.VerificationFile: d.Verification.Value(), rundir.GateFile: GateValue(o.Workload, d.Gates)} {
		want, err := os.ReadFile(filepath.Join(o.RunDir, file))
		if err != nil {
			t.Fatal(err)
		}
		got, err := canon.Encode(val)
		if err != nil {
			t.Fatal(err)
		}
		if string(got)+"\n" != string(want) {
			t.Errorf("%s re-derived:\n%s\nwritten:\n%s", file, got, want)
		}
	}
	return d
}
