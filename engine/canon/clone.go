package canon

// Clone returns a deep copy of a JSON value: every object and array is
// new, scalars are shared (they are immutable). It is how a caller edits a
// value it does not own, such as a forged copy of a receipt in a tamper
// test or a constant folded into a compiled program.
func Clone(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = Clone(e)
		}
		return m
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = Clone(e)
		}
		return l
	}
	return v
}
