package store

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
)

// A store given an object's canonical bytes files them exactly as Put
// would have: same name, same bytes, the same bounds. A store without
// PutEncoded gets a plain Put.
func TestPutEncodedIsPut(t *testing.T) {
	t.Parallel()
	v := map[string]any{"z": "last", "a": []any{1.0, "x", nil}}
	b, _ := canon.Encode(v)
	stores := impls(t)
	fs, _ := OpenFileStore(filepath.Join(t.TempDir(), ".algal"))
	stores["batch"] = func() Store { return fs.Batch() }
	stores["plain"] = func() Store { return putOnly{NewMemStore()} }
	for name, mk := range stores {
		t.Run(name, func(t *testing.T) {
			s := mk()
			d, err := PutEncoded(s, Runs, v, b)
			if err != nil {
				t.Fatal(err)
			}
			if d != canon.DigestBytes(b) {
				t.Fatalf("named %s, want the digest of the bytes", d)
			}
			got, ok, err := s.Get(Runs, d)
			if err != nil || !ok {
				t.Fatalf("get: %v %v", ok, err)
			}
			if again, _ := canon.Encode(got); string(again) != string(b) {
				t.Fatalf("stored %s, want %s", again, b)
			}
			if d2, err := s.Put(Runs, v); err != nil || d2 != d {
				t.Fatalf("Put after PutEncoded: %s %v", d2, err)
			}
			if _, err := PutEncoded(s, "secrets", v, b); fault.CodeOf(err) != fault.Parse {
				t.Fatalf("bad namespace: %v", err)
			}
			big := map[string]any{"s": strings.Repeat("x", MaxObjectBytes)}
			bigBytes, _ := canon.Encode(big)
			if _, err := PutEncoded(s, Values, big, bigBytes); fault.CodeOf(err) != fault.BudgetExhausted {
				t.Fatalf("over the bound: %v", err)
			}
		})
	}
	base := NewMemStore()
	o := NewOverlay(base)
	d, err := PutEncoded(o, Runs, v, b)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := base.Get(Runs, d); ok {
		t.Fatal("the overlay wrote through to its base")
	}
}

// putOnly hides a store's PutEncoded.
type putOnly struct{ Store }
