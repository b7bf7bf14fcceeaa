package vm

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/receipt"
	"github.com/algal-assay/assay/engine/store"
)

// sameVerification verifies rec without and with its canonical bytes
// (VerifyOptions.Canonical) and fails unless both give the same report or
// the same error.
func sameVerification(t *testing.T, s sample, rec map[string]any, what string) {
	t.Helper()
	slow, slowErr := Verify(rec, s.m, VerifyOptions{Store: s.st})
	b, err := canon.Encode(rec)
	if err != nil {
		t.Fatal(err)
	}
	fast, fastErr := Verify(rec, s.m, VerifyOptions{Store: s.st, Canonical: b})
	if (slowErr == nil) != (fastErr == nil) || (slowErr != nil && slowErr.Error() != fastErr.Error()) {
		t.Fatalf("%s: %s: error %v from the bytes, %v without", s.name, what, fastErr, slowErr)
	}
	if !reflect.DeepEqual(slow, fast) {
		t.Fatalf("%s: %s: report %+v from the bytes, %+v without", s.name, what, fast, slow)
	}
}

// Verifying against the receipt's canonical bytes is verifying without
// them: the same report for every sample receipt as recorded and for
// every leaf mutated (as is and re-sealed) and every field deleted.
func TestVerifyCanonicalIsVerify(t *testing.T) {
	t.Parallel()
	n := 0
	for _, s := range samples(t) {
		sameVerification(t, s, s.rec, "as recorded")
		var ls, fs [][]any
		leaves(s.rec, nil, &ls)
		for _, p := range ls {
			mut := mutatedAt(s.rec, p)
			sameVerification(t, s, mut, "mutated "+renderPath(p))
			_, _ = receipt.Seal(mut)
			sameVerification(t, s, mut, "mutated "+renderPath(p)+" (re-sealed)")
			n += 2
		}
		fields(s.rec, nil, &fs)
		for _, p := range fs {
			sameVerification(t, s, deletedAt(s.rec, p), "deleted "+renderPath(p))
			n++
		}
	}
	if n < 500 {
		t.Fatalf("only %d receipts compared", n)
	}
}

// A stored receipt whose bytes are not canonical never reaches the check
// against canonical bytes: the workbench keeps only canonical bytes, so a
// receipt whose digest field is forged to hash its non-canonical bytes
// (a text the check would take if handed those bytes) fails, and the
// same receipt with its true digest, stored with an escape Encode does
// not write, verifies.
func TestWorkbenchVerifiesNonCanonicalStoredReceiptsTheSlowWay(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	wb, err := NewWorkbench(dir)
	if err != nil {
		t.Fatal(err)
	}
	wb.Verified = &VerifiedReceipts{}
	m := mustManifest(t, triageJSON)
	if _, err := wb.Store.Put(store.Manifests, m.Value); err != nil {
		t.Fatal(err)
	}
	rec := runAndVerify(t, m, `{"ticket":{"text":"Tickets crash"}}`, scriptedHost(t, wb.Store, `{"route":"bug"}`))
	honest, err := canon.Encode(rec)
	if err != nil {
		t.Fatal(err)
	}
	// \u0054 is "T": the same value, bytes Encode would not write.
	escaped := bytes.Replace(honest, []byte(`"Tickets crash"`), []byte(`"\u0054ickets crash"`), -1)
	d := rec["digest"].(string)
	forgedDigest, ok := canon.DigestWithout(escaped, "digest")
	if !ok {
		t.Fatal("no digest member")
	}
	forged := bytes.Replace(escaped, []byte(d), []byte(forgedDigest), 1)
	put := func(b []byte) string {
		ref := canon.DigestBytes(b)
		hex, _ := canon.DigestHex(ref)
		if err := os.MkdirAll(filepath.Join(dir, "runs"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "runs", hex+".json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
		return ref
	}
	for _, tc := range []struct {
		name  string
		bytes []byte
		ok    bool
	}{
		{"canonical", honest, true},
		{"escaped", escaped, true},
		{"escaped, digest forged over the escaped bytes", forged, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ref := put(tc.bytes)
			got, err := wb.Receipt(ref)
			if err != nil {
				t.Fatal(err)
			}
			kept := wb.Verified.takeRead(ref)
			if want := tc.name == "canonical"; (kept != nil) != want {
				t.Fatalf("canonical bytes kept: %t, want %t", kept != nil, want)
			}
			if !tc.ok {
				// The forgery is one the check against canonical bytes
				// would take if these bytes reached it.
				if rep, err := Verify(got, m, VerifyOptions{Store: wb.Store, Canonical: tc.bytes}); err != nil || !rep.OK {
					t.Fatalf("the forgery does not exercise the check: %v %+v", err, rep)
				}
			}
			if kept != nil {
				wb.Verified.keepRead(ref, kept)
			}
			diffs, err := wb.ReplayStored(context.Background(), ref, got, m)
			if err != nil {
				t.Fatal(err)
			}
			if (len(diffs) == 0) != tc.ok {
				t.Fatalf("replay found %q, want ok=%t", diffs, tc.ok)
			}
			if !tc.ok && !strings.Contains(strings.Join(diffs, "; "), "digest mismatch") {
				t.Fatalf("replay found %q, want the digest named", diffs)
			}
		})
	}
}
