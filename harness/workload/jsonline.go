package workload

import (
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// A JSONL case file of 20,000 lines went through yaml.v3 a line at a time
// (issue 19): 1.4 s and 780 MB of allocation to load, nearly three
// quarters of it in yaml.v3's scanner and parser, whose per-document set
// up and token queue cost far more than the nodes they produce. Most
// lines are plain JSON, and for plain JSON the node tree yaml.v3 builds is
// simple to state: flow mappings and sequences, double-quoted strings, and
// plain scalars whose tag is yaml.v3's own resolution of their text. So
// jsonNodes builds that tree directly, and the strict walk (decoder) runs
// on it unchanged: every value, position, check and error message is the
// walk's over the same nodes.
//
// jsonNodes accepts only a line whose tree it is sure of and reports false
// for anything else (YAML flow syntax, comments, tabs, escapes YAML reads
// differently, characters yaml.v3's reader refuses, keys too long to be
// implicit keys, deep nesting): such a line is parsed by yaml.v3, which
// decides what it means or how it is wrong. TestJSONNodesAreYAMLs shows
// over fixtures, generated and fuzzed lines that whatever jsonNodes
// accepts, yaml.v3 parses into the same tree.

// jsonLine parses JSONL lines into yaml.Node trees. Its node and content
// arenas are reused from one line to the next: the walk keeps no node of a
// line once the line's case is read (values, positions and strings are
// copied out of them), so a file's lines cost a few allocations each.
type jsonLine struct {
	src   []byte
	s     string // src as a string: escape-free Values are slices of it
	pos   int
	nodes []yaml.Node
	used  int
	ptrs  []*yaml.Node
	stack []*yaml.Node
	// colPos, col: yaml.v3 counts columns in characters, not bytes.
	colPos, col int
}

// jsonMaxDepth is the deepest nesting jsonNodes builds; deeper lines go to
// yaml.v3 (the walk rejects values nested more than 64 levels below the
// case's fields, so nothing it accepts is lost).
const jsonMaxDepth = 64

// jsonMaxKeyChars bounds a key's characters from its opening quote to
// the ':' after it. yaml.v3 forgets a possible implicit key more than 1024
// characters before the ':' (the YAML limit on implicit keys), which
// reads the line differently; such a line goes to yaml.v3.
const jsonMaxKeyChars = 1000

// parse returns the document node of line, as yaml.Unmarshal would fill
// it, and true; or false when the line is not plain JSON of the kind
// jsonNodes builds. The nodes are valid until the next call.
func (l *jsonLine) parse(line []byte) (*yaml.Node, bool) {
	l.src, l.s, l.pos, l.used, l.ptrs, l.stack = line, string(line), 0, 0, l.ptrs[:0], l.stack[:0]
	l.colPos, l.col = 0, 0
	l.space()
	if l.pos >= len(line) || line[l.pos] != '{' {
		// A line that is not an object is for the walk to reject as
		// yaml.v3 reads it.
		return nil, false
	}
	doc := l.node()
	*doc = yaml.Node{Kind: yaml.DocumentNode, Line: 1, Column: l.column(l.pos) + 1}
	root, ok := l.value(0)
	if !ok {
		return nil, false
	}
	l.space()
	// bytes.Split leaves a CRLF file's '\r' at the end of its lines;
	// yaml.v3 reads it as the line break it is.
	if l.pos < len(line) && line[l.pos] == '\r' && l.pos == len(line)-1 {
		l.pos++
	}
	if l.pos != len(line) {
		return nil, false
	}
	doc.Content = l.content(root)
	return doc, true
}

// node takes a node from the arena. A grown arena leaves earlier nodes
// where they are, still referenced.
func (l *jsonLine) node() *yaml.Node {
	if l.used == len(l.nodes) {
		l.nodes = make([]yaml.Node, max(64, 2*len(l.nodes)))
		l.used = 0
	}
	n := &l.nodes[l.used]
	l.used++
	return n
}

// content stores ns in the content arena.
func (l *jsonLine) content(ns ...*yaml.Node) []*yaml.Node {
	start := len(l.ptrs)
	l.ptrs = append(l.ptrs, ns...)
	return l.ptrs[start:len(l.ptrs):len(l.ptrs)]
}

func (l *jsonLine) space() {
	for l.pos < len(l.src) && l.src[l.pos] == ' ' {
		l.pos++
	}
}

// column is yaml.v3's 0-based column of byte offset p: the characters
// before it. Offsets are asked for in increasing order.
func (l *jsonLine) column(p int) int {
	for ; l.colPos < p; l.colPos++ {
		if l.src[l.colPos]&0xC0 != 0x80 {
			l.col++
		}
	}
	return l.col
}

func (l *jsonLine) value(depth int) (*yaml.Node, bool) {
	if depth > jsonMaxDepth || l.pos >= len(l.src) {
		return nil, false
	}
	start := l.pos
	switch c := l.src[l.pos]; {
	case c == '{':
		return l.object(depth)
	case c == '[':
		return l.array(depth)
	case c == '"':
		v, ok := l.str()
		if !ok {
			return nil, false
		}
		n := l.node()
		*n = yaml.Node{Kind: yaml.ScalarNode, Style: yaml.DoubleQuotedStyle, Tag: "!!str", Value: v, Line: 1, Column: l.column(start) + 1}
		return n, true
	case c == 't', c == 'f', c == 'n':
		for _, word := range jsonWords {
			if len(l.src)-l.pos >= len(word.text) && l.s[l.pos:l.pos+len(word.text)] == word.text {
				l.pos += len(word.text)
				if !l.plainEnds() {
					return nil, false
				}
				n := l.node()
				*n = yaml.Node{Kind: yaml.ScalarNode, Tag: word.tag, Value: word.text, Line: 1, Column: l.column(start) + 1}
				return n, true
			}
		}
		return nil, false
	case c == '-' || c >= '0' && c <= '9':
		if !l.number() || !l.plainEnds() {
			return nil, false
		}
		n := l.node()
		*n = yaml.Node{Kind: yaml.ScalarNode, Value: l.s[start:l.pos], Line: 1, Column: l.column(start) + 1}
		// The tag yaml.v3 resolves the text to, by yaml.v3's own rules
		// (an integer past int64 and uint64 is a float to it, say).
		n.Tag = n.ShortTag()
		return n, true
	}
	return nil, false
}

// jsonWords are JSON's literals with the tags yaml.v3 resolves them to.
var jsonWords = func() []struct{ text, tag string } {
	out := []struct{ text, tag string }{{text: "true"}, {text: "false"}, {text: "null"}}
	for i := range out {
		out[i].tag = (&yaml.Node{Kind: yaml.ScalarNode, Value: out[i].text}).ShortTag()
	}
	return out
}()

// plainEnds reports whether a plain scalar ends where JSON's token does:
// at a flow indicator, after spaces, or at the end of the line. (In YAML
// a plain scalar runs on over characters JSON would stop at.)
func (l *jsonLine) plainEnds() bool {
	if l.pos == len(l.src) {
		return true
	}
	switch l.src[l.pos] {
	case ',', ']', '}', ' ':
		return true
	case '\r':
		return l.pos == len(l.src)-1
	}
	return false
}

// number scans a JSON number.
func (l *jsonLine) number() bool {
	b, p := l.src, l.pos
	digits := func() bool {
		s := p
		for p < len(b) && b[p] >= '0' && b[p] <= '9' {
			p++
		}
		return p > s
	}
	if b[p] == '-' {
		p++
	}
	switch {
	case p < len(b) && b[p] == '0':
		p++
	case !digits():
		return false
	}
	if p < len(b) && b[p] == '.' {
		p++
		if !digits() {
			return false
		}
	}
	if p < len(b) && (b[p] == 'e' || b[p] == 'E') {
		p++
		if p < len(b) && (b[p] == '+' || b[p] == '-') {
			p++
		}
		if !digits() {
			return false
		}
	}
	l.pos = p
	return true
}

func (l *jsonLine) object(depth int) (*yaml.Node, bool) {
	n := l.node()
	*n = yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle, Tag: "!!map", Line: 1, Column: l.column(l.pos) + 1}
	l.pos++ // '{'
	base := len(l.stack)
	l.space()
	if l.pos < len(l.src) && l.src[l.pos] == '}' {
		l.pos++
		return n, true
	}
	for {
		if l.pos >= len(l.src) || l.src[l.pos] != '"' {
			return nil, false
		}
		keyAt := l.column(l.pos)
		k, ok := l.value(depth + 1)
		if !ok {
			return nil, false
		}
		l.space()
		if l.pos >= len(l.src) || l.src[l.pos] != ':' || l.column(l.pos)-keyAt > jsonMaxKeyChars {
			return nil, false
		}
		l.pos++
		l.space()
		v, ok := l.value(depth + 1)
		if !ok {
			return nil, false
		}
		l.stack = append(l.stack, k, v)
		if more, ok := l.separator('}'); !ok {
			return nil, false
		} else if !more {
			return l.close(n, base), true
		}
	}
}

func (l *jsonLine) array(depth int) (*yaml.Node, bool) {
	n := l.node()
	*n = yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle, Tag: "!!seq", Line: 1, Column: l.column(l.pos) + 1}
	l.pos++ // '['
	base := len(l.stack)
	l.space()
	if l.pos < len(l.src) && l.src[l.pos] == ']' {
		l.pos++
		return n, true
	}
	for {
		v, ok := l.value(depth + 1)
		if !ok {
			return nil, false
		}
		l.stack = append(l.stack, v)
		if more, ok := l.separator(']'); !ok {
			return nil, false
		} else if !more {
			return l.close(n, base), true
		}
	}
}

// separator reads what follows a member of an object or array: a comma
// (more is true), or end, its closing bracket; anything else is not JSON
// this reader takes (ok false).
func (l *jsonLine) separator(end byte) (more, ok bool) {
	l.space()
	if l.pos >= len(l.src) {
		return false, false
	}
	switch l.src[l.pos] {
	case ',':
		l.pos++
		l.space()
		return true, true
	case end:
		l.pos++
		return false, true
	}
	return false, false
}

// close gives n the members stacked since base and pops them.
func (l *jsonLine) close(n *yaml.Node, base int) *yaml.Node {
	n.Content = l.content(l.stack[base:]...)
	l.stack = l.stack[:base]
	return n
}

// str scans a double-quoted string and returns its value. It accepts
// only what yaml.v3 reads as JSON does: the escapes both give the same
// meaning (not \/, which yaml.v3 refuses, nor surrogate \u escapes, which
// JSON pairs and yaml.v3 refuses) and raw characters yaml.v3's reader
// takes as they are (no control characters, DEL, C1 controls, NEL, line or
// paragraph separators, byte-order marks or noncharacters U+FFFE/U+FFFF).
func (l *jsonLine) str() (string, bool) {
	b := l.src
	p := l.pos + 1
	start := p
	var buf []byte // the value, once an escape makes it differ from the text
	for p < len(b) {
		c := b[p]
		switch {
		case c == '"':
			l.pos = p + 1
			if buf == nil {
				return l.s[start:p], true
			}
			return string(append(buf, b[start:p]...)), true
		case c == '\\':
			if p+1 >= len(b) {
				return "", false
			}
			buf = append(buf, b[start:p]...)
			var r rune
			switch b[p+1] {
			case '"':
				r = '"'
			case '\\':
				r = '\\'
			case 'b':
				r = '\b'
			case 'f':
				r = '\f'
			case 'n':
				r = '\n'
			case 'r':
				r = '\r'
			case 't':
				r = '\t'
			case 'u':
				if p+6 > len(b) {
					return "", false
				}
				for _, h := range b[p+2 : p+6] {
					var d byte
					switch {
					case h >= '0' && h <= '9':
						d = h - '0'
					case h >= 'a' && h <= 'f':
						d = h - 'a' + 10
					case h >= 'A' && h <= 'F':
						d = h - 'A' + 10
					default:
						return "", false
					}
					r = r<<4 | rune(d)
				}
				if r >= 0xD800 && r <= 0xDFFF {
					return "", false
				}
				p += 4
			default:
				return "", false
			}
			buf = utf8.AppendRune(buf, r)
			p += 2
			start = p
		case c < 0x20 || c == 0x7F:
			return "", false
		case c < utf8.RuneSelf:
			p++
		default:
			r, size := utf8.DecodeRune(b[p:])
			if !yamlTakesRaw(r) || r == utf8.RuneError && size == 1 {
				return "", false
			}
			p += size
		}
	}
	return "", false
}

// yamlTakesRaw reports whether yaml.v3 reads the non-ASCII character r,
// written raw in a double-quoted scalar on one line, as itself.
func yamlTakesRaw(r rune) bool {
	switch {
	case r == 0xFEFF, r == 0x2028, r == 0x2029:
		return false
	case r >= 0xA0 && r <= 0xD7FF, r >= 0xE000 && r <= 0xFFFD, r >= 0x10000 && r <= utf8.MaxRune:
		return true
	}
	return false
}
