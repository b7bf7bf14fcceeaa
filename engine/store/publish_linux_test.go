package store

import (
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/internal/jsontest"
	"golang.org/x/sys/unix"
)

// withoutTmpfile runs f with O_TMPFILE refused with refusal, as a file
// system (or kernel) without it refuses it.
func withoutTmpfile(t *testing.T, refusal error, f func()) {
	t.Helper()
	real := openTmpfile
	openTmpfile = func(int) (int, error) { return -1, refusal }
	defer func() { openTmpfile = real }()
	f()
}

// withLinkCount runs f counting the nameless files linkat names and the
// links refused because the name was taken.
func withLinkCount(t *testing.T, f func(installed, taken *atomic.Int64)) {
	t.Helper()
	var installed, taken atomic.Int64
	real := linkTmpfile
	linkTmpfile = func(fd, dirfd int, name string) error {
		err := real(fd, dirfd, name)
		switch {
		case err == nil:
			installed.Add(1)
		case err == unix.EEXIST:
			taken.Add(1)
		}
		return err
	}
	defer func() { linkTmpfile = real }()
	f(&installed, &taken)
}

// Objects and memo records are published as nameless files (O_TMPFILE)
// that linkat names, which never replaces a name another writer
// installed: of 32 writers of one object exactly one installs it, the
// memo's first record wins, and there is no temporary file to leave.
func TestPublishLinksNamelessFilesWithoutReplacing(t *testing.T) {
	withLinkCount(t, func(installed, _ *atomic.Int64) {
		root := t.TempDir()
		s, _ := OpenFileStore(root)
		v := map[string]any{"blob": strings.Repeat("t", 20_000)}
		putConcurrently(t, s, v, 32)
		checkSingleValidObject(t, root, v)
		if n := installed.Load(); n != 1 {
			t.Fatalf("%d links installed the object, want 1", n)
		}
		memoRace(t, jsontest.Digest(t, "req"), func(i int) (Store, any) { return s.Batch(), float64(i) })
		if n := installed.Load(); n != 2 {
			t.Fatalf("%d links installed the object and the memo record, want 2", n)
		}
		noTemps(t, root)
	})
}

// A file system or kernel that refuses O_TMPFILE gets the named
// temporary file and renameat2, with the same guarantees; the refusal is
// remembered for the directory, not asked again per object.
func TestPublishFallsBackWhereTmpfileIsRefused(t *testing.T) {
	for _, refusal := range []error{unix.EOPNOTSUPP, unix.EISDIR, unix.EINVAL} {
		t.Run(refusal.Error(), func(t *testing.T) {
			var asked, renames atomic.Int64
			realOpen, realRename := openTmpfile, renameNoReplace
			openTmpfile = func(int) (int, error) { asked.Add(1); return -1, refusal }
			renameNoReplace = func(from, to string) error { renames.Add(1); return realRename(from, to) }
			defer func() { openTmpfile, renameNoReplace = realOpen, realRename }()
			root := t.TempDir()
			s, _ := OpenFileStore(root)
			for i := range 3 {
				if _, err := s.Put(Runs, receiptSized(i)); err != nil {
					t.Fatal(err)
				}
			}
			v := map[string]any{"blob": strings.Repeat("f", 20_000)}
			putConcurrently(t, s, v, 16)
			checkSingleValidObject(t, root, v)
			if asked.Load() != 2 || renames.Load() < 4 {
				t.Fatalf("O_TMPFILE asked %d times (want once per directory: 2), %d renames (want 4 or more)", asked.Load(), renames.Load())
			}
			noTemps(t, root)
		})
	}
}

// The store holds its namespace directories open, so one replaced by a
// symbolic link after the store opened it does not let a write escape:
// objects keep going to the real directory, wherever it was moved, and
// nothing lands where the link points. A store opened afterwards refuses
// the link, as before.
func TestHeldNamespaceDirectoryPinsWrites(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	s, _ := OpenFileStore(root)
	first, err := s.Put(Values, "first")
	if err != nil {
		t.Fatal(err)
	}
	moved, elsewhere := filepath.Join(root, "moved"), t.TempDir()
	if err := os.Rename(filepath.Join(root, "values"), moved); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, filepath.Join(root, "values")); err != nil {
		t.Fatal(err)
	}
	second, err := s.Put(Values, "second")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutEffect(map[string]any{"requestDigest": jsontest.Digest(t, "r"), "executor": "e", "output": "o"}, ""); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{first, second} {
		hex, _ := canon.DigestHex(d)
		if _, err := os.Lstat(filepath.Join(moved, hex+".json")); err != nil {
			t.Fatalf("object %s is not in the real directory: %v", d, err)
		}
		if _, ok, err := s.Get(Values, d); !ok || err != nil {
			t.Fatalf("get %s: %v %v", d, ok, err)
		}
	}
	if entries, _ := os.ReadDir(elsewhere); len(entries) != 0 {
		t.Fatalf("a write escaped through the symbolic link: %v", entries)
	}
	later, _ := OpenFileStore(root)
	if _, err := later.Put(Values, "third"); err == nil || !strings.Contains(err.Error(), "symlinks are not admitted") {
		t.Fatalf("a store opened after the swap: %v, want the symlink refused", err)
	}
}

// A Put outside a batch is durable when it returns: the nameless file is
// synced before linkat names it and the directory after (two barriers),
// with the store's mode. A batch syncs nothing per object, and its
// Commit's barrier is handed every object it published or found in
// place, which are the files themselves (the portable barrier, syncEach,
// fsyncs each of them and their directories).
func TestPublishDurability(t *testing.T) {
	root := t.TempDir()
	s, _ := OpenFileStoreWith(root, FileOptions{Mode: 0o644})
	if _, err := s.Put(Runs, receiptSized(0)); err != nil { // opens the directory
		t.Fatal(err)
	}
	before := Barriers()
	d, err := s.Put(Runs, receiptSized(1))
	if err != nil {
		t.Fatal(err)
	}
	if n := Barriers() - before; n != 2 {
		t.Fatalf("a Put outside a batch issued %d barriers, want 2", n)
	}
	hex, _ := canon.DigestHex(d)
	if st, err := os.Lstat(filepath.Join(root, "runs", hex+".json")); err != nil || st.Mode().Perm() != 0o644 {
		t.Fatalf("published file: %v %v, want mode 0644", st, err)
	}
	b := s.Batch()
	entered, release := holdBarrier(t)
	before = Barriers()
	var want []string
	for i := 1; i < 5; i++ { // receipt 1 is in place already
		d, err := b.Put(Runs, receiptSized(i))
		if err != nil {
			t.Fatal(err)
		}
		hex, _ := canon.DigestHex(d)
		want = append(want, filepath.Join(root, "runs", hex+".json"))
	}
	if n := Barriers() - before; n != 0 {
		t.Fatalf("a batch's puts issued %d barriers, want 0", n)
	}
	done := make(chan error, 1)
	go func() { done <- b.Commit() }()
	got := <-entered
	if !sameSet(got, want) {
		t.Fatalf("Commit's barrier was handed %v, want %v", got, want)
	}
	if err := syncEach(got); err != nil {
		t.Fatalf("syncing what the barrier was handed: %v", err)
	}
	release <- nil
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func sameSet(a, b []string) bool {
	seen := map[string]int{}
	for _, s := range a {
		seen[s]++
	}
	for _, s := range b {
		if seen[s] == 0 {
			return false
		}
		seen[s]--
	}
	return len(a) == len(b)
}
