// Package canon is the identity layer every ALGAL contract hashes: a strict
// JSON parser, the canonical encoder that reproduces upstream's bytes (and so
// upstream's digests), and the sha256 digest token.
//
// JSON values are plain Go values: nil, bool, float64, string, []any and
// map[string]any. Numbers are IEEE-754 doubles, as in JavaScript.
//
// The parser is deliberately stricter than upstream's, which lets the last of
// two duplicate object keys win. Two parsers that disagree on which duplicate
// counts can be made to see different documents behind one digest (a parser
// differential), so Assay rejects duplicates outright; see
// docs/divergences.md.
package canon

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"sync"
	"syscall"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/internal/suggest"
)

// Bounds shared by every document this package reads or writes.
const (
	// MaxDepth is the deepest nesting accepted; the root value is depth 0.
	MaxDepth = 64
	// MaxDocumentBytes caps any single document (64 MiB).
	MaxDocumentBytes = 64 << 20
)

func errAt(code string, off int, format string, a ...any) *fault.Error {
	return &fault.Error{Code: code, Offset: off, HasOffset: off >= 0, Message: fmt.Sprintf(format, a...)}
}

// Parse decodes one strict JSON document. maxBytes bounds the input; zero or
// negative means MaxDocumentBytes. It rejects invalid UTF-8, a leading BOM,
// duplicate object keys, lone surrogate escapes, raw control characters in
// strings, numbers that overflow a double, nesting deeper than MaxDepth and
// anything after the value but white space.
func Parse(data []byte, maxBytes int) (any, error) {
	if maxBytes <= 0 || maxBytes > MaxDocumentBytes {
		maxBytes = MaxDocumentBytes
	}
	if len(data) > maxBytes {
		return nil, errAt(fault.BudgetExhausted, -1, "document is %d bytes, over the %d-byte bound", len(data), maxBytes)
	}
	return parse(data, nil)
}

// parse is Parse after the size check. release, when set, is told as the
// parse moves on how much of data it will not read again (a mapped file
// hands those pages back).
func parse(data []byte, release func(upto int)) (any, error) {
	if len(data) >= 3 && data[0] == 0xEF && data[1] == 0xBB && data[2] == 0xBF {
		return nil, errAt(fault.Parse, 0, "leading byte-order mark")
	}
	t := internPool.Get().(*internTables)
	defer internPool.Put(t)
	if len(t.names) >= internMaxNames || len(t.values) >= internMaxNames {
		// Full of another kind of document's strings: start afresh.
		clear(t.names)
		clear(t.values)
	}
	p := parser{data: data, release: release, names: t.names, values: t.values}
	p.skipSpace()
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.pos != len(data) {
		return nil, errAt(fault.Parse, p.pos, "trailing data after the document")
	}
	return v, nil
}

// ParseReader reads at most maxBytes (zero or negative: MaxDocumentBytes)
// from r and parses them; one byte more is a BUDGET_EXHAUSTED rejection, so
// an endless stream never grows memory past the bound.
func ParseReader(r io.Reader, maxBytes int) (any, error) {
	if maxBytes <= 0 || maxBytes > MaxDocumentBytes {
		maxBytes = MaxDocumentBytes
	}
	data, err := io.ReadAll(io.LimitReader(r, int64(maxBytes)+1))
	if err != nil {
		return nil, &fault.Error{Code: fault.IOFailed, Offset: -1, Message: err.Error()}
	}
	if len(data) > maxBytes {
		return nil, errAt(fault.BudgetExhausted, -1, "document is over the %d-byte bound", maxBytes)
	}
	return Parse(data, maxBytes)
}

// ReadFile admits a bounded input path and parses it. Only regular files are
// read (a symlink to one is fine); a FIFO, device or directory is rejected
// before anything is read, so a hostile path can neither block nor stream
// forever. The size is checked from the descriptor before allocation. A
// large file is parsed through a mapping whose parsed pages are released as
// the parse moves on (readMapped), so its text is never held beside its
// value.
func ReadFile(path string, maxBytes int) (any, error) {
	f, size, maxBytes, err := openBounded(path, maxBytes)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if canMap && size >= mapFrom {
		return readMapped(path, f, int(size), maxBytes)
	}
	return readHeap(path, f, size, maxBytes)
}

// readHeap parses the opened file f from a copy of it on the heap.
func readHeap(path string, f *os.File, size int64, maxBytes int) (any, error) {
	data, err := readOpened(path, f, size, maxBytes)
	if err != nil {
		return nil, err
	}
	v, err := Parse(data, maxBytes)
	if err != nil {
		return nil, InFile(path, data, err)
	}
	return v, nil
}

// InFile locates err, a rejection by Parse of data read from path, in the
// file: its name, and the line and column of the byte offset it names.
func InFile(path string, data []byte, err error) error {
	e, ok := fault.As(err)
	if !ok {
		return err
	}
	located := *e
	located.File = path
	if located.HasOffset {
		// A person reads a file by line and column, not by byte.
		located.Line, located.Column = lineColumn(data, located.Offset)
		located.HasOffset = false
	}
	return &located
}

// lineColumn converts a byte offset into data to a 1-based line and a
// 1-based column counted in characters, as editors count them.
func lineColumn(data []byte, off int) (line, col int) {
	off = min(max(off, 0), len(data))
	before := data[:off]
	start := bytes.LastIndexByte(before, '\n') + 1
	return bytes.Count(before, []byte{'\n'}) + 1, utf8.RuneCount(before[start:]) + 1
}

// ReadBounded returns the bytes of a regular file of at most maxBytes (zero
// or negative: MaxDocumentBytes), with the admission rules of ReadFile.
func ReadBounded(path string, maxBytes int) ([]byte, error) {
	f, size, maxBytes, err := openBounded(path, maxBytes)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readOpened(path, f, size, maxBytes)
}

// openBounded opens a regular file of at most maxBytes (zero or negative:
// MaxDocumentBytes) for ReadBounded and ReadFile, returning it with its
// size and the bound in force.
func openBounded(path string, maxBytes int) (*os.File, int64, int, error) {
	if maxBytes <= 0 || maxBytes > MaxDocumentBytes {
		maxBytes = MaxDocumentBytes
	}
	fail := func(code, format string, a ...any) (*os.File, int64, int, error) {
		return nil, 0, 0, &fault.Error{Code: code, Offset: -1, File: path, Message: fmt.Sprintf(format, a...)}
	}
	st, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, 0, 0, &fault.Error{Code: fault.IOFailed, Offset: -1, File: path, Message: unwrapPathError(err).Error(), Hint: suggest.File("", path)}
		}
		return fail(fault.IOFailed, "%v", unwrapPathError(err))
	}
	if !st.Mode().IsRegular() {
		return fail(fault.IOFailed, "not a regular file (%s)", st.Mode().Type())
	}
	// O_NONBLOCK keeps a file swapped for a FIFO after the Stat from
	// blocking the open; the descriptor is checked again below.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return fail(fault.IOFailed, "%v", unwrapPathError(err))
	}
	st, err = f.Stat()
	if err != nil {
		f.Close()
		return fail(fault.IOFailed, "%v", err)
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return fail(fault.IOFailed, "not a regular file (%s)", st.Mode().Type())
	}
	if st.Size() > int64(maxBytes) {
		f.Close()
		return fail(fault.BudgetExhausted, "file is %d bytes, over the %d-byte bound", st.Size(), maxBytes)
	}
	return f, st.Size(), maxBytes, nil
}

// readOpened reads the file openBounded opened.
func readOpened(path string, f *os.File, size int64, maxBytes int) ([]byte, error) {
	fail := func(code, format string, a ...any) ([]byte, error) {
		return nil, &fault.Error{Code: code, Offset: -1, File: path, Message: fmt.Sprintf(format, a...)}
	}
	// Read into a buffer of the size just checked (one byte more to see
	// growth): io.ReadAll would grow its buffer step by step and leave
	// spans of several times the file's size behind it.
	data := make([]byte, 0, size+1)
	for {
		n, err := f.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if len(data) > maxBytes {
			return fail(fault.BudgetExhausted, "file grew past the %d-byte bound while read", maxBytes)
		}
		if err == io.EOF {
			return data, nil
		}
		if err != nil {
			return fail(fault.IOFailed, "%v", err)
		}
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)] // the file grew: let append pick a size
		}
	}
}

func unwrapPathError(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// parser holds, besides the input, what keeps a large document's value
// close to the size of its text: a scratch stack that array elements are
// collected on before one exactly sized slice is allocated (a slice grown
// by append leaves behind a trail of ever larger spans the heap cannot
// reuse, several times the final size), and interned keys and short
// strings, which repeat in every record of a list.
type parser struct {
	data   []byte
	pos    int
	stack  []any
	names  map[string]string
	values map[string]any
	// ints boxes each integer below 65536 once per parse of a large
	// document (boxedInts covers the smallest for every parse).
	ints *[1 << 16]any
	// release, when set, is called with the offset before which the text
	// is done with, every releaseEvery bytes (see parse).
	release  func(upto int)
	released int
}

// releaseEvery is how far a parse moves between calls of its release.
const releaseEvery = 4 << 20

// done reports progress to release once the parse has moved far enough.
// Only the collections' loops call it: between two elements nothing
// before p.pos is read again, except by countRest, which only reads ahead.
func (p *parser) done() {
	if p.release != nil && p.pos-p.released >= releaseEvery {
		p.released = p.pos
		p.release(p.pos)
	}
}

// internTables are the interning tables of a parse. They are pooled and
// carry over from one parse to the next (strings are immutable, so a
// document may share them with an earlier one): parsing many small
// documents of one shape (a part's receipts) then builds no maps per
// document and finds their keys and short values already allocated.
type internTables struct {
	names  map[string]string
	values map[string]any
}

var internPool = sync.Pool{New: func() any {
	return &internTables{names: make(map[string]string, 64), values: make(map[string]any, 64)}
}}

// Interning bounds: short strings only, and a bounded table, so a document
// of distinct strings costs a lookup each and nothing more.
const (
	internMaxLen   = 32
	internMaxNames = 4096
	// bigCollection is the element count past which a collection's
	// remaining elements are counted ahead, so it is allocated once at
	// its final size.
	bigCollection = 64
)

func (p *parser) intern(b []byte) string {
	if len(b) > internMaxLen {
		return string(b)
	}
	if s, ok := p.names[string(b)]; ok { // no allocation for the lookup
		return s
	}
	s := string(b)
	if p.names == nil {
		p.names = make(map[string]string, 64)
	}
	if len(p.names) < internMaxNames {
		p.names[s] = s
	}
	return s
}

// countRest counts the elements left in the array or object whose next
// element starts at pos, scanning to its closing bracket without building
// anything. It returns -1 when the text ends first; the parse then reports
// the real error.
func (p *parser) countRest(pos int) int {
	d := p.data
	n, depth := 1, 0
	for i := pos; i < len(d); i++ {
		switch d[i] {
		case '"':
			for i++; i < len(d) && d[i] != '"'; i++ {
				if d[i] == '\\' {
					i++
				}
			}
		case '[', '{':
			depth++
		case ']', '}':
			if depth == 0 {
				return n
			}
			depth--
		case ',':
			if depth == 0 {
				n++
			}
		}
	}
	return -1
}

func (p *parser) skipSpace() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *parser) value(depth int) (any, error) {
	if depth > MaxDepth {
		return nil, errAt(fault.BudgetExhausted, p.pos, "nesting deeper than %d", MaxDepth)
	}
	if p.pos >= len(p.data) {
		return nil, errAt(fault.Parse, p.pos, "unexpected end of input")
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"':
		return p.string()
	case c == 't':
		return p.literal("true", true)
	case c == 'f':
		return p.literal("false", false)
	case c == 'n':
		return p.literal("null", nil)
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	default:
		return nil, p.unexpected()
	}
}

func (p *parser) unexpected() error {
	if p.pos >= len(p.data) {
		return errAt(fault.Parse, p.pos, "unexpected end of input")
	}
	r, _ := utf8.DecodeRune(p.data[p.pos:])
	if r == utf8.RuneError {
		return errAt(fault.Parse, p.pos, "invalid UTF-8")
	}
	return errAt(fault.Parse, p.pos, "unexpected character %q", r)
}

func (p *parser) literal(word string, v any) (any, error) {
	if len(p.data)-p.pos < len(word) || string(p.data[p.pos:p.pos+len(word)]) != word {
		return nil, errAt(fault.Parse, p.pos, "invalid literal, expected %s", word)
	}
	p.pos += len(word)
	return v, nil
}

func (p *parser) object(depth int) (any, error) {
	start := p.pos
	p.pos++ // '{'
	m := map[string]any{}
	sized := false
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		return m, nil
	}
	for {
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			if p.pos >= len(p.data) {
				return nil, errAt(fault.Parse, start, "unterminated object")
			}
			return nil, errAt(fault.Parse, p.pos, "expected a string key")
		}
		keyAt := p.pos
		if !sized && len(m) == bigCollection {
			// A large object: rehashing as it grows would leave its old
			// tables behind, so it moves once into a map of its final size.
			sized = true
			if rest := p.countRest(p.pos); rest > 0 {
				big := make(map[string]any, len(m)+rest)
				for k, v := range m {
					big[k] = v
				}
				m = big
			}
		}
		key, err := p.key()
		if err != nil {
			return nil, err
		}
		if _, dup := m[key]; dup {
			return nil, errAt(fault.Parse, keyAt, "duplicate object key %q", key)
		}
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return nil, errAt(fault.Parse, p.pos, "expected ':' after object key")
		}
		p.pos++
		p.skipSpace()
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		m[key] = v
		p.done()
		p.skipSpace()
		if p.pos >= len(p.data) {
			return nil, errAt(fault.Parse, start, "unterminated object")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case '}':
			p.pos++
			return m, nil
		default:
			return nil, errAt(fault.Parse, p.pos, "expected ',' or '}' in object")
		}
	}
}

func (p *parser) array(depth int) (any, error) {
	start := p.pos
	p.pos++ // '['
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		return []any{}, nil
	}
	// Elements go onto the shared stack; past bigCollection the rest are
	// counted and the array is allocated at its final size.
	base := len(p.stack)
	var a []any
	defer func() {
		clear(p.stack[base:])
		p.stack = p.stack[:base]
	}()
	for {
		p.skipSpace()
		if a == nil && len(p.stack)-base == bigCollection {
			if rest := p.countRest(p.pos); rest > 0 {
				a = make([]any, bigCollection, bigCollection+rest)
				copy(a, p.stack[base:])
			}
		}
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		if a != nil {
			a = append(a, v)
		} else {
			p.stack = append(p.stack, v)
		}
		p.done()
		p.skipSpace()
		if p.pos >= len(p.data) {
			return nil, errAt(fault.Parse, start, "unterminated array")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case ']':
			p.pos++
			if a == nil {
				a = make([]any, len(p.stack)-base)
				copy(a, p.stack[base:])
			}
			return a, nil
		default:
			return nil, errAt(fault.Parse, p.pos, "expected ',' or ']' in array")
		}
	}
}

// key reads an object key.
func (p *parser) key() (string, error) {
	b, s, err := p.str()
	if b != nil {
		s = p.intern(b)
	}
	return s, err
}

// string reads a string value. A short one is boxed once per distinct
// text: a boxed string costs a 16-byte allocation of its own.
func (p *parser) string() (any, error) {
	b, s, err := p.str()
	switch {
	case err != nil:
		return nil, err
	case b == nil:
		return s, nil
	case len(b) > internMaxLen:
		return string(b), nil
	}
	if v, ok := p.values[string(b)]; ok {
		return v, nil
	}
	var v any = p.intern(b)
	if p.values == nil {
		p.values = make(map[string]any, 64)
	}
	if len(p.values) < internMaxNames {
		p.values[v.(string)] = v
	}
	return v, nil
}

// str reads a string: b is its bytes in the input when it holds no escape
// (nothing allocated yet), s the decoded string otherwise.
func (p *parser) str() (b []byte, s string, err error) {
	start := p.pos
	p.pos++ // opening quote
	// Fast path: no escapes, all printable ASCII or valid UTF-8.
	i := p.pos
	for i < len(p.data) {
		c := p.data[i]
		if c == '"' {
			b := p.data[p.pos:i:i]
			p.pos = i + 1
			return b, "", nil
		}
		if c == '\\' || c < 0x20 {
			break
		}
		if c < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRune(p.data[i:])
		if r == utf8.RuneError && size <= 1 {
			return nil, "", errAt(fault.Parse, i, "invalid UTF-8")
		}
		i += size
	}
	buf := make([]byte, 0, i-p.pos+16)
	buf = append(buf, p.data[p.pos:i]...)
	p.pos = i
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		switch {
		case c == '"':
			p.pos++
			return nil, string(buf), nil
		case c < 0x20:
			return nil, "", errAt(fault.Parse, p.pos, "raw control character in string")
		case c == '\\':
			var err error
			if buf, err = p.escape(buf); err != nil {
				return nil, "", err
			}
		case c < utf8.RuneSelf:
			buf = append(buf, c)
			p.pos++
		default:
			r, size := utf8.DecodeRune(p.data[p.pos:])
			if r == utf8.RuneError && size <= 1 {
				return nil, "", errAt(fault.Parse, p.pos, "invalid UTF-8")
			}
			buf = append(buf, p.data[p.pos:p.pos+size]...)
			p.pos += size
		}
	}
	return nil, "", errAt(fault.Parse, start, "unterminated string")
}

func (p *parser) escape(buf []byte) ([]byte, error) {
	at := p.pos
	if p.pos+1 >= len(p.data) {
		return nil, errAt(fault.Parse, at, "unterminated escape")
	}
	c := p.data[p.pos+1]
	p.pos += 2
	switch c {
	case '"', '\\', '/':
		return append(buf, c), nil
	case 'b':
		return append(buf, '\b'), nil
	case 'f':
		return append(buf, '\f'), nil
	case 'n':
		return append(buf, '\n'), nil
	case 'r':
		return append(buf, '\r'), nil
	case 't':
		return append(buf, '\t'), nil
	case 'u':
		r, ok := p.hex4()
		if !ok {
			return nil, errAt(fault.Parse, at, "invalid \\u escape")
		}
		if utf16.IsSurrogate(r) {
			if r >= 0xDC00 {
				return nil, errAt(fault.Parse, at, "lone low surrogate \\u%04x", r)
			}
			if p.pos+1 >= len(p.data) || p.data[p.pos] != '\\' || p.data[p.pos+1] != 'u' {
				return nil, errAt(fault.Parse, at, "lone high surrogate \\u%04x", r)
			}
			p.pos += 2
			lo, ok := p.hex4()
			if !ok {
				return nil, errAt(fault.Parse, p.pos-2, "invalid \\u escape")
			}
			if lo < 0xDC00 || lo > 0xDFFF {
				return nil, errAt(fault.Parse, at, "high surrogate \\u%04x not followed by a low surrogate", r)
			}
			r = utf16.DecodeRune(r, lo)
		}
		return utf8.AppendRune(buf, r), nil
	default:
		return nil, errAt(fault.Parse, at, "invalid escape \\%c", c)
	}
}

func (p *parser) hex4() (rune, bool) {
	if len(p.data)-p.pos < 4 {
		return 0, false
	}
	var r rune
	for _, c := range p.data[p.pos : p.pos+4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			return 0, false
		}
	}
	p.pos += 4
	return r, true
}

// number scans the JSON number grammar exactly, then converts with
// strconv, which rounds correctly to the nearest double as JavaScript does.
func (p *parser) number() (any, error) {
	start := p.pos
	d := p.data
	if p.pos < len(d) && d[p.pos] == '-' {
		p.pos++
	}
	switch {
	case p.pos < len(d) && d[p.pos] == '0':
		p.pos++
	case p.pos < len(d) && d[p.pos] >= '1' && d[p.pos] <= '9':
		for p.pos < len(d) && d[p.pos] >= '0' && d[p.pos] <= '9' {
			p.pos++
		}
	default:
		return nil, errAt(fault.Parse, start, "invalid number")
	}
	if p.pos < len(d) && d[p.pos] == '.' {
		p.pos++
		if p.pos >= len(d) || d[p.pos] < '0' || d[p.pos] > '9' {
			return nil, errAt(fault.Parse, start, "invalid number: digits must follow '.'")
		}
		for p.pos < len(d) && d[p.pos] >= '0' && d[p.pos] <= '9' {
			p.pos++
		}
	}
	if p.pos < len(d) && (d[p.pos] == 'e' || d[p.pos] == 'E') {
		p.pos++
		if p.pos < len(d) && (d[p.pos] == '+' || d[p.pos] == '-') {
			p.pos++
		}
		if p.pos >= len(d) || d[p.pos] < '0' || d[p.pos] > '9' {
			return nil, errAt(fault.Parse, start, "invalid number: exponent has no digits")
		}
		for p.pos < len(d) && d[p.pos] >= '0' && d[p.pos] <= '9' {
			p.pos++
		}
	}
	text := d[start:p.pos]
	if n, ok := smallInt(text); ok {
		if n < 0 || n >= float64(len(p.ints)) || (n == 0 && text[0] == '-') {
			return n, nil
		}
		if n < float64(len(boxedInts)) {
			return boxedInts[int(n)], nil
		}
		if len(p.data) < bigDocument {
			return n, nil
		}
		if p.ints == nil {
			p.ints = new([1 << 16]any)
		}
		b := &p.ints[int(n)]
		if *b == nil {
			*b = n
		}
		return *b, nil
	}
	f, err := strconv.ParseFloat(string(text), 64)
	if err != nil {
		// ParseFloat only fails here on range: the grammar was checked.
		return nil, errAt(fault.Parse, start, "number %s is not a finite double", text)
	}
	return f, nil
}

// smallInt converts short unsigned-or-negative integer literals without
// strconv; most numbers in manifests and receipts are counts.
func smallInt(b []byte) (float64, bool) {
	neg := false
	if len(b) > 0 && b[0] == '-' {
		neg = true
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 15 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		if n == 0 {
			return negZero, true
		}
		return float64(-n), true
	}
	return float64(n), true
}

var negZero = func() float64 { z := 0.0; return -z }()

// boxedInts are the small counts documents are full of, boxed once: a
// float64 in an interface otherwise costs an allocation of its own.
var boxedInts = func() (t [1024]any) {
	for i := range t {
		t[i] = float64(i)
	}
	return t
}()

// bigDocument is the input size from which a parse keeps its own table of
// boxed integers (1 MiB of interfaces, worth it only for large inputs).
const bigDocument = 1 << 20
