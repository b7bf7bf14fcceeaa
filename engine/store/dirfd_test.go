package store

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
)

// A namespace directory removed (and made again) after the store read
// from it is not a stale view: its objects are misses, and objects put
// there later are found, through the directory now at the path.
func TestRemovedNamespaceDirectoryIsOpenedAgain(t *testing.T) {
	t.Parallel()
	root := filepath.Join(t.TempDir(), ".algal")
	s, _ := OpenFileStore(root)
	d, err := s.Put(Values, "first")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.Get(Values, d); !ok || err != nil {
		t.Fatalf("get before removal: %v %v", ok, err)
	}
	if err := os.RemoveAll(filepath.Join(root, "values")); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.Get(Values, d); ok || err != nil {
		t.Fatalf("get after removal: ok=%v err=%v, want a miss", ok, err)
	}
	if has, err := s.Has(Values, d); has || err != nil {
		t.Fatalf("has after removal: %v %v, want a miss", has, err)
	}
	// Another writer makes the directory again and puts an object.
	other, _ := OpenFileStore(root)
	d2, err := other.Put(Values, "second")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.Get(Values, d2); !ok || err != nil {
		t.Fatalf("get from the new directory: %v %v", ok, err)
	}
	if has, err := s.Has(Values, d2); !has || err != nil {
		t.Fatalf("has in the new directory: %v %v", has, err)
	}
}

// Reads refuse a namespace directory that is a symbolic link when the
// store first opens it, and an object that is one, as every read did
// before directories were held open.
func TestReadsRefuseSymlinks(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	other := t.TempDir()
	s, _ := OpenFileStore(root)
	d, _ := s.Put(Values, "x")
	hex, _ := canon.DigestHex(d)
	if err := os.MkdirAll(filepath.Join(other, "runs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, "runs", hex+".json"), []byte(`"x"`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(other, "runs"), filepath.Join(root, "runs")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Get(Runs, d); fault.CodeOf(err) != fault.IOFailed {
		t.Fatalf("get through a symlinked namespace: %v", err)
	}
	if _, err := s.Has(Runs, d); fault.CodeOf(err) != fault.IOFailed {
		t.Fatalf("has through a symlinked namespace: %v", err)
	}
	if err := os.Symlink(filepath.Join(other, "runs", hex+".json"), filepath.Join(root, "values", "link.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(root, "values", "link.json"), filepath.Join(root, "values", hex+".json")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Get(Values, d); fault.CodeOf(err) != fault.IOFailed {
		t.Fatalf("get of a symlinked object: %v", err)
	}
	if _, err := s.Has(Values, d); fault.CodeOf(err) != fault.IOFailed {
		t.Fatalf("has of a symlinked object: %v", err)
	}
}

// BenchmarkFileStoreGet reads back distinct receipt-sized objects from
// one namespace of 10,000 (a run's verify phase and `ci verify` read each
// receipt so), digest check included: CPU per object (user+system, which
// moves less than wall time with the machine's other load).
func BenchmarkFileStoreGet(b *testing.B) {
	fs, _ := OpenFileStore(b.TempDir())
	batch := fs.Batch()
	const n = 10_000
	digests := make([]string, n)
	for i := range digests {
		d, err := batch.Put(Runs, receiptSized(i))
		if err != nil {
			b.Fatal(err)
		}
		digests[i] = d
	}
	if err := batch.Commit(); err != nil {
		b.Fatal(err)
	}
	reader, _ := OpenFileStore(fs.Root())
	b.SetBytes(1500)
	i, cpu0 := 0, cpuTime()
	for b.Loop() {
		if _, ok, err := reader.Get(Runs, digests[i%n]); err != nil || !ok {
			b.Fatal(ok, err)
		}
		i++
	}
	b.ReportMetric((cpuTime()-cpu0).Seconds()*1e6/float64(i), "cpu-µs/op")
}
