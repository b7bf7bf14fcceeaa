package main

import (
	"context"
	"strings"
	"testing"

	"github.com/algal-assay/assay/ci/artifact"
	"github.com/algal-assay/assay/ci/prcheck"
)

// requireRederived fails t unless the files `ci pr` rendered into the
// artifact it wrote (args are its arguments) are, byte for byte, what
// `ci verify` re-derives from the artifact's evidence. runCLI calls it
// after every `ci pr`, so each artifact the tests make is held to it.
func requireRederived(t *testing.T, args []string) {
	t.Helper()
	if len(args) < 2 || args[0] != "ci" || args[1] != "pr" {
		return
	}
	dir := "out/" + prcheck.ArtifactName
	for i, a := range args {
		if a == "--artifact" && i+1 < len(args) {
			dir = args[i+1]
		} else if v, ok := strings.CutPrefix(a, "--artifact="); ok {
			dir = v
		}
	}
	if !artifact.IsArtifact(dir) {
		return
	}
	a, err := artifact.Open(dir)
	if err != nil {
		t.Errorf("ci pr wrote an artifact that does not open: %v", err)
		return
	}
	results, err := a.CheckRendered(context.Background())
	if err != nil {
		t.Errorf("re-deriving the artifact's files: %v", err)
		return
	}
	for _, r := range results {
		if !r.OK {
			t.Errorf("ci pr %s: the artifact's %s", strings.Join(args[2:], " "), strings.Join(r.Mismatches, "; "))
		}
	}
}
