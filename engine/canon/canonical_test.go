package canon

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// ParseCanonical calls bytes canonical exactly when Encode of their value
// gives them back: each way a text can differ from its canonical form is
// caught, and canonical texts of every kind pass.
func TestParseCanonicalIsEncodeRoundTrip(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		text      string
		canonical bool
	}{
		{`{"a":1,"b":[true,false,null],"c":{"d":"e"}}`, true},
		{`{"0":1,"10":2,"2":3}`, false}, // index keys sort numerically
		{`{"0":1,"2":3,"10":2,"a":0}`, true},
		{`{"b":1,"a":2}`, false},
		{"{\"\ue000\":1,\"\U0001f600\":2}", false},
		{"{\"\U0001f600\":2,\"\ue000\":1}", true}, // UTF-16 order, not byte order
		{`{"a": 1}`, false},
		{` 1`, false},
		{"1\n", false},
		{`[1, 2]`, false},
		{`"a\/b"`, false},
		{`"a\"b\\c\n\t\r\b\f"`, true},
		{`"\u0001\u001f"`, true},
		{`"\u001F"`, false},
		{`"\u000a"`, false}, // Encode writes \n
		{`"\u0041"`, false},
		{`"\ud83d\ude00"`, false},
		{"\"\U0001f600\u2028<\"", true},
		{`-0`, false},
		{`0`, true},
		{`-12`, true},
		{`1.0`, false},
		{`1.5`, true},
		{`1e21`, false}, // JavaScript writes 1e+21
		{`1E21`, false},
		{`1e+21`, true},
		{`100`, true},
		{`1e2`, false},
		{`0.000001`, true},
		{`1e-7`, true},
		{`1234567890123456789`, false}, // written 1234567890123456800
		{`1234567890123456800`, true},
		{`{}`, true},
		{`[]`, true},
		{`{ }`, false},
	} {
		v, canonical, err := ParseCanonical([]byte(tc.text), 0)
		if err != nil {
			t.Fatalf("%s: %v", tc.text, err)
		}
		enc, err := Encode(v)
		if err != nil {
			t.Fatal(err)
		}
		if canonical != tc.canonical || canonical != (string(enc) == tc.text) {
			t.Errorf("%s: canonical %t, want %t (encodes as %s)", tc.text, canonical, tc.canonical, enc)
		}
	}
}

// Random values written with shuffled keys and white space, and their
// canonical encodings: ParseCanonical agrees with Encode on every one.
func TestParseCanonicalRandom(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(31, 2026))
	for range 4000 {
		v := randomValue(r, 0)
		enc, err := Encode(v)
		if err != nil {
			t.Fatal(err)
		}
		var shuffled bytes.Buffer
		writeShuffled(&shuffled, r, v)
		for _, text := range [][]byte{enc, shuffled.Bytes()} {
			got, canonical, err := ParseCanonical(text, 0)
			if err != nil {
				t.Fatalf("%q: %v", text, err)
			}
			again, _ := Encode(got)
			if canonical != bytes.Equal(again, text) {
				t.Fatalf("%q: canonical %t, encodes as %q", text, canonical, again)
			}
		}
	}
}

// DigestWithout of an object's canonical bytes is the digest of the
// object without the member, wherever the member sorts, and is refused
// for bytes without it at the top level.
func TestDigestWithoutIsDigestOfTheRest(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(7, 31))
	keys := []string{"digest", "", "0", "7", "07", "a", "\U0010ffff", "\ue000", "~"}
	for i := range 3000 {
		m := map[string]any{}
		for n := r.IntN(6); n > 0; n-- {
			m[randomKey(r)] = randomValue(r, 1)
		}
		key := keys[i%len(keys)]
		delete(m, key)
		want, err := Digest(m)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := DigestWithout(mustEncode(t, m), key); ok {
			t.Fatalf("%v has no %q, yet DigestWithout found it", m, key)
		}
		m[key] = randomValue(r, 1)
		got, ok := DigestWithout(mustEncode(t, m), key)
		if !ok || got != want {
			t.Fatalf("%v without %q: %s %t, want %s", m, key, got, ok, want)
		}
	}
	for _, text := range []string{`[]`, `"digest"`, `{"a":{"digest":1}}`, `{"a":["digest",{"digest":2}]}`, `{`, `{"digest"`, `{"digest":"x"`} {
		if _, ok := DigestWithout([]byte(text), "digest"); ok {
			t.Errorf("%s: found a top-level digest member", text)
		}
	}
}

func mustEncode(t *testing.T, v any) []byte {
	t.Helper()
	b, err := Encode(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
