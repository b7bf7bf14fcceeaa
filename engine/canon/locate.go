package canon

import "strconv"

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
