package vm

import (
	"testing"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/receipt"
	"github.com/algal-assay/assay/engine/store"
)

// roundTrip holds the typed receipt model to the contract's bytes: a
// receipt that validates decodes into receipt.Receipt and encodes back to
// the same canonical bytes. It reports whether rec was a valid receipt
// (tampered ones often are not; those have nothing to round-trip).
// runAndVerify, runExample and every tamper table call it, so every
// receipt those tests produce or forge is covered.
func roundTrip(t testing.TB, rec map[string]any, what string) bool {
	t.Helper()
	if receipt.Validate(rec) != nil {
		return false
	}
	typed, err := receipt.FromValue(rec)
	if err != nil {
		// An effect record the effect contract rejects: Verify reports it
		// the same way, so there is no typed receipt to compare.
		return false
	}
	want, err := canon.Encode(rec)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	got, err := canon.Encode(typed.Value())
	if err != nil {
		t.Fatalf("%s: typed receipt: %v", what, err)
	}
	if string(got) != string(want) {
		t.Errorf("%s: the typed receipt re-encodes differently:\n got %.400s\nwant %.400s", what, got, want)
	}
	return true
}

// Every receipt of the corpora, counted: the upstream examples (plain and
// through the memo cache), the record-shape samples, and each of their
// tampered variants that is still a valid receipt.
func TestModelRoundTripCorpora(t *testing.T) {
	t.Parallel()
	n, tampered := 0, 0
	for _, s := range samples(t) {
		if roundTrip(t, s.rec, s.name) {
			n++
		}
		var ls [][]any
		leaves(s.rec, nil, &ls)
		for _, p := range ls {
			if len(p) == 0 {
				continue
			}
			mut := mutatedAt(s.rec, p)
			if roundTrip(t, mut, s.name+" mutated "+renderPath(p)) {
				tampered++
			}
		}
		var fs [][]any
		fields(s.rec, nil, &fs)
		for _, p := range fs {
			mut := deletedAt(s.rec, p)
			if roundTrip(t, mut, s.name+" deleted "+renderPath(p)) {
				tampered++
			}
		}
	}
	if tampered < 100 {
		t.Errorf("only %d valid tampered receipts round-tripped", tampered)
	}
	t.Logf("%d sample receipts and %d valid tampered variants round-trip byte for byte", n, tampered)
}

// The upstream examples' receipts, plain and memo-cached runs.
func TestModelRoundTripUpstream(t *testing.T) {
	t.Parallel()
	st := store.NewMemStore()
	suite := loadSuite(t, st)
	n := 0
	for _, ex := range suite {
		for _, cached := range []bool{false, true} {
			if cached && !ex.cache {
				continue
			}
			rec := runExample(t, ex, st, cached)
			if !roundTrip(t, rec, ex.id) {
				t.Errorf("%s: the produced receipt does not validate", ex.id)
			}
			n++
		}
	}
	if n < 47 {
		t.Errorf("only %d upstream receipts", n)
	}
	t.Logf("%d upstream receipts round-trip byte for byte", n)
}

// Hand-written receipts with every optional field at the values a typed
// model can lose: empty strings where text may be empty, null where any
// value may be, an empty wake list, zero token counts.
func TestModelRoundTripEdgeValues(t *testing.T) {
	t.Parallel()
	base := samples(t)[1].rec // tools: effects, tool calls
	cases := map[string]func(r map[string]any){
		"empty via and event path": func(r map[string]any) {
			r["cells"].(map[string]any)["agent"].(map[string]any)["via"] = ""
			r["events"].([]any)[1].(map[string]any)["path"] = ""
			r["events"].([]any)[0].(map[string]any)["outcome"] = ""
		},
		"null shadowOut and output": func(r map[string]any) {
			r["cells"].(map[string]any)["agent"].(map[string]any)["shadowOut"] = nil
			e := r["effects"].([]any)[0].(map[string]any)
			delete(e, "error")
			e["output"] = nil
		},
		"usage with empty model and zero tokens": func(r map[string]any) {
			r["effects"].([]any)[0].(map[string]any)["usage"] = map[string]any{"model": "", "tokensIn": 0.0, "tokensOut": 0.0}
		},
		"empty manifest key, zero work": func(r map[string]any) {
			r["manifestKey"] = ""
			r["work"] = map[string]any{"steps": 0.0, "agentCalls": 0.0, "units": 0.0}
		},
	}
	for name, f := range cases {
		mut := canon.Clone(base).(map[string]any)
		f(mut)
		if err := receipt.Validate(mut); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !roundTrip(t, mut, name) {
			t.Errorf("%s: not decoded", name)
		}
	}
}
