package manifest

import (
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/fault"
)

// The four manifest shapes on which upstream's two runtimes disagree
// (docs/divergences.md, "Manifests"): Assay follows the Rust runtime on
// each, so a manifest admitted by both gets Rust's digest, and one Rust
// rejects is rejected here too.
func TestShapesTheRuntimesDisagreeOn(t *testing.T) {
	t.Parallel()
	const head = `{"contract":"algal.organism.v1","key":"organism:shape","name":"Shape","cells":[`
	admit := func(t *testing.T, body string) *Manifest {
		t.Helper()
		m, err := Parse([]byte(head + body))
		if err != nil {
			t.Fatalf("not admitted: %v", err)
		}
		return m
	}
	t.Run("optional and many false are kept", func(t *testing.T) {
		m := admit(t, `{"id":"in","kind":"input","outputs":{"q":{"type":"text","optional":false}}},
			{"id":"join","kind":"agent","inputs":{"xs":{"type":"text","many":false}},"prompt":"p","output":{"kind":"text"}}],
			"edges":[{"from":{"cell":"in","port":"q"},"to":{"cell":"join","port":"xs"}}]}`)
		for _, want := range []string{`"q":{"optional":false,"type":"text"}`, `"xs":{"many":false,"type":"text"}`} {
			if !strings.Contains(string(m.Canonical), want) {
				t.Errorf("normalized manifest lacks %s:\n%s", want, m.Canonical)
			}
		}
	})
	agent := func(view string) string {
		return `{"id":"in","kind":"input","outputs":{"q":"text"}},
			{"id":"a","kind":"agent","inputs":{"q":"text"},"prompt":"p","output":{"kind":"text"},"view":` + view + `}],
			"edges":[{"from":{"cell":"in","port":"q"},"to":{"cell":"a","port":"q"}}]}`
	}
	t.Run("view.graph false is kept", func(t *testing.T) {
		m := admit(t, agent(`{"cells":[{"cell":"in"}],"graph":false}`))
		if !strings.Contains(string(m.Canonical), `"graph":false`) {
			t.Errorf("normalized manifest dropped graph:false:\n%s", m.Canonical)
		}
	})
	t.Run("a bare view cell is wrapped", func(t *testing.T) {
		bare, wrapped := admit(t, agent(`{"cells":["in"]}`)), admit(t, agent(`{"cells":[{"cell":"in"}]}`))
		if !strings.Contains(string(bare.Canonical), `"cells":[{"cell":"in"}]`) || bare.Digest != wrapped.Digest {
			t.Errorf("a bare view cell is not normalized to {\"cell\":...}:\n%s", bare.Canonical)
		}
	})
	t.Run("a guard on a fail edge is rejected", func(t *testing.T) {
		_, err := Parse([]byte(head + `{"id":"in","kind":"input","outputs":{"q":"text"}},{"id":"e","kind":"fn","fn":"echo.v1"},{"id":"h","kind":"fn","fn":"echo.v1"}],
			"edges":[{"from":{"cell":"in","port":"q"},"to":{"cell":"e","port":"value"}},
			{"from":{"cell":"e","port":"value"},"to":{"cell":"h","port":"value"},"on":"fail","guard":{"equals":"x"}}]}`))
		if err == nil || fault.CodeOf(err) != fault.Parse {
			t.Fatalf("a guarded fail edge: %v, want PARSE_FAILED", err)
		}
	})
}
