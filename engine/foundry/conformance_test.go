package foundry

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/evidence"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/fault/faulttest"
)

// The closed habitat record carries every field: a complete account
// records "refused": null rather than omitting it.
func TestAccountRecordIsComplete(t *testing.T) {
	t.Parallel()
	rep, _ := sampleReport(t)
	honest := rep.Budget.Value()
	if _, err := ParseAccount(canon.Clone(honest), ""); err != nil {
		t.Fatalf("honest account: %v", err)
	}
	for _, key := range []string{"contract", "activity", "limits", "runs", "charged", "outcome", "refused"} {
		v := canon.Clone(honest).(map[string]any)
		delete(v, key)
		_, err := ParseAccount(v, "budget")
		var fe *fault.Error
		if !errors.As(err, &fe) || fe.Code != fault.Parse {
			t.Errorf("account without %q: %v", key, err)
		}
	}
	// Inside a run and a refusal too.
	for _, key := range []string{"manifest", "receipt", "ceiling", "charged"} {
		v := canon.Clone(honest).(map[string]any)
		delete(v["runs"].([]any)[0].(map[string]any), key)
		if _, err := ParseAccount(v, ""); err == nil {
			t.Errorf("run without %q admitted", key)
		}
	}
}

// A scorer failure aborts the foundry with SCORER_INVALID naming the first
// failing run in report order, whatever the concurrency.
func TestScorerAbortIsDeterministic(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for range 10 {
		cfg, f := fixture(t, spec{"a", behavior{}}, spec{"b", behavior{}}, spec{"c", behavior{}})
		f.jitter = true
		cfg.Scorer, _ = evidence.CompileScorer(map[string]any{"contract": "algal.expr.v1", "program": 1.0}, "scorer")
		_, err := Run(context.Background(), cfg, f, Options{Concurrency: 8})
		faulttest.Want(t, err, fault.ScorerInvalid)
		seen[err.Error()] = true
	}
	if len(seen) != 1 {
		t.Fatalf("scorer abort named %d different cases: %v", len(seen), seen)
	}
	for msg := range seen {
		if !strings.Contains(msg, `case "train-a"`) {
			t.Errorf("abort %q, want the first candidate's first case", msg)
		}
	}
}
