package manifest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/canon"
)

// benchSource is a 64-cell pipeline: an input, 30 classifier/fn pairs
// guarded on a label, a fan-in join, an expr verdict and a const whose
// value is padValue.
func benchSource(padValue string) string {
	cells := []string{`{"id":"in","kind":"input","outputs":{"q":"text"}}`}
	var edges []string
	for i := 0; i < 30; i++ {
		cells = append(cells,
			fmt.Sprintf(`{"id":"c%d","kind":"classifier","inputs":{"q":"text"},"prompt":"Classify %d.","output":{"kind":"choice","labels":["bug","feature"],"onMiss":"bug"},"view":{"cells":["in"]},"retry":{"attempts":2}}`, i, i),
			fmt.Sprintf(`{"id":"t%d","kind":"fn","fn":"tag.v1"}`, i))
		edges = append(edges,
			fmt.Sprintf(`{"from":{"cell":"in","port":"q"},"to":{"cell":"c%d","port":"q"}}`, i),
			fmt.Sprintf(`{"from":{"cell":"c%d","port":"out"},"to":{"cell":"t%d","port":"tag"},"guard":{"equals":"bug"}}`, i, i),
			fmt.Sprintf(`{"from":{"cell":"in","port":"q"},"to":{"cell":"t%d","port":"value"}}`, i),
			fmt.Sprintf(`{"from":{"cell":"t%d","port":"value"},"to":{"cell":"j","port":"items"}}`, i))
	}
	cells = append(cells, `{"id":"j","kind":"fn","fn":"join.v1"}`,
		`{"id":"x","kind":"expr","inputs":{"v":"text"},"expr":{"contract":"algal.expr.v1","program":["if",["eq",["get","v"],""],"empty","full"]},"output":{"kind":"choice","labels":["empty","full"]}}`,
		`{"id":"pad","kind":"const","outputs":{"v":{"type":"json","value":`+padValue+`}}}`)
	edges = append(edges, `{"from":{"cell":"j","port":"value"},"to":{"cell":"x","port":"v"}}`)
	return `{"contract":"algal.organism.v1","key":"organism:bench","name":"Bench","cells":[` +
		strings.Join(cells, ",") + `],"edges":[` + strings.Join(edges, ",") + `],
		"interface":{"inputs":{"q":{"cell":"in","port":"q"}},"outputs":{"v":{"cell":"x","port":"out"}}}}`
}

// bench1MiB pads the 64-cell pipeline to just under the 1 MiB bound.
func bench1MiB() string {
	base := len(benchSource("[]"))
	var items []string
	size := base
	for i := 0; size < MaxManifestBytes-2000; i++ {
		item := fmt.Sprintf(`{"n":%d,"text":"%s"}`, i, strings.Repeat("lorem ipsum ", 8))
		items = append(items, item)
		size += len(item) + 1
	}
	return benchSource("[" + strings.Join(items, ",") + "]")
}

func benchAdmit(b *testing.B, src []byte) {
	m, err := Parse(src)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := Compile(m, Options{}); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m, err := Parse(src)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Compile(m, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAdmit64Cells(b *testing.B) {
	src := []byte(benchSource(`{"k":1}`))
	m, err := Parse(src)
	if err != nil {
		b.Fatal(err)
	}
	if len(m.Cells) != 64 {
		b.Fatalf("fixture has %d cells", len(m.Cells))
	}
	benchAdmit(b, src)
}

func BenchmarkAdmit1MiB(b *testing.B) {
	src := []byte(bench1MiB())
	m, err := Parse(src)
	if err != nil {
		b.Fatal(err)
	}
	if len(m.Canonical) < MaxManifestBytes*9/10 || len(m.Canonical) > MaxManifestBytes {
		b.Fatalf("fixture normalizes to %d bytes", len(m.Canonical))
	}
	benchAdmit(b, src)
}

// benchFloor is what any admission must at least do with the same bytes:
// parse them strictly, encode them canonically and hash them.
func benchFloor(b *testing.B, src []byte) {
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		v, err := canon.Parse(src, MaxManifestBytes)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := canon.Digest(v); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFloor64Cells(b *testing.B) { benchFloor(b, []byte(benchSource(`{"k":1}`))) }
func BenchmarkFloor1MiB(b *testing.B)    { benchFloor(b, []byte(bench1MiB())) }
