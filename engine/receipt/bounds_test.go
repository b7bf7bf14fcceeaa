package receipt

import (
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/fault"
)

// receipt.rs validate: via and slot names are bounded at 128 characters;
// cell and run failure messages only by the receipt byte bound, while an
// effect error message stays at 2048.
func TestValidateBoundsMatchNative(t *testing.T) {
	t.Parallel()
	ok := []struct {
		name string
		edit func(r map[string]any)
	}{
		{"via 128", func(r map[string]any) { cellOf(r, "loop")["via"] = strings.Repeat("v", 128) }},
		{"slot name 128", func(r map[string]any) {
			cellOf(r, "bad")["slot"] = map[string]any{"name": strings.Repeat("s", 128), "mode": "read"}
		}},
		{"long cell failure", func(r map[string]any) {
			cellOf(r, "bad")["failure"] = map[string]any{"code": "FN_FAILED", "message": strings.Repeat("m", 5000)}
		}},
		{"long run failure", func(r map[string]any) {
			r["failure"] = map[string]any{"code": "FN_FAILED", "message": strings.Repeat("m", 5000), "path": "bad"}
		}},
	}
	for _, c := range ok {
		r := sample(t)
		c.edit(r)
		if err := Validate(r); err != nil {
			t.Errorf("%s: rejected: %v", c.name, err)
		}
	}
	bad := []struct {
		name string
		edit func(r map[string]any)
	}{
		{"via 129", func(r map[string]any) { cellOf(r, "loop")["via"] = strings.Repeat("v", 129) }},
		{"slot name 129", func(r map[string]any) {
			cellOf(r, "bad")["slot"] = map[string]any{"name": strings.Repeat("s", 129), "mode": "read"}
		}},
		{"effect error 2049", func(r map[string]any) {
			effectOf(r, 1)["error"] = map[string]any{"code": "EFFECT_FAILED", "message": strings.Repeat("m", 2049)}
		}},
		{"depth 65", func(r map[string]any) {
			var v any = "leaf"
			for i := 0; i < 64; i++ {
				v = []any{v}
			}
			// receipt -> cells -> in -> outputs -> t -> 64 lists: the leaf
			// sits at depth 68.
			cellOf(r, "in")["outputs"] = map[string]any{"t": v}
		}},
		{"over a million nodes", func(r map[string]any) {
			cellOf(r, "in")["outputs"] = map[string]any{"t": make([]any, 1_000_000)}
		}},
	}
	for _, c := range bad {
		r := sample(t)
		c.edit(r)
		err := Validate(r)
		if err == nil {
			t.Errorf("%s: accepted", c.name)
		} else if err.(*fault.Error).Code != fault.Parse {
			t.Errorf("%s: code %s", c.name, err.(*fault.Error).Code)
		}
	}
}
