package localctx

import (
	"math"
	"slices"
	"unicode/utf16"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
)

// query is one agent.context.local.v1 query as the operations read it:
// its operation, every key it carries (for the closed-key check each
// operation makes with its own allowed keys) and the members an operation
// may read, each as sent and checked where it is read, so the first
// problem reported is the one upstream's reader reports.
type query struct {
	op                                                                       string   // "" when absent or not text
	keys                                                                     []string // in UTF-16 order
	index, offset, limit, startByte, endByte, text, maxResults, maxScanBytes field
}

// field is one member of a query as sent.
type field struct {
	value   any
	present bool
}

// missing reports whether an optional member is absent or null.
func (f field) missing() bool { return !f.present || f.value == nil }

// slot is the field that holds member key (nil for a key no operation
// reads).
func (q *query) slot(key string) *field {
	switch key {
	case "index":
		return &q.index
	case "offset":
		return &q.offset
	case "limit":
		return &q.limit
	case "startByte":
		return &q.startByte
	case "endByte":
		return &q.endByte
	case "query":
		return &q.text
	case "maxResults":
		return &q.maxResults
	case "maxScanBytes":
		return &q.maxScanBytes
	}
	return nil
}

// parseQuery reads a query object into its members.
func parseQuery(v any) (*query, *fault.Error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, ctxInvalid("agent context query must be an object")
	}
	q := &query{keys: utf16Order(m)}
	q.op, _ = m["op"].(string)
	for _, k := range q.keys {
		if f := q.slot(k); f != nil {
			*f = field{value: m[k], present: true}
		}
	}
	return q, nil
}

// utf16Order sorts keys as upstream's reader reports them: by UTF-16 code
// units, so the first unknown key named is the same in both runtimes.
func utf16Order[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int { return slices.Compare(utf16.Encode([]rune(a)), utf16.Encode([]rune(b))) })
	return keys
}

// closedKeys refuses a key outside allowed, the first of keys (in UTF-16
// order) that is.
func closedKeys(keys []string, label string, allowed ...string) *fault.Error {
	for _, k := range keys {
		if !slices.Contains(allowed, k) {
			return ctxInvalid("%s has unknown key %q", label, k)
		}
	}
	return nil
}

// closed refuses a key of the query outside allowed.
func (q *query) closed(label string, allowed ...string) *fault.Error {
	return closedKeys(q.keys, label, allowed...)
}

// integer reads a required integer member in [lo, hi] (name is its name
// in the message).
func (f field) integer(name string, lo, hi int) (int, *fault.Error) {
	return integerIn(f.value, name, lo, hi)
}

// optionalInteger reads an optional integer member in [lo, hi] (def when
// absent or null).
func (f field) optionalInteger(name string, def, lo, hi int) (int, *fault.Error) {
	if f.missing() {
		return def, nil
	}
	return integerIn(f.value, name, lo, hi)
}

// integerIn reads an integral number in [lo, hi].
func integerIn(v any, name string, lo, hi int) (int, *fault.Error) {
	f, ok := v.(float64)
	if !ok || f != math.Trunc(f) || f < float64(lo) || f > float64(hi) {
		return 0, ctxInvalid("%s must be an integer in [%d, %d]", name, lo, hi)
	}
	return int(f), nil
}

// queryBounds bounds a query before it is read: at most 16 JSON nodes,
// nesting depth 2, 8 entries per container, strings of 4096 bytes and 8192
// canonical bytes in all.
func queryBounds(v any) *fault.Error {
	var m queryMeter
	return m.visit(v, 0)
}

// queryMeter counts what queryBounds has visited of a query.
type queryMeter struct{ nodes, size int }

func (m *queryMeter) charge(n int) *fault.Error {
	if m.size += n; m.size > 8192 {
		return ctxLimit("agent context query: exceeds 8192 JSON bytes")
	}
	return nil
}

// chargeString charges a string's canonical bytes (label names it in the
// message when it is over 4096 bytes of text).
func (m *queryMeter) chargeString(s, label string, extra int) *fault.Error {
	b, _ := canon.Encode(s)
	if len(b)-2 > 4096 {
		return ctxLimit("agent context query: %s exceeds 4096 bytes", label)
	}
	return m.charge(len(b) + extra)
}

// container checks an array's or object's depth and length and charges
// its brackets and separators.
func (m *queryMeter) container(what string, n, depth int) *fault.Error {
	if depth >= 2 {
		return ctxLimit("agent context query: exceeds nesting depth 2")
	}
	if n > 8 {
		return ctxLimit("agent context query: %s exceeds 8 entries", what)
	}
	return m.charge(2 + max(n-1, 0))
}

func (m *queryMeter) visit(v any, depth int) *fault.Error {
	if m.nodes++; m.nodes > 16 {
		return ctxLimit("agent context query: exceeds 16 JSON nodes")
	}
	switch x := v.(type) {
	case string:
		return m.chargeString(x, "string", 0)
	case []any:
		return m.visitArray(x, depth)
	case map[string]any:
		return m.visitObject(x, depth)
	}
	b, _ := canon.Encode(v)
	return m.charge(len(b))
}

func (m *queryMeter) visitArray(x []any, depth int) *fault.Error {
	if f := m.container("array", len(x), depth); f != nil {
		return f
	}
	for _, e := range x {
		if f := m.visit(e, depth+1); f != nil {
			return f
		}
	}
	return nil
}

func (m *queryMeter) visitObject(x map[string]any, depth int) *fault.Error {
	if f := m.container("object", len(x), depth); f != nil {
		return f
	}
	for _, k := range utf16Order(x) {
		if f := m.chargeString(k, "key", 1); f != nil {
			return f
		}
		if f := m.visit(x[k], depth+1); f != nil {
			return f
		}
	}
	return nil
}
