package diff_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/algal-assay/assay/ci/diff"
	"github.com/algal-assay/assay/engine/store"
)

// A recording archive keeps each live request body under values/, named
// by its digest: those are counted as request bodies, not reported as
// skipped non-receipts; a values file whose name is not its digest, and
// any other stranger, still is.
func TestReplayArchiveKnowsRequestBodies(t *testing.T) {
	t.Parallel()
	arc := t.TempDir()
	st, err := store.OpenFileStore(arc)
	if err != nil {
		t.Fatal(err)
	}
	for _, body := range []map[string]any{
		{"kind": "agent", "cellId": "route", "prompt": "one"},
		{"kind": "agent", "cellId": "route", "prompt": "two"},
	} {
		if _, err := st.Put(store.Values, body); err != nil {
			t.Fatal(err)
		}
	}
	forged := filepath.Join(arc, "values", strings.Repeat("ab", 32)+".json")
	if err := os.WriteFile(forged, []byte(`{"kind":"agent"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(arc, "notes.json"), []byte(`{"hello":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	tree := t.TempDir()
	d, err := diff.Compute(&diff.Set{}, &diff.Set{}, diff.Options{Replay: &diff.ReplayInput{Archive: arc, BaseTree: tree, HeadTree: tree}})
	if err != nil {
		t.Fatal(err)
	}
	r := d.Replays
	want := []string{"notes.json", "values/" + filepath.Base(forged)}
	if r.Requests != 2 || strings.Join(r.Skipped, ",") != strings.Join(want, ",") {
		t.Fatalf("requests %d, skipped %v; want 2 and %v", r.Requests, r.Skipped, want)
	}
	md := diff.Markdown(d, diff.RenderOptions{})
	if !strings.Contains(md, "2 recorded live request bodies") || !strings.Contains(md, "2 files skipped") {
		t.Fatalf("comment does not say what the archive holds:\n%s", md)
	}
}
