package expr

import (
	"bytes"
	"encoding/binary"
	"math"
	"slices"
	"unicode/utf8"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
)

// kindOf names a value's kind the way EXPR_TYPE details do.
func kindOf(v any) string { return exprKinds.Of(v) }

var exprKinds = canon.Names{"null", "bool", "number", "text", "list", "map", "unknown"}

// numLen is the length of f's canonical (JavaScript) rendering.
func numLen(f float64) int {
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		i := int64(f)
		n := 1
		if i < 0 {
			n++
			i = -i
		}
		for i >= 10 {
			i /= 10
			n++
		}
		return n
	}
	var buf [40]byte
	return len(canon.FormatNumber(buf[:0], f))
}

// strLen is the canonical byte length of s including its quotes.
func strLen(s string) int {
	n, _ := scanString(s)
	return n
}

// scanString returns strLen(s) and whether s holds a byte of 0x80 or
// above (so whether its UTF-8 needs checking). Eight bytes are tested at
// a time for the three byte classes that escape (controls below 0x20,
// '"' and '\\'); only a word holding one is counted byte by byte, so
// plain text costs about one step per word.
func scanString(s string) (n int, nonASCII bool) {
	n = 2 + len(s)
	var high uint64
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := binary.LittleEndian.Uint64([]byte(s[i : i+8]))
		high |= w
		if !mayEscape(w) {
			continue
		}
		n += escapeExtra(s[i : i+8])
	}
	for ; i < len(s); i++ {
		c := s[i]
		high |= uint64(c)
		if c < 0x20 || c == '"' || c == '\\' {
			n += escapeExtra(s[i : i+1])
		}
	}
	return n, high&highs != 0
}

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// mayEscape reports whether some byte of w is below 0x20, '"' or '\\'
// (each test is exact: a set high bit marks a byte of the class).
func mayEscape(w uint64) bool {
	quote := w ^ (ones * '"')
	slash := w ^ (ones * '\\')
	return ((w-ones*0x20)&^w|(quote-ones)&^quote|(slash-ones)&^slash)&highs != 0
}

// escapeExtra counts the bytes escaping adds to s over its raw length.
func escapeExtra(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		switch c {
		case '"', '\\', '\b', '\t', '\n', '\f', '\r':
			n++
		default:
			n += 5
		}
	}
	return n
}

// measure returns v's canonical byte size and its deepest position below v
// (a scalar or an empty container is 0; a container is 1 + the deepest of
// its children). v must be a well-formed value.
func measure(v any) (size, deep int) {
	switch x := v.(type) {
	case nil:
		return 4, 0
	case bool:
		if x {
			return 4, 0
		}
		return 5, 0
	case float64:
		return numLen(x), 0
	case string:
		return strLen(x), 0
	case []any:
		return measureList(x)
	case map[string]any:
		return measureObject(x)
	}
	return 0, 0
}

func measureList(x []any) (size, deep int) {
	size = max(2, 1+len(x))
	for _, c := range x {
		s, d := measure(c)
		size += s
		deep = max(deep, d+1)
	}
	return size, deep
}

func measureObject(x map[string]any) (size, deep int) {
	size = max(2, 1+len(x))
	seen := 0
	for k, c := range x {
		s, d := measure(c)
		size += s + strLen(k) + 1
		deep = max(deep, d+1)
		// Stop at the last entry rather than let the iterator scan
		// the map's remaining slots for its end.
		if seen++; seen == len(x) {
			break
		}
	}
	return size, deep
}

// valueDepth is upstream's value_depth: scalars 0, containers 1 + the
// deepest child (an empty container is 1).
func valueDepth(v any) int {
	switch x := v.(type) {
	case []any:
		d := 0
		for _, c := range x {
			d = max(d, valueDepth(c))
		}
		return d + 1
	case map[string]any:
		d, seen := 0, 0
		for _, c := range x {
			d = max(d, valueDepth(c))
			if seen++; seen == len(x) {
				break
			}
		}
		return d + 1
	}
	return 0
}

// countNodes counts every JSON value in v (containers and scalars).
func countNodes(v any) int {
	switch x := v.(type) {
	case []any:
		n := 1
		for _, c := range x {
			n += countNodes(c)
		}
		return n
	case map[string]any:
		n, seen := 1, 0
		for _, c := range x {
			n += countNodes(c)
			if seen++; seen == len(x) {
				break
			}
		}
		return n
	}
	return 1
}

// byteKeys returns m's keys in UTF-8 byte order, the order upstream
// evaluates object fields and admits env values in.
func byteKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// walker is the value-bytes walk: it visits a value in canonical text order,
// failing on the first position deeper than MaxValueDepth, the first
// over-long string or key, over-long list or over-full object, and the
// moment the running canonical size passes MaxValueBytes.
//
// Ambiguity (documented choice): a container adds its brackets and commas
// (2 + n-1) when it is entered, before its children; an object entry adds
// its quoted key and colon just before its value. Per-kind checks precede
// the byte count of the same position. The split only matters for which
// error wins when a value breaks two bounds at once.
type walker struct {
	total int
}

func (w *walker) add(n int) *fault.Error {
	w.total += n
	if w.total > MaxValueBytes {
		return errBounds("value-bytes", MaxValueBytes)
	}
	return nil
}

func (w *walker) walk(v any, depth int) *fault.Error {
	if depth > MaxValueDepth {
		return errBounds("value-depth", MaxValueDepth)
	}
	switch x := v.(type) {
	case string:
		if len(x) > MaxStringBytes {
			return errBounds("string-bytes", MaxStringBytes)
		}
		return w.add(strLen(x))
	case []any:
		return w.walkList(x, depth)
	case map[string]any:
		return w.walkObject(x, depth)
	}
	s, _ := measure(v)
	return w.add(s)
}

func (w *walker) walkList(x []any, depth int) *fault.Error {
	if len(x) > MaxListLen {
		return errBounds("list-len", MaxListLen)
	}
	if err := w.add(max(2, 1+len(x))); err != nil {
		return err
	}
	for _, c := range x {
		if err := w.walk(c, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// walkObject walks an object's entries in UTF-8 key order.
func (w *walker) walkObject(x map[string]any, depth int) *fault.Error {
	if len(x) > MaxObjectKeys {
		return errBounds("object-keys", MaxObjectKeys)
	}
	if err := w.add(max(2, 1+len(x))); err != nil {
		return err
	}
	for _, k := range byteKeys(x) {
		if len(k) > MaxStringBytes {
			return errBounds("string-bytes", MaxStringBytes)
		}
		if err := w.add(strLen(k) + 1); err != nil {
			return err
		}
		if err := w.walk(x[k], depth+1); err != nil {
			return err
		}
	}
	return nil
}

// admit validates a value handed in from outside (a program or env): only
// the six JSON kinds, finite numbers, valid UTF-8. It returns the canonical
// size, stopping early once the size passes limit so that cyclic Go values
// terminate; ok is false for a non-JSON value.
func admit(v any, limit int) (size int, ok bool) {
	a := admitter{limit: limit}
	_, ok = a.visit(v)
	return a.size, ok
}

// admitEnv runs steps 1-4 of the run pipeline on env: key count, canonical
// bytes, depth, then the value-bytes walk of each value at depth 1 in UTF-8
// key order. One pass measures everything; the ordered walk runs only when
// that pass saw a per-kind bound broken, to name the first one.
func admitEnv(env map[string]any) *fault.Error {
	if len(env) > MaxObjectKeys {
		return errBounds("object-keys", MaxObjectKeys)
	}
	a := admitter{limit: MaxEnvBytes}
	depth, ok := a.visit(env)
	if !ok {
		return newErr(CodeParse, "what", "env is not a JSON object")
	}
	if a.size > MaxEnvBytes {
		return errBounds("env-bytes", MaxEnvBytes)
	}
	// depth is the env object's own value_depth: 1 + the deepest value.
	if depth > MaxValueDepth {
		return errBounds("value-depth", MaxValueDepth)
	}
	if a.overKind {
		for _, k := range byteKeys(env) {
			if err := (&walker{}).walk(env[k], 1); err != nil {
				return err
			}
		}
	}
	return nil
}

type admitter struct {
	size, limit int
	// overKind records that some list, object, string or key breaks a
	// per-kind bound, so the ordered walk must run to name the first one.
	overKind bool
}

// visit adds v's canonical size and returns its value_depth; ok is false
// for a non-JSON value. Once the size passes the limit it stops early
// (the caller reports the size bound, so the depth no longer matters).
//
// This is the hot part of Eval for envs of nested records, so a scalar
// is handled here without a further call, and containers stop iterating
// a map once len(m) entries were seen (the iterator would otherwise scan
// the rest of the map's slots just to find its end).
func (a *admitter) visit(v any) (depth int, ok bool) {
	switch x := v.(type) {
	case map[string]any:
		return a.object(x)
	case []any:
		return a.list(x)
	case string:
		n, ok := strSize(x)
		a.size += n
		a.overKind = a.overKind || len(x) > MaxStringBytes
		return 0, ok
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return 0, false
		}
		a.size += numLen(x)
		return 0, true
	case bool:
		a.size += 5
		if x {
			a.size--
		}
		return 0, true
	case nil:
		a.size += 4
		return 0, true
	}
	return 0, false
}

func (a *admitter) list(x []any) (depth int, ok bool) {
	a.overKind = a.overKind || len(x) > MaxListLen
	if len(x) == 0 {
		a.size += 2
		return 1, true
	}
	a.size += 1 + len(x)
	for _, c := range x {
		if a.size > a.limit {
			break
		}
		d, ok := a.visit(c)
		if !ok {
			return 0, false
		}
		depth = max(depth, d)
	}
	return depth + 1, true
}

func (a *admitter) object(x map[string]any) (depth int, ok bool) {
	n := len(x)
	a.overKind = a.overKind || n > MaxObjectKeys
	if n == 0 {
		a.size += 2
		return 1, true
	}
	a.size += 1 + n
	seen := 0
	for k, c := range x {
		ks, ok := strSize(k)
		if !ok {
			return 0, false
		}
		a.overKind = a.overKind || len(k) > MaxStringBytes
		a.size += ks + 1
		if a.size <= a.limit {
			d, ok := a.visit(c)
			if !ok {
				return 0, false
			}
			depth = max(depth, d)
		}
		seen++
		if a.size > a.limit || seen == n {
			break
		}
	}
	return depth + 1, true
}

// strSize is strLen plus the UTF-8 validity check; only text with a
// non-ASCII byte is scanned again for validity.
func strSize(s string) (n int, ok bool) {
	n, nonASCII := scanString(s)
	return n, !nonASCII || utf8.ValidString(s)
}

// equal is structural equality: numbers by value (1 == 1.0, -0 == 0),
// objects key-order-insensitive, different kinds unequal. Strings are
// compared through m.sameText.
func (m *machine) equal(a, b any) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case float64:
		y, ok := b.(float64)
		return ok && x == y
	case string:
		y, ok := b.(string)
		return ok && m.sameText(x, y)
	case []any:
		y, ok := b.([]any)
		return ok && m.equalLists(x, y)
	case map[string]any:
		y, ok := b.(map[string]any)
		return ok && m.equalObjects(x, y)
	}
	return false
}

func (m *machine) equalLists(x, y []any) bool {
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if !m.equal(x[i], y[i]) {
			return false
		}
	}
	return true
}

func (m *machine) equalObjects(x, y map[string]any) bool {
	if len(x) != len(y) {
		return false
	}
	seen := 0
	for k, xv := range x {
		yv, ok := y[k]
		if !ok || !m.equal(xv, yv) {
			return false
		}
		if seen++; seen == len(x) {
			break
		}
	}
	return true
}

func rank(v any) int {
	switch v.(type) {
	case nil:
		return 0
	case bool:
		return 1
	case float64:
		return 2
	case string:
		return 3
	case []any:
		return 4
	}
	return 5
}

// compareTotal is sort's total order: null < bool < number < string < list
// < map; false < true; numbers by value; strings by UTF-16 code units; lists
// elementwise then by length; maps by the bytes of their canonical text.
func (m *machine) compareTotal(a, b any) int {
	ra, rb := rank(a), rank(b)
	if ra != rb {
		return ra - rb
	}
	switch x := a.(type) {
	case bool:
		return boolRank(x) - boolRank(b.(bool))
	case float64:
		return compareNumbers(x, b.(float64))
	case string:
		return m.compareText(x, b.(string))
	case []any:
		return m.compareLists(x, b.([]any))
	case map[string]any:
		xa, _ := canon.Encode(x)
		yb, _ := canon.Encode(b)
		return bytes.Compare(xa, yb)
	}
	return 0
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

func compareNumbers(x, y float64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// compareLists orders lists elementwise, then the shorter first.
func (m *machine) compareLists(x, y []any) int {
	for i := 0; i < len(x) && i < len(y); i++ {
		if c := m.compareTotal(x[i], y[i]); c != 0 {
			return c
		}
	}
	return len(x) - len(y)
}
