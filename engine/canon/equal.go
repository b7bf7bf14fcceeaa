package canon

import "math"

// Equal reports whether a and b are JSON values with the same canonical
// bytes: exactly when Encode succeeds on both and gives equal bytes, but
// found by walking the two values side by side, without encoding or
// hashing either. It is how a replayed document is matched against the
// recorded one when they are (as is usual) the same.
func Equal(a, b any) bool { return equal(a, b, 0) }

func equal(a, b any, depth int) bool {
	if depth > MaxDepth {
		return false // Encode refuses it
	}
	switch x := a.(type) {
	case nil, bool, string:
		// Same type and value; a string's escaping is one-to-one.
		return a == b
	case float64:
		y, ok := b.(float64)
		// == also equates 0 and -0, which encode alike; a non-finite
		// number does not encode at all.
		return ok && x == y && !math.IsInf(x, 0)
	case []any:
		y, ok := b.([]any)
		return ok && equalArrays(x, y, depth)
	case map[string]any:
		y, ok := b.(map[string]any)
		return ok && equalObjects(x, y, depth)
	}
	return false // not a JSON value: Encode refuses it
}

func equalArrays(x, y []any, depth int) bool {
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if !equal(x[i], y[i], depth+1) {
			return false
		}
	}
	return true
}

func equalObjects(x, y map[string]any, depth int) bool {
	if len(x) != len(y) {
		return false
	}
	for k, v := range x {
		w, ok := y[k]
		if !ok || !equal(v, w, depth+1) {
			return false
		}
	}
	return true
}
