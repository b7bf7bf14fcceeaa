package canon

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/fault"
)

// mappedDoc is a document past mapFrom and several release steps long,
// with escapes, long strings, big and small numbers and nesting, so every
// kind of value is built from text that is released behind the parse.
func mappedDoc() []byte {
	var b bytes.Buffer
	b.WriteString(`{"records":[`)
	for i := 0; b.Len() < 3*releaseEvery+mapFrom; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":"case-%d","esc":"a\"b\\c\u00e9\ud83d\ude00","n":%d,"f":%d.25,"big":%d,"tags":["x","y%d"],"long":"%s"}`,
			i, i%70000, i, i*1000003, i%3, strings.Repeat("z", i%100))
	}
	b.WriteString(`],"tail":true}`)
	return b.Bytes()
}

// A file parsed through its mapping is the same document as its bytes
// parsed on the heap, to the canonical byte, and its value outlives the
// mapping (no string points into it: reading them after the unmap would
// fault).
func TestMappedReadMatchesParse(t *testing.T) {
	t.Parallel()
	doc := mappedDoc()
	p := filepath.Join(t.TempDir(), "big.json")
	if err := os.WriteFile(p, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	mapped, err := ReadFile(p, 0)
	if err != nil {
		t.Fatal(err)
	}
	heap, err := Parse(doc, 0)
	if err != nil {
		t.Fatal(err)
	}
	a, err := Encode(mapped)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Encode(heap)
	if !bytes.Equal(a, b) {
		t.Fatal("the mapped parse encodes differently from the heap parse")
	}
}

// A syntax error late in a mapped file, after its start was released, is
// located by line and column as on the heap path.
func TestMappedReadLocatesErrors(t *testing.T) {
	t.Parallel()
	doc := mappedDoc()
	doc = append(doc[:len(doc)-1], []byte("\n,}")...)
	p := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(p, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ReadFile(p, 0)
	e, ok := fault.As(err)
	if !ok || e.Code != fault.Parse || e.File != p || e.Line != 2 || e.Column != 2 {
		t.Fatalf("got %v", err)
	}
}

// A file that shrinks under the mapping is IO_FAILED, not a crash.
func TestMappedReadOfShrunkFile(t *testing.T) {
	t.Parallel()
	doc := mappedDoc()
	p := filepath.Join(t.TempDir(), "shrinks.json")
	if err := os.WriteFile(p, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	f, size, _, err := openBounded(p, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := os.Truncate(p, 0); err != nil {
		t.Fatal(err)
	}
	_, err = readMapped(p, f, int(size), 0)
	if e, ok := fault.As(err); !ok || e.Code != fault.IOFailed || !strings.Contains(e.Message, "shrank") {
		t.Fatalf("got %v", err)
	}
}
