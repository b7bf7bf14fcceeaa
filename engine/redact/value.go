package redact

import "maps"

// Count is String that also says how many secrets it replaced (a live
// backend records the count beside an answer it redacted).
func (r *Redactor) Count(s string) (string, int) {
	spans := r.spans([]byte(s))
	if len(spans) == 0 {
		return s, 0
	}
	return string(replace([]byte(s), spans)), len(spans)
}

// Empty reports whether r redacts nothing.
func (r *Redactor) Empty() bool { return r == nil || len(r.forms) == 0 }

// Value returns v (a JSON value: nil, bool, float64, string, []any,
// map[string]any) with every string and object key redacted, and the
// number of replacements. v itself is not modified: a value with nothing
// to redact is returned as it is, one with something is copied along the
// path to each change.
func (r *Redactor) Value(v any) (any, int) {
	if r.Empty() {
		return v, 0
	}
	switch x := v.(type) {
	case string:
		return r.Count(x)
	case []any:
		return r.list(x)
	case map[string]any:
		return r.object(x)
	}
	return v, 0
}

// list redacts a list's elements, copying it at the first change.
func (r *Redactor) list(x []any) (any, int) {
	var out []any
	total := 0
	for i, e := range x {
		ne, n := r.Value(e)
		if n == 0 {
			continue
		}
		if out == nil {
			out = append([]any(nil), x...)
		}
		out[i] = ne
		total += n
	}
	if out == nil {
		return x, 0
	}
	return out, total
}

// object redacts an object's keys and values, copying it at the first
// change.
func (r *Redactor) object(x map[string]any) (any, int) {
	var out map[string]any
	total := 0
	for k, e := range x {
		nk, kn := r.Count(k)
		ne, n := r.Value(e)
		if n+kn == 0 {
			continue
		}
		if out == nil {
			out = maps.Clone(x)
		}
		delete(out, k)
		out[nk] = ne
		total += n + kn
	}
	if out == nil {
		return x, 0
	}
	return out, total
}
