package artifact_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/algal-assay/assay/ci/artifact"
	"github.com/algal-assay/assay/ci/diff"
)

// Verifying an artifact and then re-deriving its diff replays each of its
// receipts once: the second pass meets them in the side's memo. The memo
// belongs to the opened artifact, so opening it again starts from
// scratch, and a receipt whose bytes change between the passes is read
// under another digest and never taken from the memo.
func TestArtifactVerifiesEachReceiptOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	art, src := build(t)
	a, err := artifact.Open(art)
	if err != nil {
		t.Fatal(err)
	}
	c, err := a.Verify(ctx, artifact.VerifyOptions{Tree: artifact.GitTree(src.Tree)})
	if err != nil || !c.OK() {
		t.Fatalf("%v %v", err, c.Failures(art))
	}
	ev, _, err := a.Evidence(artifact.Head)
	if err != nil {
		t.Fatal(err)
	}
	before := ev.Store.Verified.Hits()
	d, err := a.Diff(ctx, c, diff.Options{})
	if err != nil || !d.Verdict.Passed {
		t.Fatalf("diff: %v %+v", err, d)
	}
	if ev.Store.Verified.Hits() <= before {
		t.Fatalf("the diff replayed the head's receipts again: memo hits %d before, %d after", before, ev.Store.Verified.Hits())
	}

	again, err := artifact.Open(art)
	if err != nil {
		t.Fatal(err)
	}
	fresh, _, err := again.Evidence(artifact.Head)
	if err != nil {
		t.Fatal(err)
	}
	if fresh.Store.Verified == ev.Store.Verified || fresh.Store.Verified.Hits() != 0 {
		t.Fatal("a second opening of the artifact shares the first one's memo")
	}

	// Rewrite every receipt object of the head's store (same name, another
	// value) after the first verification: the re-derivation must not
	// pass on the memo.
	receipts, _ := filepath.Glob(filepath.Join(art, "head", "store", "runs", "*.json"))
	if len(receipts) == 0 {
		t.Fatal("no receipt objects in the head's store")
	}
	for _, p := range receipts {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var receipt map[string]any
		if err := json.Unmarshal(data, &receipt); err != nil {
			t.Fatal(err)
		}
		receipt["status"] = "forged"
		forged, err := json.Marshal(receipt)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, forged, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if d, err := a.Diff(ctx, c, diff.Options{}); err == nil && d.Verdict.Passed {
		t.Fatal("receipts rewritten after their verification passed the re-derived diff")
	}
}
