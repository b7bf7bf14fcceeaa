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
	"maps"
	"math"
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

// bound is the size bound in force for a caller's maxBytes: zero or
// negative, or anything past MaxDocumentBytes, means MaxDocumentBytes.
func bound(maxBytes int) int {
	if maxBytes <= 0 || maxBytes > MaxDocumentBytes {
		return MaxDocumentBytes
	}
	return maxBytes
}

func errAt(code string, off int, format string, a ...any) *fault.Error {
	return &fault.Error{Code: code, Offset: off, HasOffset: off >= 0, Message: fmt.Sprintf(format, a...)}
}

// Parse decodes one strict JSON document. maxBytes bounds the input; zero or
// negative means MaxDocumentBytes. It rejects invalid UTF-8, a leading BOM,
// duplicate object keys, lone surrogate escapes, raw control characters in
// strings, numbers that overflow a double, nesting deeper than MaxDepth and
// anything after the value but white space.
func Parse(data []byte, maxBytes int) (any, error) {
	maxBytes = bound(maxBytes)
	if len(data) > maxBytes {
		return nil, errAt(fault.BudgetExhausted, -1, "document is %d bytes, over the %d-byte bound", len(data), maxBytes)
	}
	v, _, err := parse(data, nil, false)
	return v, err
}

// ParseCanonical is Parse that also reports whether data is exactly the
// canonical encoding of the value (Encode(v) would return data): no white
// space, object keys in canonical order, every escape one Encode writes
// and every number as FormatNumber writes it. It checks as it parses, so
// a reader that needs the canonical bytes of what it parsed (to hash a
// part of them, see DigestWithout) has them without encoding the value.
func ParseCanonical(data []byte, maxBytes int) (v any, canonical bool, err error) {
	maxBytes = bound(maxBytes)
	if len(data) > maxBytes {
		return nil, false, errAt(fault.BudgetExhausted, -1, "document is %d bytes, over the %d-byte bound", len(data), maxBytes)
	}
	return parse(data, nil, true)
}

// parse is Parse after the size check; with check it also tells whether
// data is canonical (see ParseCanonical). release, when set, is told as the
// parse moves on how much of data it will not read again (a mapped file
// hands those pages back).
func parse(data []byte, release func(upto int), check bool) (any, bool, error) {
	if bytes.HasPrefix(data, byteOrderMark) {
		return nil, false, errAt(fault.Parse, 0, "leading byte-order mark")
	}
	t := internPool.Get().(*internTables)
	defer internPool.Put(t)
	t.startAfreshIfFull()
	p := parser{data: data, release: release, names: t.names, values: t.values, check: check}
	p.skipSpace()
	v, err := p.value(0)
	if err != nil {
		return nil, false, err
	}
	p.skipSpace()
	if p.pos != len(data) {
		return nil, false, errAt(fault.Parse, p.pos, "trailing data after the document")
	}
	return v, check && !p.nonCanonical, nil
}

// ParseReader reads at most maxBytes (zero or negative: MaxDocumentBytes)
// from r and parses them; one byte more is a BUDGET_EXHAUSTED rejection, so
// an endless stream never grows memory past the bound.
func ParseReader(r io.Reader, maxBytes int) (any, error) {
	maxBytes = bound(maxBytes)
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
	maxBytes = bound(maxBytes)
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
	// check asks for the key order and number text checks a canonical
	// reading needs (ParseCanonical); nonCanonical is set on the first
	// thing Encode would write otherwise (white space and escapes are
	// noted whatever check says: noting them costs nothing).
	check, nonCanonical bool
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

var byteOrderMark = []byte{0xEF, 0xBB, 0xBF}

// startAfreshIfFull empties tables full of another kind of document's
// strings.
func (t *internTables) startAfreshIfFull() {
	if len(t.names) >= internMaxNames || len(t.values) >= internMaxNames {
		clear(t.names)
		clear(t.values)
	}
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
	for n, i := 1, pos; ; n++ {
		end := valueEnd(p.data, i)
		if end < 0 {
			return -1
		}
		if p.data[end] != ',' {
			return n
		}
		i = end + 1
	}
}

// valueEnd is the offset of the ',', ']' or '}' that ends the value
// starting at d[i] inside an array or object (countRest counts elements
// by it, DigestWithout steps over members by it), or -1 when the text
// ends first. It tracks only strings and nesting, so it is for text the
// parse checks, or has checked, as JSON.
func valueEnd(d []byte, i int) int {
	depth := 0
	for ; i < len(d); i++ {
		switch d[i] {
		case '"':
			i = closingQuote(d, i)
		case '[', '{':
			depth++
		case ']', '}':
			if depth == 0 {
				return i
			}
			depth--
		case ',':
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// closingQuote is the offset of the quote that closes the string opening
// at d[open], or an offset at or past len(d) when the text ends first.
func closingQuote(d []byte, open int) int {
	i := open + 1
	for i < len(d) && d[i] != '"' {
		if d[i] == '\\' {
			i++
		}
		i++
	}
	return i
}

func (p *parser) skipSpace() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
			p.nonCanonical = true
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
	switch p.data[p.pos] {
	case '{':
		return p.object(depth)
	case '[':
		return p.array(depth)
	case '"':
		return p.string()
	case 't', 'f', 'n':
		return p.literal()
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
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

// literals are the words a value may be, by their first byte.
var literals = [256]struct {
	word  string
	value any
}{'t': {"true", true}, 'f': {"false", false}, 'n': {"null", nil}}

// literal reads true, false or null, the word its first byte starts.
func (p *parser) literal() (any, error) {
	l := literals[p.data[p.pos]]
	if rest := p.data[p.pos:]; len(rest) < len(l.word) || string(rest[:len(l.word)]) != l.word {
		return nil, errAt(fault.Parse, p.pos, "invalid literal, expected %s", l.word)
	}
	p.pos += len(l.word)
	return l.value, nil
}

func (p *parser) object(depth int) (any, error) {
	start := p.pos
	p.pos++ // '{'
	m := map[string]any{}
	sized := false
	p.skipSpace()
	if p.accept('}') {
		return m, nil
	}
	prev := ""
	for {
		p.skipSpace()
		if err := p.expectKey(start); err != nil {
			return nil, err
		}
		if !sized && len(m) == bigCollection {
			sized = true
			m = p.resize(m)
		}
		key, v, err := p.memberOf(m, depth)
		if err != nil {
			return nil, err
		}
		if p.check && len(m) > 0 && CompareKeys(prev, key) > 0 {
			p.nonCanonical = true
		}
		prev = key
		m[key] = v
		more, err := p.next(start, '}', "object")
		if err != nil {
			return nil, err
		}
		if !more {
			return m, nil
		}
	}
}

// expectKey checks that an object member's key starts at p.pos.
func (p *parser) expectKey(start int) error {
	switch {
	case p.pos >= len(p.data):
		return errAt(fault.Parse, start, "unterminated object")
	case p.data[p.pos] != '"':
		return errAt(fault.Parse, p.pos, "expected a string key")
	}
	return nil
}

// resize moves a large object, once, into a map of its final size:
// rehashing as it grows would leave its old tables behind.
func (p *parser) resize(m map[string]any) map[string]any {
	rest := p.countRest(p.pos)
	if rest <= 0 {
		return m
	}
	big := make(map[string]any, len(m)+rest)
	maps.Copy(big, m)
	return big
}

// memberOf reads the member of object m starting at p.pos, rejecting a key
// m already holds.
func (p *parser) memberOf(m map[string]any, depth int) (string, any, error) {
	keyAt := p.pos
	key, err := p.key()
	if err != nil {
		return "", nil, err
	}
	if _, dup := m[key]; dup {
		return "", nil, errAt(fault.Parse, keyAt, "duplicate object key %q", key)
	}
	p.skipSpace()
	if !p.accept(':') {
		return "", nil, errAt(fault.Parse, p.pos, "expected ':' after object key")
	}
	p.skipSpace()
	v, err := p.value(depth + 1)
	return key, v, err
}

// next moves p past what follows a collection's element: a comma (more
// is true) or the closing bracket close (more is false, and so is err).
// what names the collection, "object" or "array", in the errors.
func (p *parser) next(start int, close byte, what string) (more bool, err error) {
	p.done()
	p.skipSpace()
	switch {
	case p.pos >= len(p.data):
		return false, errAt(fault.Parse, start, "unterminated %s", what)
	case p.accept(','):
		return true, nil
	case p.accept(close):
		return false, nil
	}
	return false, errAt(fault.Parse, p.pos, "expected ',' or '%c' in %s", close, what)
}

func (p *parser) array(depth int) (any, error) {
	start := p.pos
	p.pos++ // '['
	p.skipSpace()
	if p.accept(']') {
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
			a = p.sized(base)
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
		more, err := p.next(start, ']', "array")
		if err != nil {
			return nil, err
		}
		if !more {
			return p.elements(a, base), nil
		}
	}
}

// sized moves the elements collected on the stack from base into a slice
// with room for the rest of the array, counted ahead; it is nil when the
// text ends first.
func (p *parser) sized(base int) []any {
	rest := p.countRest(p.pos)
	if rest <= 0 {
		return nil
	}
	a := make([]any, bigCollection, bigCollection+rest)
	copy(a, p.stack[base:])
	return a
}

// elements is a finished array: a, or when it was never sized, an exactly
// sized copy of the elements collected on the stack from base.
func (p *parser) elements(a []any, base int) []any {
	if a != nil {
		return a
	}
	a = make([]any, len(p.stack)-base)
	copy(a, p.stack[base:])
	return a
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
	end, err := p.plainEnd()
	if err != nil {
		return nil, "", err
	}
	if end < len(p.data) && p.data[end] == '"' {
		b := p.data[p.pos:end:end]
		p.pos = end + 1
		return b, "", nil
	}
	s, err = p.decodeString(start, end)
	return nil, s, err
}

// decodeString reads the rest of the string that starts at start, its
// text up to end (where p.plainEnd stopped) being plain, into a new
// string with its escapes decoded.
func (p *parser) decodeString(start, end int) (string, error) {
	buf := make([]byte, 0, end-p.pos+16)
	buf = append(buf, p.data[p.pos:end]...)
	p.pos = end
	for p.pos < len(p.data) {
		var err error
		switch c := p.data[p.pos]; {
		case c == '"':
			p.pos++
			return string(buf), nil
		case c < 0x20:
			return "", errAt(fault.Parse, p.pos, "raw control character in string")
		case c == '\\':
			buf, err = p.escape(buf)
		default:
			end, err = p.plainEnd()
			buf = append(buf, p.data[p.pos:end]...)
			p.pos = end
		}
		if err != nil {
			return "", err
		}
	}
	return "", errAt(fault.Parse, start, "unterminated string")
}

// plainEnd is where the run of string text from p.pos that needs no
// decoding (printable ASCII and valid UTF-8, no quote, no backslash) ends.
func (p *parser) plainEnd() (int, error) {
	d := p.data
	i := p.pos
	for i < len(d) && !endsPlain[d[i]] {
		if d[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRune(d[i:])
		if r == utf8.RuneError && size <= 1 {
			return i, errAt(fault.Parse, i, "invalid UTF-8")
		}
		i += size
	}
	return i, nil
}

// endsPlain marks the bytes that end a plain run of string text: the
// closing quote, an escape's backslash and the C0 controls.
var endsPlain = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// shortEscapes maps the letter of each two-character escape to the byte
// it stands for.
var shortEscapes = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

func (p *parser) escape(buf []byte) ([]byte, error) {
	at := p.pos
	if p.pos+1 >= len(p.data) {
		return nil, errAt(fault.Parse, at, "unterminated escape")
	}
	c := p.data[p.pos+1]
	p.pos += 2
	if b := shortEscapes[c]; b != 0 {
		if c == '/' {
			p.nonCanonical = true // Encode writes '/' raw
		}
		return append(buf, b), nil
	}
	if c != 'u' {
		return nil, errAt(fault.Parse, at, "invalid escape \\%c", c)
	}
	r, err := p.unicodeEscape(at)
	if err != nil {
		return nil, err
	}
	if !canonicalUnicodeEscape(p.data[at:p.pos], r) {
		p.nonCanonical = true
	}
	return utf8.AppendRune(buf, r), nil
}

// unicodeEscape reads the hex digits of the \u escape at at, and for a
// high surrogate the low surrogate's escape that must follow it.
func (p *parser) unicodeEscape(at int) (rune, error) {
	r, ok := p.hex4()
	switch {
	case !ok:
		return 0, errAt(fault.Parse, at, "invalid \\u escape")
	case !utf16.IsSurrogate(r):
		return r, nil
	case r >= 0xDC00:
		return 0, errAt(fault.Parse, at, "lone low surrogate \\u%04x", r)
	}
	return p.lowSurrogate(at, r)
}

// lowSurrogate reads the escape of the low surrogate that completes hi,
// whose escape is at at.
func (p *parser) lowSurrogate(at int, hi rune) (rune, error) {
	if !bytes.HasPrefix(p.data[p.pos:], unicodeEscapeMark) {
		return 0, errAt(fault.Parse, at, "lone high surrogate \\u%04x", hi)
	}
	p.pos += 2
	lo, ok := p.hex4()
	if !ok {
		return 0, errAt(fault.Parse, p.pos-2, "invalid \\u escape")
	}
	if lo < 0xDC00 || lo > 0xDFFF {
		return 0, errAt(fault.Parse, at, "high surrogate \\u%04x not followed by a low surrogate", hi)
	}
	return utf16.DecodeRune(hi, lo), nil
}

var unicodeEscapeMark = []byte(`\u`)

// canonicalUnicodeEscape reports whether esc, a \u escape of r, is the one
// Encode writes: only C0 controls without a short form, in lowercase hex.
func canonicalUnicodeEscape(esc []byte, r rune) bool {
	if r >= 0x20 || stringifyEscapes[r] != 0 {
		return false
	}
	var want [6]byte
	return string(esc) == string(append(want[:0], '\\', 'u', '0', '0', hexDigits[r>>4], hexDigits[r&0xF]))
}

func (p *parser) hex4() (rune, bool) {
	if len(p.data)-p.pos < 4 {
		return 0, false
	}
	var r rune
	for _, c := range p.data[p.pos : p.pos+4] {
		v := hexValue[c]
		if v < 0 {
			return 0, false
		}
		r = r<<4 | rune(v)
	}
	p.pos += 4
	return r, true
}

// hexValue is the value of each hex digit, either case, and -1 for any
// other byte.
var hexValue = func() (t [256]int8) {
	for c := range t {
		t[c] = -1
	}
	for v := range int8(16) {
		t["0123456789abcdef"[v]], t["0123456789ABCDEF"[v]] = v, v
	}
	return t
}()

// number scans the JSON number grammar exactly, then converts with
// strconv, which rounds correctly to the nearest double as JavaScript does.
func (p *parser) number() (any, error) {
	start := p.pos
	if err := p.scanNumber(start); err != nil {
		return nil, err
	}
	text := p.data[start:p.pos]
	if n, ok := smallInt(text); ok {
		if n == 0 && len(text) > 1 {
			p.nonCanonical = true // -0 is written 0
		}
		return p.boxInt(n), nil
	}
	f, err := strconv.ParseFloat(string(text), 64)
	if err != nil {
		// ParseFloat only fails here on range: the grammar was checked.
		return nil, errAt(fault.Parse, start, "number %s is not a finite double", text)
	}
	if p.check && !p.nonCanonical {
		var buf [32]byte
		if string(FormatNumber(buf[:0], f)) != string(text) {
			p.nonCanonical = true
		}
	}
	return f, nil
}

// scanNumber moves p past a number's text, checking it against the JSON
// grammar: -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?. Every
// rejection points at the number's start.
func (p *parser) scanNumber(start int) error {
	p.accept('-')
	if !p.accept('0') && p.skipDigits() == 0 {
		return errAt(fault.Parse, start, "invalid number")
	}
	if p.accept('.') && p.skipDigits() == 0 {
		return errAt(fault.Parse, start, "invalid number: digits must follow '.'")
	}
	if p.acceptExponent() && p.skipDigits() == 0 {
		return errAt(fault.Parse, start, "invalid number: exponent has no digits")
	}
	return nil
}

// accept moves p past c when c is the next byte.
func (p *parser) accept(c byte) bool {
	if p.pos < len(p.data) && p.data[p.pos] == c {
		p.pos++
		return true
	}
	return false
}

// acceptExponent moves p past an exponent's marker and sign, if one is
// next.
func (p *parser) acceptExponent() bool {
	if !p.accept('e') && !p.accept('E') {
		return false
	}
	if !p.accept('+') {
		p.accept('-')
	}
	return true
}

// skipDigits moves p past a run of decimal digits and returns its length.
func (p *parser) skipDigits() int {
	from := p.pos
	for p.pos < len(p.data) && isDigit(p.data[p.pos]) {
		p.pos++
	}
	return p.pos - from
}

func isDigit(c byte) bool { return c-'0' < 10 }

// boxInt returns the integer n in an interface, boxed once where that
// pays: the small counts every document is full of share one box for the
// process, and a large document keeps its own table for the rest below
// 65536. Negative numbers (-0 too) are boxed as they come.
func (p *parser) boxInt(n float64) any {
	switch {
	case math.Signbit(n) || n >= float64(len(p.ints)):
		return n
	case n < float64(len(boxedInts)):
		return boxedInts[int(n)]
	case len(p.data) < bigDocument:
		return n
	}
	if p.ints == nil {
		p.ints = new([1 << 16]any)
	}
	b := &p.ints[int(n)]
	if *b == nil {
		*b = n
	}
	return *b
}

// smallInt converts short unsigned-or-negative integer literals without
// strconv; most numbers in manifests and receipts are counts.
func smallInt(b []byte) (float64, bool) {
	digits := bytes.TrimPrefix(b, []byte{'-'})
	if len(digits) == 0 || len(digits) > 15 {
		return 0, false
	}
	var n int64
	for _, c := range digits {
		if !isDigit(c) {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if len(digits) < len(b) {
		return -float64(n), true // "-0" is -0
	}
	return float64(n), true
}

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
