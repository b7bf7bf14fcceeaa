package canon

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/algal-assay/assay/engine/fault"
)

// EncodeSealed gives the same bytes as encoding the object with the
// member added, and the member's value is seal of the object's own
// canonical bytes, for random objects and keys that sort first, last,
// among array-index keys and between astral and BMP characters.
func TestEncodeSealedIsEncodeWithTheMember(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(2026, 19))
	keys := []string{"digest", "", "0", "7", "07", "a", "\U0010ffff", "\ue000", "~"}
	for i := range 3000 {
		m := map[string]any{}
		for n := r.IntN(6); n > 0; n-- {
			m[randomKey(r)] = randomValue(r, 1)
		}
		key := keys[i%len(keys)]
		delete(m, key)
		body, err := Encode(m)
		if err != nil {
			t.Fatal(err)
		}
		var sealedBody []byte
		got, v, err := EncodeSealed(m, key, func(b []byte) string {
			sealedBody = append([]byte(nil), b...)
			return DigestBytes(b)
		})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(sealedBody, body) {
			t.Fatalf("seal saw %q, the object encodes as %q", sealedBody, body)
		}
		if d, _ := Digest(m); v != d {
			t.Fatalf("value %s, want the digest %s", v, d)
		}
		if _, ok := m[key]; ok {
			t.Fatal("EncodeSealed added the member to m")
		}
		m[key] = v
		want, _ := Encode(m)
		if !bytes.Equal(got, want) {
			t.Fatalf("key %q:\n got %q\nwant %q", key, got, want)
		}
	}
}

func TestEncodeSealedRefusesAPresentKeyAndBadValues(t *testing.T) {
	t.Parallel()
	if _, _, err := EncodeSealed(map[string]any{"digest": "x"}, "digest", DigestBytes); fault.CodeOf(err) != fault.Internal {
		t.Fatalf("present key: %v", err)
	}
	if _, _, err := EncodeSealed(map[string]any{"a": []int{1}}, "digest", DigestBytes); fault.CodeOf(err) != fault.Internal {
		t.Fatalf("a Go value that is not JSON: %v", err)
	}
}

// Equal(a, b) is exactly "both encode, to the same bytes", for random
// pairs that are equal, nearly equal (one leaf changed, -0 for 0) or
// unrelated, and for values Encode refuses.
func TestEqualIsEqualCanonicalBytes(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(2026, 1919))
	same := func(a, b any) bool {
		x, err1 := Encode(a)
		y, err2 := Encode(b)
		return err1 == nil && err2 == nil && bytes.Equal(x, y)
	}
	for i := range 6000 {
		a := randomValue(r, 0)
		var b any
		switch i % 3 {
		case 0:
			b = Clone(a)
		case 1:
			b = perturb(r, Clone(a))
		default:
			b = randomValue(r, 0)
		}
		if got, want := Equal(a, b), same(a, b); got != want {
			ea, _ := Encode(a)
			eb, _ := Encode(b)
			t.Fatalf("Equal = %v, canonical bytes equal = %v:\n%s\n%s", got, want, ea, eb)
		}
	}
	deep := any("leaf")
	for range MaxDepth + 1 {
		deep = []any{deep}
	}
	for _, c := range []struct {
		a, b any
		want bool
	}{
		{0.0, math.Copysign(0, -1), true},
		{math.Inf(1), math.Inf(1), false},
		{math.NaN(), math.NaN(), false},
		{[]int{1}, []int{1}, false},
		{map[string]any{"a": 1}, map[string]any{"a": 1}, false},
		{map[string]any{"a": nil}, map[string]any{"b": nil}, false},
		{deep, deep, false},
		{nil, false, false},
	} {
		if got := Equal(c.a, c.b); got != c.want || got != same(c.a, c.b) {
			t.Fatalf("Equal(%#v, %#v) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

// perturb changes one leaf of v, or turns a 0 into -0, at random.
func perturb(r *rand.Rand, v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k := range x {
			if r.IntN(2) == 0 {
				x[k] = perturb(r, x[k])
				return x
			}
		}
		x["extra"] = nil
		return x
	case []any:
		if len(x) == 0 {
			return append(x, true)
		}
		i := r.IntN(len(x))
		x[i] = perturb(r, x[i])
		return x
	case float64:
		if x == 0 {
			return math.Copysign(0, -1)
		}
		return x + 1
	case string:
		return x + "\u0000"
	case bool:
		return !x
	}
	return 1.0
}
