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
		key, value, ok := p.locateStep(step, depth)
		if !ok {
			return loc
		}
		loc = Location{Key: key, Value: value, Matched: depth + 1}
	}
	return loc
}

// locateStep moves p into the object member or array element that step
// names in the collection starting at p.pos, and returns the offsets of
// its key and value (both the element's for an array).
func (p *parser) locateStep(step string, depth int) (key, value int, ok bool) {
	if p.pos >= len(p.data) {
		return 0, 0, false
	}
	switch p.data[p.pos] {
	case '{':
		return p.member(step, depth)
	case '[':
		i, err := strconv.Atoi(step)
		if err != nil || i < 0 {
			return 0, 0, false
		}
		at, ok := p.element(i, depth)
		return at, at, ok
	}
	return 0, 0, false
}

// member moves p to the value of the object member named name, the object
// starting at p.pos, and returns the offsets of its key and value.
func (p *parser) member(name string, depth int) (key, value int, ok bool) {
	p.pos++ // '{'
	for {
		p.skipSpace()
		at := p.pos
		k, ok := p.memberKey()
		if !ok {
			return 0, 0, false
		}
		if k == name {
			return at, p.pos, true
		}
		if !p.skipElement(depth) {
			return 0, 0, false
		}
	}
}

// memberKey moves p past the key at p.pos and its colon, to the member's
// value.
func (p *parser) memberKey() (string, bool) {
	if p.pos >= len(p.data) || p.data[p.pos] != '"' {
		return "", false
	}
	k, err := p.key()
	if err != nil {
		return "", false
	}
	p.skipSpace()
	if !p.accept(':') {
		return "", false
	}
	p.skipSpace()
	return k, true
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
		if !p.skipElement(depth) {
			return 0, false
		}
	}
}

// skipElement moves p past the value at p.pos and the comma after it,
// reporting false when either is missing.
func (p *parser) skipElement(depth int) bool {
	if !p.skip(depth) {
		return false
	}
	p.skipSpace()
	return p.accept(',')
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
		var step string
		var ok bool
		switch c := s[i]; {
		case c == '[':
			step, i, ok = indexStep(s, i)
		case c == '.' && i > 0:
			i, ok = i+1, nameFollows(s, i+1)
		default:
			step, i, ok = nameStep(s, i)
		}
		if !ok {
			return nil, false
		}
		if step != "" {
			steps = append(steps, step)
		}
	}
	return steps, len(steps) > 0
}

// indexStep reads the index in brackets at s[i] (and the quoted id that
// may follow it), returning its digits and the offset past it.
func indexStep(s string, i int) (step string, next int, ok bool) {
	j := strings.IndexByte(s[i:], ']')
	if j < 2 {
		return "", 0, false
	}
	n := s[i+1 : i+j]
	if _, err := strconv.Atoi(n); err != nil {
		return "", 0, false
	}
	i += j + 1
	if strings.HasPrefix(s[i:], ` "`) {
		q, err := strconv.QuotedPrefix(s[i+1:])
		if err != nil {
			return "", 0, false
		}
		i += 1 + len(q)
	}
	return n, i, true
}

// nameFollows reports whether what follows a dot at s[i] may be a name.
func nameFollows(s string, i int) bool {
	return i < len(s) && s[i] != '.' && s[i] != '['
}

// nameStep reads the name at s[i], returning it and the offset past it.
func nameStep(s string, i int) (step string, next int, ok bool) {
	j := i
	for j < len(s) && !strings.ContainsRune(".[] :\"", rune(s[j])) {
		j++
	}
	return s[i:j], j, j > i
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
	k, key := unknownKeyOf(message)
	if key {
		steps = append(steps, k)
	}
	loc := Locate(data, steps...)
	off := loc.Value
	if key && loc.Matched == len(steps) {
		off = loc.Key
	}
	return LineColumn(data, off)
}

// unknownKeyOf is the key an `unknown key "k"` message names.
func unknownKeyOf(message string) (string, bool) {
	q, ok := strings.CutPrefix(message, "unknown key ")
	if !ok {
		return "", false
	}
	p, err := strconv.QuotedPrefix(q)
	if err != nil {
		return "", false
	}
	k, err := strconv.Unquote(p)
	return k, err == nil
}
