package expr

import (
	"strings"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
)

var textOps = []*opDef{
	{
		name: "slen", min: 1, max: 1,
		summary: "Length of a string in UTF-16 code units (an emoji counts 2).", example: `["slen", "héllo😀"]`,
		eval: func(m *machine, n *node) (any, *fault.Error) {
			s, err := m.str(n.args[0], n.opName, 0)
			if err != nil {
				return nil, err
			}
			if len(s) >= longString {
				return box(float64(m.longUTF16Len(s))), nil
			}
			return box(float64(canon.UTF16Len(s))), nil
		},
	},
	{
		name: "sconcat", min: 1, max: variadic, cost: "+ the UTF-8 bytes of the result",
		summary: "The strings joined end to end.", example: `["sconcat", "a", "😀", "b"]`,
		evalArgs: func(m *machine, n *node, args []any, _ int) (any, *fault.Error) {
			bytes := 0
			for i, v := range args {
				s, ok := v.(string)
				if !ok {
					return nil, errType(n.opName, i, "string", kindOf(v))
				}
				bytes += len(s)
			}
			if bytes > MaxStringBytes {
				return nil, errBounds("string-bytes", MaxStringBytes)
			}
			if err := m.charge(bytes); err != nil {
				return nil, err
			}
			var b strings.Builder
			b.Grow(bytes)
			for _, v := range args {
				b.WriteString(v.(string))
			}
			return b.String(), nil
		},
	},
	{
		name: "upper", min: 1, max: 1, cost: "+ the UTF-8 bytes of the input",
		summary: "ASCII letters upper-cased; every other character kept.", example: `["upper", "héllo"]`,
		eval: func(m *machine, n *node) (any, *fault.Error) {
			return m.transform(n, func(s string) string { return asciiMap(s, 'a', 'z', 'A'-'a') })
		},
	},
	{
		name: "lower", min: 1, max: 1, cost: "+ the UTF-8 bytes of the input",
		summary: "ASCII letters lower-cased; every other character kept.", example: `["lower", "HÉLLO"]`,
		eval: func(m *machine, n *node) (any, *fault.Error) {
			return m.transform(n, func(s string) string { return asciiMap(s, 'A', 'Z', 'a'-'A') })
		},
	},
	{
		name: "trim", min: 1, max: 1, cost: "+ the UTF-8 bytes of the input",
		summary: `Space, \t, \n, \r, \v and \f removed from both ends.`, example: `["trim", "  hi\n"]`,
		eval: func(m *machine, n *node) (any, *fault.Error) {
			return m.transform(n, func(s string) string { return strings.Trim(s, " \t\n\r\v\f") })
		},
	},
	{
		name: "split", min: 2, max: 2, cost: "+ the UTF-8 bytes of the input, then + the number of parts",
		summary: "[split, s, sep]: the parts of s between non-overlapping seps; an empty sep fails EXPR_ARG.",
		example: `["split", "a,b,,c", ","]`,
		eval: func(m *machine, n *node) (any, *fault.Error) {
			s, sep, err := m.twoStrings(n)
			if err != nil {
				return nil, err
			}
			if sep == "" {
				return nil, newErr(CodeArg, "op", n.opName, "what", "separator must be non-empty")
			}
			if err := m.charge(len(s)); err != nil {
				return nil, err
			}
			parts := strings.SplitN(s, sep, MaxListLen+1)
			if len(parts) > MaxListLen {
				return nil, errBounds("list-len", MaxListLen)
			}
			if err := m.charge(len(parts)); err != nil {
				return nil, err
			}
			// Parts gain two quotes each, so the list can render larger
			// than the walked input string: walk it (only value-bytes can
			// fail, the per-kind and depth bounds hold by construction).
			out := make([]any, len(parts))
			size := 1 + len(parts)
			for i, p := range parts {
				out[i] = p
				size += strLen(p)
			}
			if size > MaxValueBytes {
				return nil, errBounds("value-bytes", MaxValueBytes)
			}
			return out, nil
		},
	},
	{
		name: "join", min: 2, max: 2, cost: "+ the UTF-8 bytes of the result",
		summary: "[join, list, sep]: the list's strings with sep between them.", example: `["join", ["list", "a", "b", "c"], "-"]`,
		eval: func(m *machine, n *node) (any, *fault.Error) {
			l, err := m.list(n.args[0], n.opName, 0)
			if err != nil {
				return nil, err
			}
			sep, err := m.str(n.args[1], n.opName, 1)
			if err != nil {
				return nil, err
			}
			size := 0
			for i, v := range l {
				s, ok := v.(string)
				if !ok {
					return nil, errType(n.opName, i, "string", kindOf(v))
				}
				size += len(s)
			}
			if len(l) > 1 {
				size += len(sep) * (len(l) - 1)
			}
			if size > MaxStringBytes {
				return nil, errBounds("string-bytes", MaxStringBytes)
			}
			if err := m.charge(size); err != nil {
				return nil, err
			}
			var b strings.Builder
			b.Grow(size)
			for i, v := range l {
				if i > 0 {
					b.WriteString(sep)
				}
				b.WriteString(v.(string))
			}
			// A repeated separator can escape to six canonical bytes per
			// UTF-8 byte, so the result needs its own value-bytes walk.
			out := b.String()
			if strLen(out) > MaxValueBytes {
				return nil, errBounds("value-bytes", MaxValueBytes)
			}
			return out, nil
		},
	},
	{
		name: "scontains", min: 2, max: 2, cost: "+ the UTF-8 bytes of the first string",
		summary: "[scontains, s, sub]: whether sub occurs in s.", example: `["scontains", "haystack", "st"]`,
		eval: func(m *machine, n *node) (any, *fault.Error) { return m.search(n, strings.Contains) },
	},
	{
		name: "starts", min: 2, max: 2, cost: "+ the UTF-8 bytes of the first string",
		summary: "[starts, s, prefix]: whether s begins with prefix.", example: `["starts", "haystack", "hay"]`,
		eval: func(m *machine, n *node) (any, *fault.Error) { return m.search(n, strings.HasPrefix) },
	},
	{
		name: "ends", min: 2, max: 2, cost: "+ the UTF-8 bytes of the first string",
		summary: "[ends, s, suffix]: whether s ends with suffix.", example: `["ends", "haystack", "stack"]`,
		eval: func(m *machine, n *node) (any, *fault.Error) { return m.search(n, strings.HasSuffix) },
	},
	{
		name: "toText", min: 1, max: 1, cost: "+ the UTF-8 bytes of the rendering",
		summary: "The value's canonical JSON text.", example: `["toText", {"b": 1, "a": ["list", true, null]}]`,
		eval: func(m *machine, n *node) (any, *fault.Error) {
			v, err := m.eval(n.args[0])
			if err != nil {
				return nil, err
			}
			b, e := canon.Encode(v)
			if e != nil { // values here are JSON within depth 32; cannot happen
				return nil, newErr(CodeParse, "what", "value has no canonical form")
			}
			if err := m.charge(len(b)); err != nil {
				return nil, err
			}
			if len(b) > MaxStringBytes {
				return nil, errBounds("string-bytes", MaxStringBytes)
			}
			return string(b), nil
		},
	},
}

// transform is upper/lower/trim: a string argument, charged its bytes.
func (m *machine) transform(n *node, f func(string) string) (any, *fault.Error) {
	s, err := m.str(n.args[0], n.opName, 0)
	if err != nil {
		return nil, err
	}
	if err := m.charge(len(s)); err != nil {
		return nil, err
	}
	return f(s), nil
}

// search is scontains/starts/ends: two strings, charged the first's bytes.
func (m *machine) search(n *node, f func(s, sub string) bool) (any, *fault.Error) {
	s, sub, err := m.twoStrings(n)
	if err != nil {
		return nil, err
	}
	if err := m.charge(len(s)); err != nil {
		return nil, err
	}
	return f(s, sub), nil
}

// twoStrings reads split and search's operands, argument 0 evaluated and
// checked before argument 1 runs.
func (m *machine) twoStrings(n *node) (a, b string, err *fault.Error) {
	if a, err = m.str(n.args[0], n.opName, 0); err != nil {
		return "", "", err
	}
	if b, err = m.str(n.args[1], n.opName, 1); err != nil {
		return "", "", err
	}
	return a, b, nil
}

// asciiMap shifts ASCII letters in [lo, hi] by delta; every other byte,
// including all of non-ASCII UTF-8, is untouched.
func asciiMap(s string, lo, hi byte, delta int) string {
	i := 0
	for i < len(s) && (s[i] < lo || s[i] > hi) {
		i++
	}
	if i == len(s) {
		return s
	}
	b := []byte(s)
	for ; i < len(b); i++ {
		if b[i] >= lo && b[i] <= hi {
			b[i] = byte(int(b[i]) + delta)
		}
	}
	return string(b)
}
