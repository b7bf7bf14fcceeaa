package yamlsize

import (
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

func parse(t *testing.T, src string) *yaml.Node {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatal(err)
	}
	return &doc
}

func TestCheck(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", 1000)
	tests := []struct {
		name      string
		src       string
		max       int64
		line, col int // 0: fits
	}{
		{"plain document fits its own length", "a: [1, 2, {b: c}]\nd: " + big + "\n", 1030, 0, 0},
		{"one alias of a big string", "a: &s " + big + "\nb: *s\nc: *s\n", 2500, 3, 4},
		{"aliases in a list", "a: &s " + big + "\nl:\n  - *s\n  - *s\n  - *s\n", 3500, 5, 5},
		{"nested aliases (billion laughs)", "a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n", 10000, 4, 17},
		{"aliases that stay small fit", "a: &s hi\nb: [*s, *s, *s]\n", 100, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, n := Check(parse(t, tt.src), tt.max)
			switch {
			case tt.line == 0 && n != nil:
				t.Fatalf("over the bound at %d:%d, want it to fit", n.Line, n.Column)
			case tt.line != 0 && n == nil:
				t.Fatalf("fits, want it over %d bytes at %d:%d", tt.max, tt.line, tt.col)
			case tt.line != 0 && (n.Line != tt.line || n.Column != tt.col):
				t.Fatalf("over the bound at %d:%d, want %d:%d", n.Line, n.Column, tt.line, tt.col)
			}
		})
	}
}

// A document without aliases stands for at most about twice the bytes it
// holds (an implicit null costs a byte it did not write), so a bound of
// twice the file-size bound never trips on one.
func FuzzPlainDocumentFitsItsLength(f *testing.F) {
	f.Add("a: [1, 2, {b: c}]\n")
	f.Add("- - - x\n- ? k\n  : v\n")
	f.Add("s: \"\\x41\\t\"\nb: |\n  line\n  two\n")
	f.Fuzz(func(t *testing.T, src string) {
		if strings.ContainsAny(src, "*&") {
			return
		}
		var doc yaml.Node
		if yaml.Unmarshal([]byte(src), &doc) != nil {
			return
		}
		if _, n := Check(&doc, 2*int64(len(src))+2); n != nil {
			t.Fatalf("%q: a document without aliases went over twice its length at %d:%d", src, n.Line, n.Column)
		}
	})
}
