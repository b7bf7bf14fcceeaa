package harness

import (
	"path/filepath"
	"testing"

	"github.com/algal-assay/assay/harness/synth"
)

// TestSynthDistinctSystemsWriteNoSharedReceipt runs the synthetic bench
// with and without synth.Spec.Distinct: without it systems i and i+3 run
// the same contender and store byte-identical receipts; with it every
// system runs its own manifest and no receipt is shared, while the
// verdicts are the same.
func TestSynthDistinctSystemsWriteNoSharedReceipt(t *testing.T) {
	t.Parallel()
	const systems, cases = 8, 5
	verdicts := map[bool][]bool{}
	for _, distinct := range []bool{false, true} {
		p, err := synth.Write(t.TempDir(), synth.Spec{Systems: systems, Cases: cases, Triage: filepath.Join("..", "fixtures", "triage"), Distinct: distinct})
		if err != nil {
			t.Fatal(err)
		}
		o, _ := runWorkloadFile(t, p, 0)
		if !o.Verification.OK {
			t.Fatalf("distinct=%v: verification: %v", distinct, o.Verification.Mismatches)
		}
		receipts := map[string]bool{}
		manifests := map[string]bool{}
		for _, s := range o.Bench.Systems {
			manifests[s.ManifestDigest] = true
			for _, c := range s.Cases {
				receipts[c.ReceiptDigest] = true
				verdicts[distinct] = append(verdicts[distinct], c.Passed)
			}
		}
		wantReceipts, wantManifests := 3*cases, 2 // three contenders over two organisms
		if distinct {
			wantReceipts, wantManifests = systems*cases, systems
		}
		if len(receipts) != wantReceipts || len(manifests) != wantManifests {
			t.Errorf("distinct=%v: %d distinct receipts over %d manifests, want %d over %d", distinct, len(receipts), len(manifests), wantReceipts, wantManifests)
		}
	}
	if len(verdicts[false]) != systems*cases || len(verdicts[true]) != len(verdicts[false]) {
		t.Fatalf("verdict counts %d and %d", len(verdicts[false]), len(verdicts[true]))
	}
	for i := range verdicts[false] {
		if verdicts[false][i] != verdicts[true][i] {
			t.Fatalf("verdict %d differs between the shared and distinct systems", i)
		}
	}
}
