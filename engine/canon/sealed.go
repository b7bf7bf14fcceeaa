package canon

import (
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
