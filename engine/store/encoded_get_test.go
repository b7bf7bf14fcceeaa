package store

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
)

// GetEncoded returns the canonical bytes an object's digest names: as
// stored when they are canonical, re-encoded when the file holds the same
// value in other bytes, and a DIGEST_MISMATCH for bytes of another value;
// a missing object is not an error.
func TestGetEncodedReturnsTheCanonicalBytesItsDigestNames(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	f, err := OpenFileStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	v := map[string]any{"b": 1.0, "a": []any{"x", true}}
	d, err := f.Put(Values, v)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := canon.Encode(v)
	got, ok, err := f.GetEncoded(Values, d)
	if err != nil || !ok || !bytes.Equal(got, want) {
		t.Fatalf("stored canonical: %q %v %v", got, ok, err)
	}
	hex, _ := canon.DigestHex(d)
	path := filepath.Join(dir, string(Values), hex+".json")
	if err := os.WriteFile(path, []byte("{ \"a\": [\"x\", true], \"b\": 1.0 }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, ok, err = f.GetEncoded(Values, d); err != nil || !ok || !bytes.Equal(got, want) {
		t.Fatalf("same value, other bytes: %q %v %v", got, ok, err)
	}
	if err := os.WriteFile(path, []byte(`{"a":["x",true],"b":2}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err = f.GetEncoded(Values, d); fault.CodeOf(err) != fault.DigestMismatch {
		t.Fatalf("another value under the name: %v, want %s", err, fault.DigestMismatch)
	}
	other, _ := canon.Digest(map[string]any{"c": 3.0})
	if _, ok, err = f.GetEncoded(Values, other); err != nil || ok {
		t.Fatalf("missing object: ok=%v err=%v", ok, err)
	}
}
