package canon

import (
	"strconv"
	"strings"
)

// Location is where a field path points in a document's text: byte offsets
// of the deepest member the path reached (its key's opening quote, and its
// value's first byte; the two are equal for an array element), and how
// many steps of the path it reached.
type Location struct {
	Key, Value int
	Matched    int
}

// Locate finds path (object keys and array indices in decimal, outermost
// first) in data, a document Parse accepts. A path that leaves the
// document stops at the deepest member it reached, so an error about a
// missing field points at the object that lacks it. Nothing is allocated
// beyond what skipping a value costs; a document Parse rejects locates
// wherever the scan stopped.
func Locate(data []byte, path ...string) Location {
	p := parser{data: data}
	p.skipSpace()
	loc := Location{Key: p.pos, Value: p.pos}
	for depth, step := range path {
		if p.pos >= len(data) {
			return loc
		}
		switch data[p.pos] {
		case '{':
			key, value, ok := p.member(step, depth)
			if !ok {
				return loc
			}
			loc = Location{Key: key, Value: value, Matched: depth + 1}
		case '[':
			i, err := strconv.Atoi(step)
			if err != nil || i < 0 {
				return loc
			}
			at, ok := p.element(i, depth)
			if !ok {
				return loc
			}
			loc = Location{Key: at, Value: at, Matched: depth + 1}
		default:
			return loc
		}
	}
	return loc
}

// member moves p to the value of the object member named name, the object
// starting at p.pos, and returns the offsets of its key and value.
func (p *parser) member(name string, depth int) (key, value int, ok bool) {
	p.pos++ // '{'
	for {
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return 0, 0, false
		}
		at := p.pos
		k, err := p.key()
		if err != nil {
			return 0, 0, false
		}
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return 0, 0, false
		}
		p.pos++
		p.skipSpace()
		if k == name {
			return at, p.pos, true
		}
		if !p.skip(depth) {
			return 0, 0, false
		}
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != ',' {
			return 0, 0, false
		}
		p.pos++
	}
}

// element moves p to element i of the array starting at p.pos.
func (p *parser) element(i, depth int) (int, bool) {
	p.pos++ // '['
	for n := 0; ; n++ {
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] == ']' {
			return 0, false
		}
		if n == i {
			return p.pos, true
		}
		if !p.skip(depth) {
			return 0, false
		}
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != ',' {
			return 0, false
		}
		p.pos++
	}
}

// skip moves p past one value.
func (p *parser) skip(depth int) bool {
	_, err := p.value(depth + 1)
	return err == nil
}

// LineColumn converts a byte offset into data to a 1-based line and a
// 1-based column counted in characters, as editors count them.
func LineColumn(data []byte, off int) (line, col int) { return lineColumn(data, off) }

// FieldSteps splits a field path as Assay's errors write it: names joined
// by dots and indices in brackets (`systems[0].executors`,
// `output.labels`), where an index may be followed by the quoted id of
// what it indexes (`cells[3] "route"`). Anything else (message text) is
// not a path.
func FieldSteps(s string) ([]string, bool) {
	var steps []string
	for i := 0; i < len(s); {
		switch c := s[i]; {
		case c == '[':
			j := strings.IndexByte(s[i:], ']')
			if j < 2 {
				return nil, false
			}
			n := s[i+1 : i+j]
			if _, err := strconv.Atoi(n); err != nil {
				return nil, false
			}
			steps = append(steps, n)
			i += j + 1
			if strings.HasPrefix(s[i:], ` "`) {
				q, err := strconv.QuotedPrefix(s[i+1:])
				if err != nil {
					return nil, false
				}
				i += 1 + len(q)
			}
		case c == '.' && i > 0:
			i++
			if i == len(s) || s[i] == '.' || s[i] == '[' {
				return nil, false
			}
		default:
			j := i
			for j < len(s) && !strings.ContainsRune(".[] :\"", rune(s[j])) {
				j++
			}
			if j == i {
				return nil, false
			}
			steps = append(steps, s[i:j])
			i = j
		}
	}
	return steps, len(steps) > 0
}

// FieldPosition is the line and column in the JSON file at path of the
// member an error names by its field path and message: the key itself
// for an `unknown key "k"` message, the value otherwise. It is 0, 0 when
// the file no longer reads or the field is no path.
func FieldPosition(path, field, message string) (line, col int) {
	steps, ok := FieldSteps(field)
	if !ok {
		return 0, 0
	}
	data, err := ReadBounded(path, 0)
	if err != nil {
		return 0, 0
	}
	key := false
	if q, ok := strings.CutPrefix(message, "unknown key "); ok {
		if p, err := strconv.QuotedPrefix(q); err == nil {
			if k, err := strconv.Unquote(p); err == nil {
				steps, key = append(steps, k), true
			}
		}
	}
	loc := Locate(data, steps...)
	off := loc.Value
	if key && loc.Matched == len(steps) {
		off = loc.Key
	}
	return LineColumn(data, off)
}
