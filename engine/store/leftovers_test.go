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
	root := t.TempDir()
	f, _ := OpenFileStore(root)
	if left, busy, err := f.Leftovers(); err != nil || busy || len(left) != 0 {
		t.Fatalf("%v %v %v", left, busy, err)
	}
	if _, err := os.Stat(filepath.Join(root, WritersLock)); !os.IsNotExist(err) {
		t.Fatalf("Leftovers created the lock file: %v", err)
	}
}
