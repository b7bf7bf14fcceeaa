package canon

import (
	"bytes"
	"errors"
	"testing"

	"github.com/algal-assay/assay/engine/fault"
)

// FuzzParseEncode: parsing never panics, every rejection carries a code,
// and whatever parses canonicalizes to a fixed point.
func FuzzParseEncode(f *testing.F) {
	for _, s := range []string{
		`{"10":-0.0,"2":1e21,"x":1e-7,"__proto__":{"ok":true},"a":1.0}`,
		`[1,"x",null,true,false,{"a":[{}]}]`, `"\ud83d\ude00\u0000\n"`, `1e308`, `5e-324`,
		`{"a":1,"a":2}`, "\ufeff1", `"\ud800"`, `[[[[[[[[[[[[]]]]]]]]]]]]`, `-0`, `123e-2`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := Parse(data, 1<<16)
		if err != nil {
			var ce *fault.Error
			if !errors.As(err, &ce) || ce.Code == "" {
				t.Fatalf("rejection without a code: %v", err)
			}
			return
		}
		c1, err := Encode(v)
		if err != nil {
			t.Fatalf("parsed value does not encode: %v", err)
		}
		v2, err := Parse(c1, 0)
		if err != nil {
			t.Fatalf("canonical output does not parse: %q: %v", c1, err)
		}
		c2, err := Encode(v2)
		if err != nil || !bytes.Equal(c1, c2) {
			t.Fatalf("not a fixed point: %q vs %q (%v)", c1, c2, err)
		}
	})
}

// FuzzParseCanonical: ParseCanonical parses as Parse does and calls the
// input canonical exactly when Encode of its value gives it back.
func FuzzParseCanonical(f *testing.F) {
	for _, s := range []string{
		`{"10":-0.0,"2":1e21,"x":1e-7,"__proto__":{"ok":true},"a":1.0}`, `{"2":1e+21,"10":0}`,
		`[1,"x",null,true,false,{"a":[{}]}]`, `"\ud83d\ude00\u0000\n"`, `"\u001f\/"`, `1e308`, `5e-324`, `-0`, `123e-2`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, canonical, err := ParseCanonical(data, 1<<16)
		w, perr := Parse(data, 1<<16)
		if (err == nil) != (perr == nil) {
			t.Fatalf("ParseCanonical: %v, Parse: %v", err, perr)
		}
		if err != nil {
			return
		}
		enc, err := Encode(v)
		if err != nil {
			t.Fatal(err)
		}
		if encW, _ := Encode(w); !bytes.Equal(enc, encW) {
			t.Fatalf("ParseCanonical read %q, Parse %q", enc, encW)
		}
		if canonical != bytes.Equal(enc, data) {
			t.Fatalf("%q: canonical %t, encodes as %q", data, canonical, enc)
		}
	})
}
