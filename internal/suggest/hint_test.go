package suggest

import "testing"

func TestSplitHintTakesTheTrailingSuggestion(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, text, hint string }{
		{`unknown op "eqq" (did you mean "eq"?)`, `unknown op "eqq"`, `did you mean "eq"?`},
		{`unknown op "eqq"` + DidYouMean("eqq", []string{"eq"}) + "\n", `unknown op "eqq"`, `did you mean "eq"?`},
		{`no hint (here)`, `no hint (here)`, ""},
	} {
		text, hint, ok := SplitHint(c.in)
		if text != c.text || hint != c.hint || ok != (c.hint != "") {
			t.Errorf("SplitHint(%q) = %q, %q, %v", c.in, text, hint, ok)
		}
	}
}
