package manifest

import "testing"

// TestCompatible pins the edge type rules of algal.organism.v1 (seed 002,
// "Port types" and "Edges"): same type; choice feeds text; choice feeds
// choice when the consumer's labels cover the producer's; anything but ref
// and cap feeds json; json feeds only json; ref only ref; cap only cap of
// the same class; a list feeds a scalar only when the scalar is json, so
// ref and cap lists never feed scalar ports.
func TestCompatible(t *testing.T) {
	t.Parallel()
	p := func(typ string) Port { return Port{Type: typ} }
	many := func(x Port) Port { x.Many = true; return x }
	labeled := func(ls ...string) Port { return Port{Type: TypeChoice, Labels: ls} }
	capOf := func(class string) Port { return Port{Type: TypeCap, Capability: class} }
	for _, tc := range []struct {
		name     string
		from, to Port
		want     bool
	}{
		{"text->text", p(TypeText), p(TypeText), true},
		{"text->json", p(TypeText), p(TypeJSON), true},
		{"json->json", p(TypeJSON), p(TypeJSON), true},
		{"json->text", p(TypeJSON), p(TypeText), false},
		{"json->choice", p(TypeJSON), p(TypeChoice), false},
		{"text->choice", p(TypeText), p(TypeChoice), false},
		{"choice->text", labeled("a"), p(TypeText), true},
		{"choice->json", labeled("a"), p(TypeJSON), true},
		{"choice covered", labeled("a"), labeled("a", "b"), true},
		{"choice not covered", labeled("a", "c"), labeled("a", "b"), false},
		{"unlabeled choice->labeled", p(TypeChoice), labeled("a"), true},
		{"labeled->unlabeled choice", labeled("a"), p(TypeChoice), true},
		{"ref->ref", p(TypeRef), p(TypeRef), true},
		{"ref->json", p(TypeRef), p(TypeJSON), false},
		{"text->ref", p(TypeText), p(TypeRef), false},
		{"json->ref", p(TypeJSON), p(TypeRef), false},
		{"cap same class", capOf("mailbox-send"), capOf("mailbox-send"), true},
		{"cap other class", capOf("mailbox-send"), capOf("mailbox-receive"), false},
		{"cap->json", capOf("mailbox-send"), p(TypeJSON), false},
		{"cap->text", capOf("mailbox-send"), p(TypeText), false},
		{"text->cap", p(TypeText), capOf("mailbox-send"), false},
		{"json list->json scalar", many(p(TypeJSON)), p(TypeJSON), true},
		{"text list->json scalar", many(p(TypeText)), p(TypeJSON), true},
		{"text list->text scalar", many(p(TypeText)), p(TypeText), false},
		{"text list->text list", many(p(TypeText)), many(p(TypeText)), true},
		{"json list->text list", many(p(TypeJSON)), many(p(TypeText)), false},
		{"ref list->ref scalar", many(p(TypeRef)), p(TypeRef), false},
		{"ref list->json scalar", many(p(TypeRef)), p(TypeJSON), false},
		{"ref list->ref list", many(p(TypeRef)), many(p(TypeRef)), true},
		{"ref scalar->ref list", p(TypeRef), many(p(TypeRef)), true},
		{"cap list->cap scalar", many(capOf("c")), capOf("c"), false},
		{"cap list->json scalar", many(capOf("c")), p(TypeJSON), false},
		{"cap scalar->cap list", capOf("c"), many(capOf("c")), true},
		{"cap list->cap list other class", many(capOf("c")), many(capOf("d")), false},
	} {
		if got := Compatible(tc.from, tc.to); got != tc.want {
			t.Errorf("%s: Compatible = %v, want %v", tc.name, got, tc.want)
		}
	}
}
