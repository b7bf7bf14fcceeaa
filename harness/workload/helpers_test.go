package workload

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func suitePath(name string) string { return filepath.Join("..", "..", "suites", name) }

func loadWorkload(t testing.TB, path string) *Workload {
	t.Helper()
	w, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// writeFlaky writes testdata/flaky-triage.bench.yaml.tmpl, which scripts two systems whose answers differ per repeat:
//
//	case  cheap passes in   frontier passes in
//	a     1, 2, 3           1, 2, 3
//	b     1, 3              1, 2, 3
//	c     2                 1, 2
//	d     -                 1, 2, 3
//
// with gate as its gate: block, and returns its path.
func writeFlaky(t *testing.T, gate string) string {
	t.Helper()
	manifest, err := filepath.Abs(filepath.Join("..", "..", "fixtures", "triage", "triage-single.algal.json"))
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := os.ReadFile(filepath.Join("..", "testdata", "flaky-triage.bench.yaml.tmpl"))
	if err != nil {
		t.Fatal(err)
	}
	src := strings.NewReplacer("MANIFEST", manifest, "GATE", gate).Replace(string(tmpl))
	path := filepath.Join(t.TempDir(), "flaky.bench.yaml")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
