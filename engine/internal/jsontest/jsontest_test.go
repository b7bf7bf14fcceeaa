package jsontest

import "testing"

func TestTextIsCanonical(t *testing.T) {
	if got := Text(Parse(t, `{"b":1, "a":[true,null]}`)); got != `{"a":[true,null],"b":1}` {
		t.Fatalf("canonical text: %s", got)
	}
	if len(Object(t, "")) != 0 {
		t.Fatal(`Object("") must be empty`)
	}
	Want(t, "reordered", Object(t, `{"x":"y","a":2}`), `{"a":2, "x":"y"}`)
}
