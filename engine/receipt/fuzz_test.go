package receipt

import (
	"testing"

	"github.com/algal-assay/assay/engine/canon"
)

// FuzzParse feeds arbitrary bytes to the strict receipt reader: it must
// never panic, and an accepted receipt never differs from itself.
func FuzzParse(f *testing.F) {
	r := map[string]any{"contract": Contract, "runtime": map[string]any{"name": RuntimeName, "version": RuntimeVersion},
		"manifestDigest": d1, "manifestKey": "organism:t", "args": map[string]any{}, "outcome": Complete,
		"cells": map[string]any{"a": map[string]any{"status": "skipped", "work": 0.0}}, "effects": []any{}, "events": []any{},
		"work": map[string]any{"steps": 0.0, "agentCalls": 0.0, "units": 0.0}}
	_, _ = Seal(r)
	b, _ := canon.Encode(r)
	f.Add(b)
	f.Add([]byte(`{"contract":"algal.run.v1"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		rec, err := Parse(data)
		if err != nil {
			return
		}
		if mm := Diff(rec, rec); len(mm) != 0 {
			t.Fatalf("a receipt differs from itself: %v", mm)
		}
		_ = Check(rec)
	})
}
