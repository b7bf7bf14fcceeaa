package archive

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/store"
)

// update128 is one recording of 128 cases, each with its receipt and its
// request.
func update128(t testing.TB) Update {
	u := Update{Workload: "w", Receipts: map[string]map[string]any{}, Now: "2026-01-01T00:00:00Z"}
	for i := range 128 {
		r, reqs := receiptFor(t, map[string]string{fmt.Sprintf("ticket %d", i): "billing"})
		d, _ := canon.Digest(r)
		u.Entries = append(u.Entries, Entry{Contender: "sys", Case: fmt.Sprintf("c%03d", i), Receipt: d, Models: []string{"m-1"}})
		u.Receipts[d] = r
		u.Requests = append(u.Requests, reqs...)
	}
	return u
}

// Issue 28, item 9: a recording is made durable by one barrier for its
// objects and one for its index, not an fsync per file; the files are
// 0644 and no lock file is left in the archive.
func TestApplySyncsPerBatchNotPerFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "receipts")
	a, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	before := store.Barriers()
	if err := a.Apply(update128(t)); err != nil {
		t.Fatal(err)
	}
	syncs := store.Barriers() - before
	// syncfs is one barrier; a file system without it falls back to an
	// fsync per file inside the same barrier, which this counts too.
	if syncs > 2 {
		t.Errorf("%d syncs for 128 recorded cases (256 files), want 2 barriers", syncs)
	}
	files := 0
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files++
		if strings.HasPrefix(d.Name(), ".") {
			t.Errorf("%s is in the archive", p)
		}
		st, _ := d.Info()
		if st.Mode().Perm() != 0o644 {
			t.Errorf("%s: mode %v, want 0644", p, st.Mode().Perm())
		}
		return nil
	})
	if err != nil || files != 257 {
		t.Fatalf("%d files (%v), want 128 receipts, 128 requests and the index", files, err)
	}
	if _, err := os.Stat(LockFile(dir)); err != nil {
		t.Errorf("the writers' lock is not where LockFile says: %v", err)
	}
}

// BenchmarkApply128 records 128 cases into an archive and reports the
// durability barriers per recorded answer.
//
//	go test ./harness/archive/ -run '^$' -bench Apply128 -benchtime 20x
func BenchmarkApply128(b *testing.B) {
	u := update128(b)
	var syncs int64
	for i := 0; i < b.N; i++ {
		a, err := Open(filepath.Join(b.TempDir(), "receipts"))
		if err != nil {
			b.Fatal(err)
		}
		before := store.Barriers()
		if err := a.Apply(u); err != nil {
			b.Fatal(err)
		}
		syncs += store.Barriers() - before
	}
	b.ReportMetric(float64(syncs)/float64(b.N)/128, "syncs/answer")
}
