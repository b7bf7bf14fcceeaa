package manifest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
)

// FuzzParse: admission never panics, every rejection carries a contract
// code, and an admitted manifest's normalized form normalizes to itself.
func FuzzParse(f *testing.F) {
	f.Add([]byte(remoteInner))
	f.Add([]byte(graphSource("")))
	files, _ := filepath.Glob(filepath.Join("testdata", "invalid", "*.json"))
	for _, p := range files {
		v, err := canon.ReadFile(p, 0)
		if err != nil {
			continue
		}
		if b, err := canon.Encode(v.(map[string]any)["manifest"]); err == nil {
			f.Add(b)
		}
	}
	if dir := os.Getenv("ASSAY_UPSTREAM_DIR"); dir != "" {
		ex, _ := filepath.Glob(filepath.Join(dir, "examples", "*.algal.json"))
		for _, p := range ex {
			if b, err := os.ReadFile(p); err == nil {
				f.Add(b)
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Parse(data)
		if err != nil {
			if fault.CodeOf(err) == "" {
				t.Fatalf("uncoded rejection %T: %v", err, err)
			}
			return
		}
		again, err := Parse(m.Canonical)
		if err != nil || again.Digest != m.Digest {
			t.Fatalf("normalized form does not re-admit to itself: %v", err)
		}
		if _, err := Compile(m, Options{Resolver: MapResolver{}}); err != nil && fault.CodeOf(err) == "" {
			t.Fatalf("uncoded compile rejection %T: %v", err, err)
		}
	})
}
