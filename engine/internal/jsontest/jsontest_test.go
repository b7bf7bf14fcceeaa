package jsontest

import (
	"testing"

	"github.com/algal-assay/assay/engine/canon"
)

func TestTextIsCanonical(t *testing.T) {
	if got := Text(Parse(t, `{"b":1, "a":[true,null]}`)); got != `{"a":[true,null],"b":1}` {
		t.Fatalf("canonical text: %s", got)
	}
	if len(Object(t, "")) != 0 {
		t.Fatal(`Object("") must be empty`)
	}
	Want(t, "reordered", Object(t, `{"x":"y","a":2}`), `{"a":2, "x":"y"}`)
	v := Parse(t, `{"b":1, "a":[true,null]}`)
	if got := Canonical(t, v); got != `{"a":[true,null],"b":1}` {
		t.Fatalf("Canonical: %s", got)
	}
	if got, want := Digest(t, v), canon.DigestBytes([]byte(Canonical(t, v))); got != want {
		t.Fatalf("Digest: %s, want the digest of the canonical bytes %s", got, want)
	}
}
