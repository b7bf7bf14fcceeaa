package vm

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/bench"
	"github.com/algal-assay/assay/engine/canon"
)

// verifiedBench runs a 4-system bench whose systems 0 and 2 answer alike
// (scaleConfig's labels), so their receipts are byte-identical, on a file
// store, and returns the workbench, the store directory and the report.
func verifiedBench(t *testing.T, cases int) (*Workbench, string, *bench.Report) {
	t.Helper()
	dir := t.TempDir()
	cfg := scaleConfig(t, dir, 4, cases)
	storeDir := filepath.Join(dir, "store")
	wb, err := NewWorkbench(storeDir)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := bench.Run(context.Background(), cfg, wb, bench.Options{Concurrency: 2})
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range rep.Systems[0].Cases {
		if c.ReceiptDigest != rep.Systems[2].Cases[i].ReceiptDigest {
			t.Fatalf("case %s: systems 0 and 2 stored different receipts; the test needs shared ones", c.ID)
		}
	}
	return wb, storeDir, rep
}

// A workbench with a memo replays each distinct receipt once per trust
// scope: a second system's identical receipts and a second verification of
// the same report are answered from it, and the verification is the same.
func TestVerifiedReceiptsReplayEachDistinctReceiptOnce(t *testing.T) {
	t.Parallel()
	const cases = 5
	wb, _, rep := verifiedBench(t, cases)
	wb.Verified = &VerifiedReceipts{}
	ctx := context.Background()
	for round, wantHits := range []int64{cases, cases + 4*cases} {
		ver, err := bench.Verify(ctx, rep.Value(), wb)
		if err != nil {
			t.Fatal(err)
		}
		if !ver.OK || ver.CheckedReceipts != 4*cases {
			t.Fatalf("round %d: ok=%v checked=%d mismatches=%v", round+1, ver.OK, ver.CheckedReceipts, ver.Mismatches)
		}
		if got := wb.Verified.Hits(); got != wantHits {
			t.Fatalf("round %d: %d replays answered from the memo, want %d", round+1, got, wantHits)
		}
	}
	// Another trust scope (a workbench of its own) starts from scratch.
	other := *wb
	other.Verified = &VerifiedReceipts{}
	if _, err := bench.Verify(ctx, rep.Value(), &other); err != nil {
		t.Fatal(err)
	}
	if got := other.Verified.Hits(); got != cases {
		t.Fatalf("a fresh memo answered %d replays, want %d (system 2's)", got, cases)
	}
}

// The memo is keyed by the digest the bytes were read and checked under,
// never by a file name: a receipt file rewritten after its first
// verification (same name, new bytes: another valid receipt's) fails the
// next verification in the same process, for every case that cites it.
func TestVerifiedReceiptsCatchAReceiptRewrittenAfterItsFirstVerification(t *testing.T) {
	t.Parallel()
	wb, storeDir, rep := verifiedBench(t, 3)
	wb.Verified = &VerifiedReceipts{}
	ctx := context.Background()
	if ver, err := bench.Verify(ctx, rep.Value(), wb); err != nil || !ver.OK {
		t.Fatalf("first verification: %v %+v", err, ver)
	}
	path := func(digest string) string {
		hex, _ := canon.DigestHex(digest)
		return filepath.Join(storeDir, "runs", hex+".json")
	}
	target := rep.Systems[0].Cases[1].ReceiptDigest
	other, err := os.ReadFile(path(rep.Systems[1].Cases[1].ReceiptDigest))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path(target), other, 0o644); err != nil {
		t.Fatal(err)
	}
	ver, err := bench.Verify(ctx, rep.Value(), wb)
	if err != nil {
		t.Fatal(err)
	}
	if ver.OK {
		t.Fatal("a receipt rewritten after its first verification verified again")
	}
	var cited []string
	for _, m := range ver.Mismatches {
		if strings.Contains(m, "receiptDigest") && strings.Contains(m, "does not match its digest") {
			cited = append(cited, m)
		}
	}
	// Systems 0 and 2 both cite the rewritten receipt.
	if len(cited) != 2 || !strings.Contains(cited[0], "systems[system-0].cases[t1]") || !strings.Contains(cited[1], "systems[system-2].cases[t1]") {
		t.Fatalf("mismatches %q, want the two cases citing %s", ver.Mismatches, target)
	}
}
