package canon

// Strings returns a list of strings as a JSON array value. A nil or empty
// list gives an empty array, so a field built from it encodes as [],
// never null.
func Strings(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
