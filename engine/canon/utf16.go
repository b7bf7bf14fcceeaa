package canon

import (
	"encoding/binary"
	"math/bits"
	"unicode/utf8"
)

// UTF16Len is the length of s in UTF-16 code units, the unit ALGAL's text
// bounds and expr's slen count in: one per character, two for a character
// outside the Basic Multilingual Plane. Invalid UTF-8 counts as Go's range
// loop decodes it (one U+FFFD, one unit, per bad byte).
//
// Valid text is counted eight bytes at a time: every byte that is not a
// continuation byte (10xxxxxx) starts a character, and every lead byte of
// a four-byte sequence (11110xxx) adds the second unit of a surrogate pair.
func UTF16Len(s string) int {
	if !utf8.ValidString(s) {
		return utf16LenDecoding(s)
	}
	const highs = 0x8080808080808080
	n := len(s)
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := binary.LittleEndian.Uint64([]byte(s[i : i+8]))
		if w&highs == 0 {
			continue // ASCII
		}
		cont := w & highs &^ (w << 1) // bit 7 set, bit 6 clear
		four := w & (w << 1) & (w << 2) & (w << 3) & highs
		n += bits.OnesCount64(four) - bits.OnesCount64(cont)
	}
	return n + unitsOverBytes(s[i:])
}

// unitsOverBytes is how many more UTF-16 units than bytes the valid
// UTF-8 s has (a negative count), a byte at a time.
func unitsOverBytes(s string) (n int) {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c&0xC0 == 0x80:
			n--
		case c >= 0xF0:
			n++
		}
	}
	return n
}

// utf16LenDecoding is UTF16Len of text that is not valid UTF-8, counted a
// decoded rune at a time.
func utf16LenDecoding(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n++
		}
		n++
	}
	return n
}
