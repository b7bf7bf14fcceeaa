// Package jsontest holds the JSON value helpers the engine's tests share:
// parse a JSON text into a value (failing the test on bad test data),
// render a value as canonical text or its digest, and assert that a value
// is a given JSON text canonically.
package jsontest

import (
	"testing"

	"github.com/algal-assay/assay/engine/canon"
)

// Parse parses s strictly; bad test JSON fails the test.
func Parse(t testing.TB, s string) any {
	t.Helper()
	v, err := canon.Parse([]byte(s), 0)
	if err != nil {
		t.Fatalf("bad test JSON: %v\n%s", err, s)
	}
	return v
}

// Object parses s as an object; "" is the empty object.
func Object(t testing.TB, s string) map[string]any {
	t.Helper()
	if s == "" {
		return map[string]any{}
	}
	m, ok := Parse(t, s).(map[string]any)
	if !ok {
		t.Fatalf("test JSON is not an object: %s", s)
	}
	return m
}

// Text is v's canonical JSON, or the encoding error's text.
func Text(v any) string {
	b, err := canon.Encode(v)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

// Canonical is v's canonical JSON; a value with no canonical form fails
// the test.
func Canonical(t testing.TB, v any) string {
	t.Helper()
	b, err := canon.Encode(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Digest is v's canonical digest; a value with no canonical form fails the
// test.
func Digest(t testing.TB, v any) string {
	t.Helper()
	return canon.DigestBytes([]byte(Canonical(t, v)))
}

// Want asserts that the canonical JSON of got equals the JSON text want.
func Want(t testing.TB, what string, got any, want string) {
	t.Helper()
	exp, err := canon.Canonicalize([]byte(want), 0)
	if err != nil {
		t.Fatalf("bad expectation %s: %v", want, err)
	}
	if g := Text(got); g != string(exp) {
		t.Errorf("%s:\n got %s\nwant %s", what, g, exp)
	}
}
