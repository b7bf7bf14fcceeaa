package harness

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/harness/parts"
	"github.com/algal-assay/assay/harness/rundir"
	"github.com/algal-assay/assay/harness/workload"
)

// A shard verifies the parts it holds and writes each one's verification
// record; a run that takes those reports (`ci merge`) takes a part whose
// report and config are the recorded bytes as verified, reading none of
// its receipts, and writes the whole run's aggregate byte for byte. A
// report edited after its record was written is verified in full and
// fails.
func TestARecordedShardPartIsTakenWithoutReplayingItsReceipts(t *testing.T) {
	t.Parallel()
	w := synthWorkload(t, 3, 800, false)
	whole, _ := runOnTestBench(t, w, 1)
	b := newTestBench()
	root := t.TempDir()
	var dirs []string
	for _, held := range [][]int{{1, 3}, {2, 4}} {
		c, err := runShardParts(context.Background(), w, Options{Runner: b, Store: b, Out: filepath.Join(root, "shard"+string(rune('0'+held[0])), "runs"), Concurrency: 2}, held)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range held {
			if _, err := os.Stat(filepath.Join(c.RunDir, parts.RecordFile(c.Parts[n-1]))); err != nil {
				t.Fatalf("part %d: no verification record: %v", n, err)
			}
		}
		dirs = append(dirs, c.RunDir)
	}
	holder := map[string]string{}
	for i, held := range [][]int{{1, 3}, {2, 4}} {
		for _, n := range held {
			p := whole.Compiled.Parts[n-1]
			holder[p.ReportFile()], holder[parts.RecordFile(p)] = dirs[i], dirs[i]
		}
	}
	src := func(file string) ([]byte, bool, error) {
		d, ok := holder[file]
		if !ok {
			return nil, false, nil
		}
		b, err := os.ReadFile(filepath.Join(d, file))
		if errors.Is(err, os.ErrNotExist) {
			return nil, false, nil
		}
		return b, err == nil, err
	}
	merge := func() *Outcome {
		t.Helper()
		b.mu.Lock()
		b.receiptReads, b.runs = nil, 0
		b.mu.Unlock()
		o, err := Run(context.Background(), w, Options{Runner: b, Store: b, Out: t.TempDir(), Reports: src})
		if err != nil {
			t.Fatal(err)
		}
		if b.runs != 0 {
			t.Fatalf("the merge ran %d cases", b.runs)
		}
		return o
	}
	o := merge()
	if !o.Verification.OK || o.Verification.CheckedReceipts != 3*800 {
		t.Fatalf("verification: ok=%v checked=%d %v", o.Verification.OK, o.Verification.CheckedReceipts, o.Verification.Mismatches)
	}
	if n := len(b.receiptReads); n != 0 {
		t.Fatalf("the merge read %d receipts of recorded parts", n)
	}
	for _, f := range []string{workload.AggregateFile, rundir.VerificationFile, "part-0003-report.json"} {
		want, _ := os.ReadFile(filepath.Join(whole.RunDir, f))
		got, err := os.ReadFile(filepath.Join(o.RunDir, f))
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s differs from the whole run's (%v)", f, err)
		}
	}

	// Part 3's report edited after its shard recorded it.
	path := filepath.Join(dirs[0], "part-0003-report.json")
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	forged := bytes.Replace(good, []byte(`"passed":true`), []byte(`"passed":false`), 1)
	if err := os.WriteFile(path, forged, 0o644); err != nil {
		t.Fatal(err)
	}
	o = merge()
	if o.Verification.OK || len(b.receiptReads) == 0 || !strings.HasPrefix(o.Verification.Mismatches[0], "part-0003-report.json: ") {
		t.Fatalf("an edited recorded part: ok=%v, %d receipts read, %v", o.Verification.OK, len(b.receiptReads), o.Verification.Mismatches)
	}
	// The record names the bytes it checked, nothing else.
	rec, err := os.ReadFile(filepath.Join(dirs[0], "part-0003-verified.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(rec, []byte(canon.DigestBytes(good))) || bytes.Contains(rec, []byte(canon.DigestBytes(forged))) {
		t.Fatalf("record %s", rec)
	}
}
