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
	if want, err := canon.Digest(v); err != nil || Digest(t, v) != want {
		t.Fatalf("Digest: %s, want canon.Digest's %s (%v)", Digest(t, v), want, err)
	}
}
