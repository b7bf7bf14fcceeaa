package harness

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/fault"
)

func TestLoadAllRefusesDuplicateNames(t *testing.T) {
	a := writeWorkload(t, "a.bench.yaml", goodBench)
	other := strings.Replace(goodBench, "revision: 2", "revision: 3", 1)
	b := filepath.Join(filepath.Dir(a), "b.bench.yaml")
	if err := os.WriteFile(b, []byte("# same name, other inputs\n"+other), 0o644); err != nil {
		t.Fatal(err)
	}
	unique := filepath.Join(filepath.Dir(a), "c.bench.yaml")
	if err := os.WriteFile(unique, []byte(strings.Replace(goodBench, "name: tiny", "name: tiny-two", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, errs := LoadAll([]string{a, b, unique})
	for i, want := range []struct{ self, other string }{{"a.bench.yaml:1:7", "b.bench.yaml:2:7"}, {"b.bench.yaml:2:7", "a.bench.yaml:1:7"}} {
		if ws[i] != nil || errs[i] == nil {
			t.Fatalf("file %d: loaded despite a shared name (err %v)", i, errs[i])
		}
		msg := errs[i].Error()
		if !strings.Contains(msg, want.self+": name: ") || !strings.Contains(msg, want.other) || !strings.Contains(msg, `"tiny"`) {
			t.Errorf("file %d: error %q should point at %s and name %s", i, msg, want.self, want.other)
		}
		if e, ok := errs[i].(*fault.Error); !ok || e.Code != CodeWorkload {
			t.Errorf("file %d: error %T is not a coded workload error", i, errs[i])
		}
	}
	if ws[2] == nil || errs[2] != nil {
		t.Errorf("a uniquely named workload was refused: %v", errs[2])
	}
}
