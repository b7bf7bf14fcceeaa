// Package reporttest is test support for the reports bench and foundry
// write and verify: a strict parser's rejection table over forged copies
// of a valid report, the check that verification names a forged claim,
// and the check that a report's bytes do not depend on
// how many cases run at once.
package reporttest

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/evidence"
	"github.com/algal-assay/assay/engine/fault"
)

// ParseRejects returns a check for a strict parser's rejection table:
// each call runs forge on a fresh copy of valid, in a subtest named name,
// and fails unless parse rejects the copy with a coded error whose path
// begins with field.
func ParseRejects[T any](t *testing.T, valid map[string]any, parse func(any) (T, error)) func(name, field string, forge func(v map[string]any)) {
	return func(name, field string, forge func(v map[string]any)) {
		t.Helper()
		t.Run(name, func(t *testing.T) {
			v := canon.Clone(valid).(map[string]any)
			forge(v)
			_, err := parse(v)
			RejectedAt(t, err, field)
		})
	}
}

// RejectedAt fails t unless err is a coded error whose path begins with
// field.
func RejectedAt(t testing.TB, err error, field string) {
	t.Helper()
	if fe, ok := fault.As(err); !ok || !strings.HasPrefix(fe.Path, field) {
		t.Fatalf("want rejection at %s, got %v", field, err)
	}
}

// SameAtEveryConcurrency encodes a fresh run at each concurrency of ns, in
// order, and fails unless every encoding is byte for byte the first one.
func SameAtEveryConcurrency(t testing.TB, ns []int, encode func(n int) ([]byte, error)) {
	t.Helper()
	var first []byte
	for _, n := range ns {
		b, err := encode(n)
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = b
		} else if !bytes.Equal(first, b) {
			t.Fatalf("concurrency %d changed the report", n)
		}
	}
}

// Caught fails t unless verification ran (err is nil), rejected the report
// and holds a mismatch that names want: names(mismatch, want) is true
// (strings.HasPrefix, strings.Contains).
func Caught(t testing.TB, v *evidence.Verification, err error, want string, names func(s, want string) bool) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	if v.OK {
		t.Fatal("forgery verified")
	}
	if !slices.ContainsFunc(v.Mismatches, func(m string) bool { return names(m, want) }) {
		t.Errorf("no mismatch names %s: %q", want, v.Mismatches)
	}
}
