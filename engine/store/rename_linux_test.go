package store

import (
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/internal/jsontest"
	"golang.org/x/sys/unix"
)

// withRename runs f with renameNoReplace replaced by fake, on the
// portable publish (a named temporary file): O_TMPFILE is refused, as on
// a file system without it (publish_linux.go).
func withRename(t *testing.T, fake func(from, to string) error, f func()) {
	t.Helper()
	real := renameNoReplace
	renameNoReplace = fake
	defer func() { renameNoReplace = real }()
	withoutTmpfile(t, unix.EOPNOTSUPP, f)
}

// Where O_TMPFILE is refused objects are published by
// renameat2(RENAME_NOREPLACE), which never
// replaces a name another writer installed: of 32 writers of one object
// exactly one installs it, and no temporary file is left.
func TestPublishRenamesWithoutReplacing(t *testing.T) {
	var renames, refused atomic.Int64
	real := renameNoReplace
	withRename(t, func(from, to string) error {
		err := real(from, to)
		renames.Add(1)
		if err != nil {
			refused.Add(1)
		}
		return err
	}, func() {
		root := t.TempDir()
		s, _ := OpenFileStore(root)
		v := map[string]any{"blob": strings.Repeat("r", 20_000)}
		putConcurrently(t, s, v, 32)
		checkSingleValidObject(t, root, v)
		if renames.Load() == 0 {
			t.Fatal("no object was published by renameat2")
		}
		if n := renames.Load() - refused.Load(); n != 1 {
			t.Fatalf("%d renames installed the object, want 1", n)
		}
		noTemps(t, root)
	})
}

// A file system (or kernel) that refuses RENAME_NOREPLACE gets the hard
// link, with the same guarantees: one object, the first memo record wins,
// no temporary file left.
func TestPublishFallsBackToLink(t *testing.T) {
	for _, refusal := range []error{unix.EINVAL, unix.ENOSYS, unix.ENOTSUP, unix.EPERM} {
		t.Run(refusal.Error(), func(t *testing.T) {
			withRename(t, func(string, string) error { return refusal }, func() {
				root := t.TempDir()
				s, _ := OpenFileStore(root)
				v := map[string]any{"blob": strings.Repeat("l", 20_000)}
				putConcurrently(t, s, v, 16)
				checkSingleValidObject(t, root, v)
				memoRace(t, jsontest.Digest(t, "req"), func(i int) (Store, any) { return s.Batch(), float64(i) })
				noTemps(t, root)
			})
		})
	}
}

// Any other rename failure is the write's failure, with the object's path.
func TestPublishRenameFailureIsIOFailed(t *testing.T) {
	withRename(t, func(string, string) error { return unix.EIO }, func() {
		root := t.TempDir()
		s, _ := OpenFileStore(root)
		_, err := s.Put(Values, map[string]any{"x": 1.0})
		if fault.CodeOf(err) != fault.IOFailed || !strings.Contains(err.Error(), filepath.Join(root, "values")) {
			t.Fatalf("Put = %v, want IO_FAILED naming the object", err)
		}
		noTemps(t, root)
	})
}

func putConcurrently(t *testing.T, s Store, v any, n int) {
	t.Helper()
	errs := make(chan error, n)
	start := make(chan struct{})
	for range n {
		go func() {
			<-start
			_, err := s.Put(Values, v)
			errs <- err
		}()
	}
	close(start)
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

func noTemps(t *testing.T, root string) {
	t.Helper()
	for _, ns := range []string{"values", "effects"} {
		entries, _ := os.ReadDir(filepath.Join(root, ns))
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), TempPrefix) {
				t.Fatalf("temporary file %s/%s left behind", ns, e.Name())
			}
		}
	}
}
