package harness

import (
	"testing"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/receipt"
	"github.com/algal-assay/assay/engine/store"
	"github.com/algal-assay/assay/runrecord"
)

// Every receipt the fixture workloads (suites/*.yaml over fixtures/)
// store decodes into the typed receipt model and encodes back to the same
// canonical bytes: the fixture corpus of the model's round-trip proof
// (engine/vm holds the upstream examples and the tamper tables).
func TestFixtureReceiptsRoundTrip(t *testing.T) {
	t.Parallel()
	total := 0
	runEveryFixture(t, func(t *testing.T, o *Outcome, b *testBench) {
		if o.Status != runrecord.RunComplete {
			t.Fatalf("status %s", o.Status)
		}
		digests, err := b.wb.Store.List(store.Runs)
		if err != nil {
			t.Fatal(err)
		}
		if len(digests) == 0 {
			t.Fatal("stored no receipt")
		}
		for _, d := range digests {
			v, _, err := b.wb.Store.Get(store.Runs, d)
			if err != nil {
				t.Fatal(err)
			}
			r, err := receipt.Decode(v)
			if err != nil {
				t.Fatalf("receipt %s: %v", d, err)
			}
			want, _ := canon.Encode(v)
			got, err := canon.Encode(r.Value())
			if err != nil || string(got) != string(want) {
				t.Errorf("receipt %s re-encodes differently:\n got %.300s\nwant %.300s", d, got, want)
			}
			total++
		}
	})
	t.Logf("%d fixture receipts round-trip byte for byte", total)
}
