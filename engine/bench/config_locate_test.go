package bench

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/algal-assay/assay/engine/fault"
)

// A mistake in a config's own fields names the file, the line and column
// of the member at fault and, for an unknown key, the key it was likely
// meant to be.
func TestConfigMistakesLocated(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "typo.config.json")
	doc := `{
  "contract": "algal.bench.config.v1",
  "cases": [{ "id": "t1", "args": {}, "expect": {} }],
  "systems": [
    { "id": "one", "manifest": "one.algal.json", "exectors": {} }
  ]
}
`
	if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadConfig(p)
	e, ok := fault.As(err)
	if !ok {
		t.Fatalf("loaded: %v", err)
	}
	want := p + `:5:50: systems[0]: unknown key "exectors" (did you mean "executors"?)`
	if e.Error() != want {
		t.Errorf("got  %s\nwant %s", e.Error(), want)
	}
}
