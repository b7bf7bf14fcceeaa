package canon

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf16"
)

// TestCompareUTF16Property checks CompareUTF16 against the obvious
// reference (encode both to UTF-16, compare code units) on random strings
// drawn from ASCII, two-byte, BMP-high (U+E000..U+FFFF, which sort above
// surrogate pairs in UTF-16 but below them in UTF-8) and supplementary
// characters, many sharing a long common prefix so that the prefix search
// is exercised at every length.
func TestCompareUTF16Property(t *testing.T) {
	t.Parallel()
	chars := []rune{'a', 'b', 'z', 0x7f, 0xe9, 0x7ff, 0x800, 0xd7ff, 0xe000, 0xfeff, 0xffff, 0x10000, 0x1f600, 0x10ffff}
	r := rand.New(rand.NewPCG(7, 15))
	word := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteRune(chars[r.IntN(len(chars))])
		}
		return b.String()
	}
	for range 20000 {
		prefix := word([]int{0, 1, 7, 40, 300}[r.IntN(5)])
		a, b := prefix+word(r.IntN(4)), prefix+word(r.IntN(4))
		want := slices.Compare(utf16.Encode([]rune(a)), utf16.Encode([]rune(b)))
		if got := CompareUTF16(a, b); got != want {
			t.Fatalf("CompareUTF16(%q, %q) = %d, want %d", a, b, got, want)
		}
		if got := CompareUTF16(b, a); got != -want {
			t.Fatalf("CompareUTF16(%q, %q) = %d, want %d", b, a, got, -want)
		}
	}
}

// TestCompareUTF16AllocatesNothing: comparing long strings decodes only
// the runes where they first differ.
func TestCompareUTF16AllocatesNothing(t *testing.T) {
	a := strings.Repeat("é😀\uffff", 7000)
	b := a[:len(a)-3] + "😀"
	if allocs := testing.AllocsPerRun(50, func() {
		if CompareUTF16(a, b) != 1 { // U+FFFF > the lead surrogate of U+1F600
			t.Fatal("wrong order")
		}
	}); allocs != 0 {
		t.Errorf("CompareUTF16 allocated %.1f times", allocs)
	}
}

// TestUTF16LenMatchesEncoding checks UTF16Len against encoding to UTF-16,
// for valid text of every width at every offset and for invalid bytes
// (counted as a range loop decodes them).
func TestUTF16LenMatchesEncoding(t *testing.T) {
	t.Parallel()
	chars := []rune{'a', 0x7f, 0xe9, 0x7ff, 0x800, 0xffff, 0x10000, 0x1f600, 0x10ffff}
	r := rand.New(rand.NewPCG(3, 4))
	for range 5000 {
		var b strings.Builder
		for range r.IntN(30) {
			b.WriteRune(chars[r.IntN(len(chars))])
		}
		s := b.String()
		if got, want := UTF16Len(s), len(utf16.Encode([]rune(s))); got != want {
			t.Fatalf("UTF16Len(%q) = %d, want %d", s, got, want)
		}
	}
	for _, s := range []string{"\x80", "a\xffb", "\xf0\x9f\x98", "😀\xf0", strings.Repeat("é", 9) + "\xc3"} {
		want := 0
		for _, r := range s {
			want += utf16.RuneLen(r)
		}
		if got := UTF16Len(s); got != want {
			t.Errorf("UTF16Len(%q) = %d, want %d", s, got, want)
		}
	}
}
