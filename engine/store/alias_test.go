package store

import (
	"testing"

	"github.com/algal-assay/assay/engine/internal/jsontest"
)

// A caller that keeps mutating a value after handing it to the store must
// not change what the store holds under the value's digest: every store
// keeps content immutable under its key, as the file store does by
// construction.
func TestStoredContentDoesNotAliasCaller(t *testing.T) {
	t.Parallel()
	for name, s := range map[string]Store{"mem": NewMemStore(), "overlay": NewOverlay(NewMemStore())} {
		t.Run(name, func(t *testing.T) {
			v := map[string]any{"n": 1.0, "list": []any{"a"}}
			d, err := s.Put(Values, v)
			if err != nil {
				t.Fatal(err)
			}
			v["n"] = 2.0
			v["list"].([]any)[0] = "b"
			got, ok, err := s.Get(Values, d)
			if err != nil || !ok {
				t.Fatal(err)
			}
			m := got.(map[string]any)
			if m["n"] != 1.0 || m["list"].([]any)[0] != "a" {
				t.Fatalf("stored object changed under its digest: %v", m)
			}

			rd := jsontest.Digest(t, "req-"+name)
			rec := map[string]any{"requestDigest": rd, "executor": "e", "output": map[string]any{"x": "first"}}
			if _, err := s.PutEffect(rec, "id"); err != nil {
				t.Fatal(err)
			}
			rec["output"].(map[string]any)["x"] = "mutated"
			memo, _, _ := s.GetEffect(rd, "id")
			if memo["output"].(map[string]any)["x"] != "first" {
				t.Fatalf("memoized record changed after the first write won: %v", memo)
			}

			slot := []any{"kept"}
			if err := s.SetSlot("s", slot); err != nil {
				t.Fatal(err)
			}
			slot[0] = "mutated"
			sv, _, _ := s.GetSlot("s")
			if sv.([]any)[0] != "kept" {
				t.Fatalf("slot changed without a write: %v", sv)
			}
		})
	}
}
