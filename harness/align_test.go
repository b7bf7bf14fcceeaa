package harness

import "testing"

// The verify phase reads each receipt once: the engine's verification
// reads it, and the scripted-alignment check takes its call counts from
// that read instead of reading and parsing the receipt again.
func TestVerificationReadsEachReceiptOnce(t *testing.T) {
	t.Parallel()
	aligned := 0
	runEveryFixture(t, func(t *testing.T, o *Outcome, b *testBench) {
		if !o.Verification.OK {
			t.Fatalf("verification: %v", o.Verification.Mismatches)
		}
		reads := 0
		for d, n := range b.receiptReads {
			reads += n
			if n > 1 && o.Bench != nil && casesNaming(o, d) < n {
				t.Errorf("receipt %s read %d times, named by %d case(s)", d, n, casesNaming(o, d))
			}
		}
		if reads != o.Verification.CheckedReceipts {
			t.Errorf("%d receipt reads for %d checked receipts", reads, o.Verification.CheckedReceipts)
		}
		r := &run{w: o.Workload, o: o}
		for _, cr := range r.contenders() {
			if len(cr.executor) > 0 {
				aligned++
				break
			}
		}
	})
	if aligned == 0 {
		t.Fatal("no fixture declares per-case responses, so no alignment check ran")
	}
}

// casesNaming counts the bench case claims naming receipt d: identical
// runs share one receipt, and the engine checks each claim.
func casesNaming(o *Outcome, d string) int {
	n := 0
	for _, s := range o.Bench.Systems {
		for _, c := range s.Cases {
			if c.ReceiptDigest == d {
				n++
			}
		}
	}
	return n
}
