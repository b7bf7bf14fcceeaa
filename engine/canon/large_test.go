package canon

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// Large collections are sized ahead (countRest) and streamed encodings
// flush in pieces; neither may change a byte or an error.
func TestLargeCollectionsParseAsSmallOnesDo(t *testing.T) {
	t.Parallel()
	items := func(n int, f func(i int) string) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = f(i)
		}
		return strings.Join(parts, ",")
	}
	big := 3 * bigCollection
	ok := []string{
		"[" + items(big, func(i int) string { return fmt.Sprint(i * 977) }) + "]",
		"[" + items(big, func(i int) string { return fmt.Sprintf(`{"k":"v%d","l":[1,"a,]\"b",{"x":[]}]}`, i%7) }) + "]",
		"{" + items(big, func(i int) string { return fmt.Sprintf(`"key%d":[%d,"}"]`, i, i) }) + "}",
		"[" + items(bigCollection, func(int) string { return "0" }) + "]",
		"[" + items(bigCollection+1, func(int) string { return "-0" }) + "]",
	}
	for _, doc := range ok {
		v, err := Parse([]byte(doc), 0)
		if err != nil {
			t.Fatalf("%.60s...: %v", doc, err)
		}
		enc, _ := Encode(v)
		again, err := Parse(enc, 0)
		if err != nil {
			t.Fatal(err)
		}
		if enc2, _ := Encode(again); !bytes.Equal(enc, enc2) {
			t.Fatalf("%.60s...: encoding is not stable", doc)
		}
	}
	bad := []struct{ doc, msg string }{
		{"[" + items(big, func(int) string { return "1" }) + ",]", "unexpected character"},
		{"[" + items(big, func(int) string { return "1" }) + `,"open`, "unterminated string"},
		{"[" + items(big, func(int) string { return "1" }), "unterminated array"},
		{"{" + items(big, func(i int) string { return fmt.Sprintf(`"k%d":1`, i%(bigCollection+5)) }) + "}", "duplicate object key"},
		{"{" + items(big, func(i int) string { return fmt.Sprintf(`"k%d":1`, i) }), "unterminated object"},
	}
	for _, tc := range bad {
		if _, err := Parse([]byte(tc.doc), 0); err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%.40s...: err %v, want %q", tc.doc, err, tc.msg)
		}
	}
}

func TestStreamedEncodingMatchesEncode(t *testing.T) {
	t.Parallel()
	for _, v := range []any{realisticDoc(80 << 10), map[string]any{"s": strings.Repeat("é\"x", 50000)}, []any{1.5, "a", nil}} {
		want, err := Encode(v)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := Write(&buf, v); err != nil || !bytes.Equal(buf.Bytes(), want) {
			t.Fatalf("Write differs from Encode (%v)", err)
		}
		if d, err := Digest(v); err != nil || d != DigestBytes(want) {
			t.Fatalf("Digest %s, want %s (%v)", d, DigestBytes(want), err)
		}
	}
}
