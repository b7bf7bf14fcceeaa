package store

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gofrs/flock"
)

// A writer killed between creating its temporary file and publishing it
// leaves a .tmp-* file. Leftovers lists it while no write is in flight,
// and the next store's first write removes it; while another process is
// writing (holding the writers' lock shared) neither happens, since its
// temporary files look the same.
func TestKilledWritersTempFilesAreCleaned(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	first, err := OpenFileStore(root)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := first.Put(Values, map[string]any{"a": 1.0}); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(root, string(Values), TempPrefix+"123456")
	if err := os.WriteFile(stale, []byte(`{"half":`), 0o600); err != nil {
		t.Fatal(err)
	}
	left, busy, err := first.Leftovers()
	if err != nil || busy || !slices.Equal(left, []string{stale}) {
		t.Fatalf("Leftovers = %v busy %v (%v), want [%s]", left, busy, err, stale)
	}

	// Another process mid-write.
	other := flock.New(filepath.Join(root, WritersLock))
	if err := other.RLock(); err != nil {
		t.Fatal(err)
	}
	second, _ := OpenFileStore(root)
	if _, err := second.Put(Values, map[string]any{"b": 2.0}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); err != nil {
		t.Fatal("a temporary file was removed while another writer might own it")
	}
	if left, busy, err := second.Leftovers(); err != nil || !busy || left != nil {
		t.Fatalf("Leftovers during another write = %v busy %v (%v)", left, busy, err)
	}
	other.Unlock()

	third, _ := OpenFileStore(root)
	if _, err := third.Put(Values, map[string]any{"c": 3.0}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Fatalf("the killed writer's temporary file survived the next store's first write: %v", err)
	}
	if left, busy, err := third.Leftovers(); err != nil || busy || len(left) != 0 {
		t.Fatalf("Leftovers after cleaning = %v busy %v (%v)", left, busy, err)
	}
}

// Leftovers never writes: a store without a writers' lock file stays
// without one.
func TestLeftoversWritesNothing(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	f, _ := OpenFileStore(root)
	if left, busy, err := f.Leftovers(); err != nil || busy || len(left) != 0 {
		t.Fatalf("%v %v %v", left, busy, err)
	}
	if _, err := os.Stat(filepath.Join(root, WritersLock)); !os.IsNotExist(err) {
		t.Fatalf("Leftovers created the lock file: %v", err)
	}
}

// A batch takes the writers' lock once, at its first write, and keeps it
// until Commit: until then no other writer may take a temporary file for a
// killed writer's; after Commit the store is idle again, and the batch
// takes the lock again at its next write.
func TestBatchHoldsTheWritersLockUntilCommit(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	fs, _ := OpenFileStore(root)
	b := fs.Batch()
	if b.hold.held() {
		t.Fatal("a batch that wrote nothing holds the lock")
	}
	for i := range 3 {
		if _, err := b.Put(Values, map[string]any{"n": float64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	other, _ := OpenFileStore(root)
	if left, busy, err := other.Leftovers(); err != nil || !busy || left != nil {
		t.Fatalf("Leftovers while a batch is uncommitted = %v busy %v (%v), want busy", left, busy, err)
	}
	stale := filepath.Join(root, string(Values), TempPrefix+"654321")
	if err := os.WriteFile(stale, []byte(`{"half":`), 0o600); err != nil {
		t.Fatal(err)
	}
	// Another store's first write cleans only when nobody writes.
	if _, err := other.Put(Values, map[string]any{"o": 1.0}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); err != nil {
		t.Fatal("a temporary file was removed while a batch held the writers' lock")
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	if b.hold.held() {
		t.Fatal("Commit kept the writers' lock")
	}
	if left, busy, err := other.Leftovers(); err != nil || busy || !slices.Equal(left, []string{stale}) {
		t.Fatalf("Leftovers after Commit = %v busy %v (%v), want [%s]", left, busy, err, stale)
	}
	if _, err := b.Put(Values, map[string]any{"n": 9.0}); err != nil {
		t.Fatal(err)
	}
	if !b.hold.held() {
		t.Fatal("a write after Commit did not take the lock again")
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
}

// A Commit while a write is still in flight keeps the lock for it: that
// write's temporary file must not look like a killed writer's.
func TestBatchCommitKeepsTheLockForAWriteInFlight(t *testing.T) {
	t.Parallel()
	fs, _ := OpenFileStore(t.TempDir())
	b := fs.Batch()
	release, err := b.writing("put")
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	if !b.hold.held() {
		t.Fatal("Commit released the lock under a write in flight")
	}
	release()
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	if b.hold.held() {
		t.Fatal("the next Commit kept the lock")
	}
}
