package suggest

import "regexp"

// trailingHint is a suggestion a message ends with, as DidYouMean writes
// it: ` (did you mean "fn"?)`.
var trailingHint = regexp.MustCompile(`\s*\((did you mean [^()]*\?)\)\s*$`)

// SplitHint takes the suggestion a message ends with off it: the message
// without it and the suggestion without its parentheses (`did you mean
// "eq"?`); ok is false, and message is returned whole, when it ends with
// none.
func SplitHint(message string) (text, hint string, ok bool) {
	m := trailingHint.FindStringSubmatchIndex(message)
	if m == nil {
		return message, "", false
	}
	return message[:m[0]], message[m[2]:m[3]], true
}
