package console

import (
	"bytes"
	"testing"
)

func TestWriteErrorIsOneCanonicalLine(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	WriteError(&b, "PARSE_FAILED", "bad input")
	if got, want := b.String(), `{"error":{"code":"PARSE_FAILED","message":"bad input"},"ok":false}`+"\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// A sentence takes the trailing suggestion, or the hint given, onto a
// line of its own, without parentheses.
func TestWriteSentenceSetsTheHintApart(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ message, hint, want string }{
		{`unknown op "eqq" (did you mean "eq"?)`, "", "assay: unknown op \"eqq\" (EXPR_OP)\nhint: did you mean \"eq\"?\n"},
		{"no such file.", " (run `assay init`)", "assay: no such file (EXPR_OP)\nhint: run `assay init`\n"},
		{"plain", "", "assay: plain (EXPR_OP)\n"},
	} {
		var b bytes.Buffer
		WriteSentence(&b, "EXPR_OP", c.message, c.hint)
		if b.String() != c.want {
			t.Errorf("WriteSentence(%q, %q) = %q, want %q", c.message, c.hint, b.String(), c.want)
		}
	}
}
