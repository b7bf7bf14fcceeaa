package canon

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"math"
	"slices"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/algal-assay/assay/engine/fault"
)

// Encode returns the canonical bytes of v: no white space, object keys in
// canonical order (array-index keys numerically first, then UTF-16 code-unit
// order), numbers as JavaScript's Number#toString writes them and strings
// escaped as JSON.stringify escapes them.
func Encode(v any) ([]byte, error) {
	return AppendEncode(nil, v)
}

// AppendEncode appends the canonical bytes of v to dst.
func AppendEncode(dst []byte, v any) ([]byte, error) {
	e := encoder{buf: dst}
	if err := e.value(v, 0); err != nil {
		return nil, err
	}
	return e.buf, nil
}

// Digest is the identity of a value: "sha256:" and the lowercase hex SHA-256
// of its canonical bytes. A large value's bytes stream through the hash in
// pieces, so its digest costs no copy of its encoding.
func Digest(v any) (string, error) {
	e := encoderPool.Get().(*encoder)
	defer e.release()
	e.buf, e.hashing, e.hashed = e.buf[:0], true, false
	if err := e.value(v, 0); err != nil {
		return "", err
	}
	var sum [sha256.Size]byte
	if e.hashed {
		e.h.Write(e.buf)
		copy(sum[:], e.h.Sum(e.sum[:0]))
	} else {
		sum = sha256.Sum256(e.buf)
	}
	var out [digestLen]byte
	copy(out[:], digestPrefix)
	hex.Encode(out[len(digestPrefix):], sum[:])
	return string(out[:]), nil
}

// Write writes the canonical bytes of v to w in pieces of about 64 KiB,
// never holding the whole encoding.
func Write(w io.Writer, v any) error {
	e := encoderPool.Get().(*encoder)
	defer e.release()
	e.buf, e.w, e.werr = e.buf[:0], w, nil
	if err := e.value(v, 0); err != nil {
		return err
	}
	e.flush()
	return e.werr
}

func (e *encoder) release() {
	if cap(e.buf) > 1<<20 { // don't pin huge buffers in the pool
		return
	}
	e.buf, e.w, e.werr, e.hashing, e.hashed = e.buf[:0], nil, nil, false, false
	encoderPool.Put(e)
}

// flushAt is the buffered size past which a streaming encoder writes out.
const flushAt = 64 << 10

func (e *encoder) flush() {
	switch {
	case e.hashing:
		if !e.hashed {
			if e.h == nil {
				e.h = sha256.New()
			}
			e.h.Reset()
			e.hashed = true
		}
		e.h.Write(e.buf)
	case e.werr == nil && len(e.buf) > 0:
		_, e.werr = e.w.Write(e.buf)
	}
	e.buf = e.buf[:0]
}

var encoderPool = sync.Pool{New: func() any { return &encoder{buf: make([]byte, 0, 4096)} }}

// DigestBytes hashes bytes that are already canonical.
func DigestBytes(canonical []byte) string {
	sum := sha256.Sum256(canonical)
	var out [digestLen]byte
	copy(out[:], digestPrefix)
	hex.Encode(out[len(digestPrefix):], sum[:])
	return string(out[:])
}

const (
	digestPrefix = "sha256:"
	digestLen    = len(digestPrefix) + 64
)

// IsDigest reports whether s is exactly a digest token: "sha256:" and 64
// lowercase hex digits. Such a token holds no '/', '.' or '\\', so it can
// never form or escape a path.
func IsDigest(s string) bool {
	if len(s) != digestLen || s[:len(digestPrefix)] != digestPrefix {
		return false
	}
	for i := len(digestPrefix); i < len(s); i++ {
		if !isLowerHex(s[i]) {
			return false
		}
	}
	return true
}

func isLowerHex(c byte) bool { return isDigit(c) || c-'a' < 6 }

// DigestHex returns the 64 hex digits of a valid digest token and false for
// anything else; stores use it to name files.
func DigestHex(s string) (string, bool) {
	if !IsDigest(s) {
		return "", false
	}
	return s[len(digestPrefix):], true
}

type encoder struct {
	buf  []byte
	keys []string // scratch for sorting, reused across objects
	// w, when set, receives buf whenever it passes flushAt (Write);
	// hashing sends it to h instead (Digest), hashed once it has.
	w               io.Writer
	werr            error
	hashing, hashed bool
	h               hash.Hash
	sum             [sha256.Size]byte
}

func (e *encoder) value(v any, depth int) error {
	if depth > MaxDepth {
		return &fault.Error{Code: fault.BudgetExhausted, Offset: -1, Message: fmt.Sprintf("nesting deeper than %d", MaxDepth)}
	}
	if len(e.buf) >= flushAt && (e.w != nil || e.hashing) {
		e.flush()
	}
	switch x := v.(type) {
	case nil:
		e.buf = append(e.buf, "null"...)
	case bool:
		e.buf = strconv.AppendBool(e.buf, x)
	case float64:
		return e.number(x)
	case string:
		e.buf = appendString(e.buf, x)
	case []any:
		return e.array(x, depth)
	case map[string]any:
		return e.object(x, depth)
	default:
		return &fault.Error{Code: fault.Internal, Offset: -1, Message: fmt.Sprintf("value of Go type %T is not JSON", v)}
	}
	return nil
}

func (e *encoder) number(f float64) error {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return &fault.Error{Code: fault.Parse, Offset: -1, Message: "non-finite number"}
	}
	e.buf = FormatNumber(e.buf, f)
	return nil
}

func (e *encoder) array(a []any, depth int) error {
	e.buf = append(e.buf, '[')
	for i, item := range a {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		if err := e.value(item, depth+1); err != nil {
			return err
		}
	}
	e.buf = append(e.buf, ']')
	return nil
}

func (e *encoder) object(m map[string]any, depth int) error {
	// Sort into a window of the shared scratch slice so nested objects
	// don't allocate; the window is released when this object is done.
	base := len(e.keys)
	for k := range m {
		e.keys = append(e.keys, k)
	}
	keys := e.keys[base:]
	sortKeys(keys)
	e.buf = append(e.buf, '{')
	for i := 0; i < len(keys); i++ {
		k := e.keys[base+i] // re-read: nested calls may grow e.keys
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		e.buf = appendString(e.buf, k)
		e.buf = append(e.buf, ':')
		if err := e.value(m[k], depth+1); err != nil {
			e.keys = e.keys[:base]
			return err
		}
	}
	e.buf = append(e.buf, '}')
	clear(e.keys[base:])
	e.keys = e.keys[:base]
	return nil
}

// UnknownKey returns the first key of m, in byte order, that is not among
// allowed. Strict readers use it to reject unknown fields with a message
// that names the same key on every run, whatever Go's map order.
func UnknownKey(m map[string]any, allowed ...string) (string, bool) {
	first, found := "", false
	for k := range m {
		if slices.Contains(allowed, k) || (found && k >= first) {
			continue
		}
		first, found = k, true
	}
	return first, found
}

// SortedKeys returns the keys of m in canonical order (UTF-16 code units).
func SortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sortKeys(keys)
	return keys
}

func sortKeys(keys []string) {
	if len(keys) < 2 {
		return
	}
	slices.SortFunc(keys, CompareKeys)
}

// CompareKeys orders object keys as upstream's canonical form does: keys
// that are array indices come first in numeric order, then every other key
// in UTF-16 code-unit order.
func CompareKeys(a, b string) int {
	ia, aok := arrayIndex(a)
	ib, bok := arrayIndex(b)
	switch {
	case aok && bok:
		return cmp.Compare(ia, ib)
	case aok:
		return -1
	case bok:
		return 1
	}
	return CompareUTF16(a, b)
}

// arrayIndex reports whether k is a canonical array index as JavaScript
// defines it: decimal, no sign, no leading zero, below 2^32-1.
func arrayIndex(k string) (uint64, bool) {
	if len(k) == 0 || len(k) > 10 || (len(k) > 1 && k[0] == '0') {
		return 0, false
	}
	var n uint64
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !isDigit(c) {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	return n, n < math.MaxUint32
}

// CompareUTF16 compares two valid UTF-8 strings by their UTF-16 code units,
// the order JavaScript's string comparison uses. It differs from byte order
// only when a supplementary character (a surrogate pair in UTF-16) meets a
// character in U+E000..U+FFFF.
//
// It allocates nothing and converts nothing: only the runes at the first
// differing byte are decoded.
func CompareUTF16(a, b string) int {
	i := commonPrefix(a, b)
	if i == len(a) || i == len(b) {
		return cmpInt(len(a), len(b))
	}
	if a[i] < utf8.RuneSelf && b[i] < utf8.RuneSelf {
		return cmpInt(int(a[i]), int(b[i]))
	}
	// Back up to the start of the differing runes and compare their first
	// UTF-16 units.
	for i > 0 && !utf8.RuneStart(a[i]) {
		i--
	}
	ra, _ := utf8.DecodeRuneInString(a[i:])
	rb, _ := utf8.DecodeRuneInString(b[i:])
	if la, lb := utf16Lead(ra), utf16Lead(rb); la != lb {
		return cmpInt(int(la), int(lb))
	}
	// Same lead unit: both are supplementary, and their trail units
	// order as the code points do.
	return cmpInt(int(ra), int(rb))
}

// commonPrefix is the length of the longest common byte prefix of a and b.
// Long prefixes are found by halving with string equality, which the
// runtime runs a vector at a time, rather than a byte per step.
func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	lo, hi := 0, n
	if n > 32 {
		if a[:n] == b[:n] {
			return n
		}
		// a[:lo] == b[:lo], and the first difference lies in [lo, hi).
		for hi-lo > 32 {
			mid := lo + (hi-lo)/2
			if a[lo:mid] == b[lo:mid] {
				lo = mid
			} else {
				hi = mid
			}
		}
	}
	for lo < hi && a[lo] == b[lo] {
		lo++
	}
	return lo
}

func utf16Lead(r rune) rune {
	if r >= 0x10000 {
		return 0xD800 + (r-0x10000)>>10
	}
	return r
}

func cmpInt(a, b int) int { return cmp.Compare(a, b) }

const hexDigits = "0123456789abcdef"

// appendString escapes as JSON.stringify does: quote, backslash and the
// C0 controls (short forms where JSON has them, else \u00xx in lowercase);
// everything else, U+2028/U+2029 and '<' included, is written raw.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !endsPlain[c] {
			continue
		}
		dst = append(dst, s[start:i]...)
		if short := stringifyEscapes[c]; short != 0 {
			dst = append(dst, '\\', short)
		} else {
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
		}
		start = i + 1
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// stringifyEscapes is the letter of each two-character escape
// JSON.stringify writes, by the byte it stands for.
var stringifyEscapes = [256]byte{'"': '"', '\\': '\\', '\b': 'b', '\f': 'f', '\n': 'n', '\r': 'r', '\t': 't'}

// FormatNumber appends f as JavaScript's Number#toString writes it. Callers
// must not pass NaN or an infinity.
func FormatNumber(dst []byte, f float64) []byte {
	if f == 0 {
		return append(dst, '0') // -0 too
	}
	// Integers below 2^53 are exact and print as plain digits.
	if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		return strconv.AppendInt(dst, int64(f), 10)
	}
	if f < 0 {
		dst = append(dst, '-')
		f = -f
	}
	var digits [24]byte
	d, n := shortestDigits(&digits, f)
	switch {
	case len(d) <= n && n <= 21:
		return appendZeros(append(dst, d...), n-len(d))
	case 0 < n && n <= 21:
		return append(append(append(dst, d[:n]...), '.'), d[n:]...)
	case -6 < n && n <= 0:
		return append(appendZeros(append(dst, '0', '.'), -n), d...)
	}
	return appendExponential(dst, d, n)
}

// shortestDigits writes into digits the shortest decimal digits that
// round-trip the positive finite f, d1..dk with f = 0.d1..dk × 10^n, and
// returns them with n.
func shortestDigits(digits *[24]byte, f float64) (d []byte, n int) {
	var scratch [32]byte
	// 'e' with precision -1 gives the shortest round-trip digits,
	// d[.ddd]e±XX, which FormatNumber lays out by JavaScript's rules.
	b := strconv.AppendFloat(scratch[:0], f, 'e', -1, 64)
	ePos := bytes.IndexByte(b, 'e')
	d = digits[:0]
	for _, c := range b[:ePos] {
		if c != '.' {
			d = append(d, c)
		}
	}
	exp, _ := strconv.Atoi(string(b[ePos+1:]))
	return d, exp + 1
}

func appendZeros(dst []byte, n int) []byte {
	for range n {
		dst = append(dst, '0')
	}
	return dst
}

// appendExponential lays out 0.d × 10^n as d1[.d2..dk]e±(n-1).
func appendExponential(dst, d []byte, n int) []byte {
	dst = append(dst, d[0])
	if len(d) > 1 {
		dst = append(append(dst, '.'), d[1:]...)
	}
	dst = append(dst, 'e')
	if n-1 >= 0 {
		dst = append(dst, '+')
	}
	return strconv.AppendInt(dst, int64(n-1), 10)
}

// Canonicalize parses data strictly and returns its canonical bytes.
func Canonicalize(data []byte, maxBytes int) ([]byte, error) {
	v, err := Parse(data, maxBytes)
	if err != nil {
		return nil, err
	}
	return Encode(v)
}

// EncodedSize is len(Encode(v)), with Encode's error when it has one,
// counted without writing anything: the length does not depend on key
// order, so no object is sorted, and nothing is allocated. Bound checks
// that keep nothing of the encoding (a port value, an effect's context
// and output, a run's args) use it.
func EncodedSize(v any) (int, error) {
	return encodedSize(v, 0)
}

func encodedSize(v any, depth int) (int, error) {
	if depth > MaxDepth {
		return 0, &fault.Error{Code: fault.BudgetExhausted, Offset: -1, Message: fmt.Sprintf("nesting deeper than %d", MaxDepth)}
	}
	switch x := v.(type) {
	case nil:
		return len("null"), nil
	case bool:
		if x {
			return len("true"), nil
		}
		return len("false"), nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return 0, &fault.Error{Code: fault.Parse, Offset: -1, Message: "non-finite number"}
		}
		var buf [32]byte
		return len(FormatNumber(buf[:0], x)), nil
	case string:
		return stringSize(x), nil
	case []any:
		n := 2 + max(len(x)-1, 0) // brackets and commas
		for _, item := range x {
			s, err := encodedSize(item, depth+1)
			if err != nil {
				return 0, err
			}
			n += s
		}
		return n, nil
	case map[string]any:
		n := 2 + max(len(x)-1, 0) // braces and commas
		for k, item := range x {
			s, err := encodedSize(item, depth+1)
			if err != nil {
				return 0, err
			}
			n += stringSize(k) + 1 + s // key, colon, value
		}
		return n, nil
	}
	return 0, &fault.Error{Code: fault.Internal, Offset: -1, Message: fmt.Sprintf("value of Go type %T is not JSON", v)}
}

// stringSize is the length of appendString's output for s.
func stringSize(s string) int {
	n := len(s) + 2
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case !endsPlain[c]:
		case stringifyEscapes[c] != 0:
			n++ // \x for one byte
		default:
			n += 5 // \u00xx for one byte
		}
	}
	return n
}
