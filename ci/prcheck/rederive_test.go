package prcheck_test

import (
	"context"
	"strings"
	"testing"

	"github.com/algal-assay/assay/ci/artifact"
)

// requireRederived fails t unless the four files the check rendered into
// the artifact at art are, byte for byte, what `assay ci verify`
// re-derives from the artifact's evidence and presentation.
func requireRederived(t *testing.T, art string) {
	t.Helper()
	a, err := artifact.Open(art)
	if err != nil {
		t.Fatalf("the check's artifact does not open: %v", err)
	}
	results, err := a.CheckRendered(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		if !r.OK {
			t.Errorf("%s does not re-derive: %s", r.Path, strings.Join(r.Mismatches, "; "))
		}
	}
}
