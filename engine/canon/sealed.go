package canon

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/algal-assay/assay/engine/fault"
)

// EncodeSealed returns the canonical bytes of object m with one more
// string member, key: seal(body), where body is the canonical bytes of m
// itself; it also returns that member's value. It is how a document that
// carries its own digest (a receipt) is sealed and encoded for storage
// from one encoding: the member is spliced into body at its canonical
// place instead of encoding the object a second time. m must not hold key.
func EncodeSealed(m map[string]any, key string, seal func(body []byte) string) (sealed []byte, value string, err error) {
	if _, ok := m[key]; ok {
		return nil, "", &fault.Error{Code: fault.Internal, Offset: -1, Message: fmt.Sprintf("object to seal already holds %q", key)}
	}
	e := encoderPool.Get().(*encoder)
	defer e.release()
	at, before, err := e.membersAround(m, key)
	if err != nil {
		return nil, "", err
	}
	value = seal(e.buf)
	return splice(e.buf, at, before, len(m) > 0, key, value), value, nil
}

// membersAround encodes object m into e.buf and returns where a member
// with key belongs in it: the offset of the first member after it
// (before is true) or of the closing brace.
func (e *encoder) membersAround(m map[string]any, key string) (at int, before bool, err error) {
	e.buf = append(e.buf[:0], '{')
	for k := range m {
		e.keys = append(e.keys, k)
	}
	sortKeys(e.keys)
	n := len(e.keys)
	defer func() { clear(e.keys[:n]); e.keys = e.keys[:0] }()
	at = -1
	for i := range n {
		k := e.keys[i] // re-read: nested objects grow e.keys past len(keys)
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		if at < 0 && CompareKeys(k, key) > 0 {
			at, before = len(e.buf), true
		}
		e.buf = appendString(e.buf, k)
		e.buf = append(e.buf, ':')
		if err := e.value(m[k], 1); err != nil {
			return 0, false, err
		}
	}
	if at < 0 {
		at = len(e.buf)
	}
	e.buf = append(e.buf, '}')
	return at, before, nil
}

// splice inserts the member key: value into the encoded object body at
// offset at, with the comma that separates it from the member after it
// (before) or from the ones before it (others, when it goes last).
func splice(body []byte, at int, before, others bool, key, value string) []byte {
	member := appendString(make([]byte, 0, len(key)+len(value)+8), key)
	member = append(member, ':')
	member = appendString(member, value)
	sealed := make([]byte, 0, len(body)+len(member)+1)
	sealed = append(sealed, body[:at]...)
	switch {
	case before:
		sealed = append(append(sealed, member...), ',')
	case others:
		sealed = append(append(sealed, ','), member...)
	default:
		sealed = append(sealed, member...)
	}
	return append(sealed, body[at:]...)
}

// DigestWithout is the digest of the object whose canonical bytes are
// canonical, taken without its member key: Digest of that object minus
// key, found by hashing the bytes around the member instead of encoding
// anything. It is how a stored document that carries its own digest (a
// receipt) has that digest checked from the bytes it was read as. ok is
// false when the bytes are not an object holding key at its top level.
//
// canonical must be canonical (Encode's output, or bytes ParseCanonical
// found canonical): the digest of other bytes is not the value's.
func DigestWithout(canonical []byte, key string) (digest string, ok bool) {
	from, to, ok := memberSpan(canonical, key)
	if !ok {
		return "", false
	}
	h := sha256.New()
	h.Write(canonical[:from])
	h.Write(canonical[to:])
	var sum [sha256.Size]byte
	var out [digestLen]byte
	copy(out[:], digestPrefix)
	hex.Encode(out[len(digestPrefix):], h.Sum(sum[:0]))
	return string(out[:]), true
}

// memberSpan is where the top-level member key of the canonical object b
// lies, with the comma that joins it to its neighbours: removing b[from:to]
// leaves the canonical bytes of the object without it.
func memberSpan(b []byte, key string) (from, to int, ok bool) {
	if len(b) < 2 || b[0] != '{' || b[len(b)-1] != '}' {
		return 0, 0, false
	}
	var scratch [64]byte
	want := appendString(scratch[:0], key)
	i := 1
	for i < len(b)-1 {
		start := i
		if b[i] != '"' {
			return 0, 0, false
		}
		keyEnd := closingQuote(b, i) + 1
		if keyEnd >= len(b) || b[keyEnd] != ':' {
			return 0, 0, false
		}
		end := valueEnd(b, keyEnd+1)
		if end < 0 || end >= len(b) {
			return 0, 0, false
		}
		if string(b[start:keyEnd]) == string(want) {
			switch {
			case b[end] == ',':
				return start, end + 1, true // the comma after it
			case start > 1:
				return start - 1, end, true // the last member: the comma before it
			}
			return start, end, true // the only member
		}
		if b[end] != ',' {
			return 0, 0, false
		}
		i = end + 1
	}
	return 0, 0, false
}
