package bundle

import (
	"testing"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/store"
)

// FuzzParse: whatever the bytes, Parse either rejects them with a contract
// code or admits a closure whose every entry installs and re-packs to the
// same canonical bundle.
func FuzzParse(f *testing.F) {
	b, _, _, _ := packed(f)
	data, _ := canon.Encode(b)
	f.Add(data)
	f.Add([]byte(`{"contract":"algal.bundle.v1","root":"sha256:00","manifests":{}}`))
	f.Add([]byte("\ufeff{}"))
	f.Fuzz(func(t *testing.T, in []byte) {
		got, err := Parse(in)
		if err != nil {
			if fault.CodeOf(err) == "" {
				t.Fatalf("error without a contract code: %v", err)
			}
			return
		}
		st := store.NewMemStore()
		if err := got.Install(st); err != nil {
			t.Fatalf("admitted bundle does not install: %v", err)
		}
		if _, ok := got.Manifests[got.Root]; !ok {
			t.Fatal("admitted bundle lacks its root")
		}
	})
}
