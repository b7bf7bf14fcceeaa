package harness

import (
	"path/filepath"
	"testing"
)

// The verify phase reads each receipt once: the engine's verification
// reads it, and the scripted-alignment check takes its call counts from
// that read instead of reading and parsing the receipt again.
func TestVerificationReadsEachReceiptOnce(t *testing.T) {
	paths, err := Discover(filepath.Join("..", "suites"))
	if err != nil {
		t.Fatal(err)
	}
	aligned := 0
	for _, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			b := newTestBench()
			o, err := runFixture(t, filepath.Base(p), b)
			if err != nil {
				t.Fatal(err)
			}
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
	}
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
