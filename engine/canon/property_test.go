package canon

import (
	"bytes"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// randomValue builds a JSON value of bounded depth from r: every kind,
// numbers across the whole double range, strings with escapes, astral
// characters and array-index-like keys.
func randomValue(r *rand.Rand, depth int) any {
	kinds := 7
	if depth >= 6 {
		kinds = 5 // scalars only
	}
	switch r.IntN(kinds) {
	case 0:
		return nil
	case 1:
		return r.IntN(2) == 0
	case 2:
		switch r.IntN(4) {
		case 0:
			return float64(r.IntN(2000) - 1000)
		case 1:
			f := math.Float64frombits(r.Uint64()) // any double but the non-finite ones
			if math.IsNaN(f) || math.IsInf(f, 0) {
				return 0.0
			}
			return f
		case 2:
			return r.NormFloat64() * math.Pow(10, float64(r.IntN(40)-20))
		default:
			return float64(r.Int64N(1<<62)) * 8
		}
	case 3, 4:
		return randomString(r)
	case 5:
		n := r.IntN(5)
		l := make([]any, n)
		for i := range l {
			l[i] = randomValue(r, depth+1)
		}
		return l
	default:
		n := r.IntN(6)
		m := make(map[string]any, n)
		for i := 0; i < n; i++ {
			m[randomKey(r)] = randomValue(r, depth+1)
		}
		return m
	}
}

var alphabet = []string{"a", "z", "\"", "\\", "\n", "\u0000", "\u001f", "/", "é", "\u2028", "\ue000", "😀", "\U0010ffff", "<", " "}

func randomString(r *rand.Rand) string {
	var b strings.Builder
	for n := r.IntN(6); n > 0; n-- {
		b.WriteString(alphabet[r.IntN(len(alphabet))])
	}
	return b.String()
}

func randomKey(r *rand.Rand) string {
	switch r.IntN(4) {
	case 0:
		return strconv.Itoa(r.IntN(20)) // array-index keys
	case 1:
		return "0" + strconv.Itoa(r.IntN(10)) // look-alikes that are not indices
	default:
		return randomString(r)
	}
}

// writeShuffled writes v as JSON text with object keys in a random order
// and random white space, so parsing it must not depend on either.
func writeShuffled(b *bytes.Buffer, r *rand.Rand, v any) {
	ws := func() {
		if r.IntN(3) == 0 {
			b.WriteString(" \n\t"[:1+r.IntN(3)])
		}
	}
	switch x := v.(type) {
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			ws()
			writeShuffled(b, r, e)
		}
		b.WriteByte(']')
	case map[string]any:
		keys := SortedKeys(x)
		r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			ws()
			b.Write(appendString(nil, k))
			b.WriteByte(':')
			ws()
			writeShuffled(b, r, x[k])
		}
		b.WriteByte('}')
	default:
		enc, _ := Encode(v)
		b.Write(enc)
	}
}

// TestPropertyFixedPointAndOrderIndependence: for thousands of random
// values, canon(parse(canon(x))) == canon(x), and every spelling of x (any
// key order, any white space) parses to the same canonical bytes and
// digest.
func TestPropertyFixedPointAndOrderIndependence(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(2026, 11))
	for i := 0; i < 5000; i++ {
		v := randomValue(r, 0)
		c1, err := Encode(v)
		if err != nil {
			t.Fatalf("encode %#v: %v", v, err)
		}
		back, err := Parse(c1, 0)
		if err != nil {
			t.Fatalf("canonical bytes do not parse: %q: %v", c1, err)
		}
		c2, _ := Encode(back)
		if !bytes.Equal(c1, c2) {
			t.Fatalf("not a fixed point:\n%q\n%q", c1, c2)
		}
		var b bytes.Buffer
		writeShuffled(&b, r, v)
		spelled, err := Parse(b.Bytes(), 0)
		if err != nil {
			t.Fatalf("respelled document does not parse: %q: %v", b.Bytes(), err)
		}
		d1, _ := Digest(v)
		d2, _ := Digest(spelled)
		if d1 != d2 {
			t.Fatalf("digest depends on spelling: %q vs %q", c1, b.Bytes())
		}
	}
}

// EncodedSize is the length of Encode's output, and fails where Encode
// does, for random values and for each thing Encode refuses.
func TestEncodedSizeIsLenOfEncode(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(11, 31))
	deep := any("x")
	for range MaxDepth + 1 {
		deep = []any{deep}
	}
	values := []any{math.NaN(), math.Inf(-1), map[string]any{"a": []any{1.0, math.Inf(1)}}, deep, []any{int(1)},
		"\x00\x1f\"\\\n\t<\u2028\U0001f600", map[string]any{"\x01k": math.Copysign(0, -1), "10": 1e21, "": 5e-324}}
	for range 5000 {
		values = append(values, randomValue(r, 0))
	}
	for _, v := range values {
		b, err := Encode(v)
		n, nerr := EncodedSize(v)
		if (err == nil) != (nerr == nil) || (err == nil && n != len(b)) {
			t.Fatalf("%#v: EncodedSize %d (%v), Encode %d bytes (%v)", v, n, nerr, len(b), err)
		}
	}
}
