package vm

import (
	"testing"

	"github.com/algal-assay/assay/engine/manifest"
)

// Every cell kind of the manifest's kind table has its VM behaviour: a new
// kind is a table row plus an activation, and this fails until both exist.
func TestEveryKindActivates(t *testing.T) {
	t.Parallel()
	for _, k := range manifest.Kinds() {
		if activations[k] == nil {
			t.Errorf("cell kind %s has no activation", k)
		}
	}
	if len(activations) != len(manifest.Kinds()) {
		t.Errorf("%d activations for %d kinds", len(activations), len(manifest.Kinds()))
	}
}
