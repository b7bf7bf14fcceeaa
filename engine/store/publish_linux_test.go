package store

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

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
			if asked.Load() != 1 || renames.Load() != 3 {
				t.Fatalf("O_TMPFILE asked %d times for three sequential puts in one directory (want 1), %d renames (want 3)", asked.Load(), renames.Load())
			}
			// Concurrent first puts in a new directory may each ask
			// before the refusal is remembered; after them it is not
			// asked again.
			v := map[string]any{"blob": strings.Repeat("f", 20_000)}
			putConcurrently(t, s, v, 16)
			checkSingleValidObject(t, root, v)
			after := asked.Load()
			if _, err := s.Put(Values, "another"); err != nil {
				t.Fatal(err)
			}
			if asked.Load() != after || renames.Load() < 5 {
				t.Fatalf("O_TMPFILE asked again (%d -> %d) once the directory refused it, %d renames (want 5 or more)", after, asked.Load(), renames.Load())
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

// threadCPU is the calling thread's CPU time (user and system), exact
// to the nanosecond where getrusage counts ticks.
func threadCPU() time.Duration {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts)
	return time.Duration(ts.Nano())
}

// BenchmarkFileStorePublish puts distinct receipt-sized objects (already
// encoded) into one directory through two batches, alternating object by
// object between the two ways a FileStore publishes: a nameless file
// named by linkat (O_TMPFILE, the default here) and a named temporary
// file moved by renameat2 (the fallback where O_TMPFILE is refused). One
// directory and the alternation keep both under the same file-system
// state: on this machine's ext4, which has no journal, creating files
// after deletions (anyone's) costs up to 10x, which moves separate runs
// by more than the difference measured. CPU is the benchmark thread's.
func BenchmarkFileStorePublish(b *testing.B) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	root := b.TempDir()
	tmpfile, _ := OpenFileStore(root)
	named, _ := OpenFileStore(root)
	batches := [2]*Batch{tmpfile.Batch(), named.Batch()}
	d, err := named.openDir("put", string(Runs), true)
	if err != nil {
		b.Fatal(err)
	}
	d.plain.Store(true)
	var cpu [2]time.Duration
	i := 0
	for b.Loop() {
		enc, err := canon.Encode(receiptSized(i))
		if err != nil {
			b.Fatal(err)
		}
		t0 := threadCPU()
		if _, err := batches[i%2].PutEncoded(Runs, enc); err != nil {
			b.Fatal(err)
		}
		cpu[i%2] += threadCPU() - t0
		i++
		if i%2048 == 0 {
			for _, bt := range batches {
				if err := bt.Commit(); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	for _, bt := range batches {
		if err := bt.Commit(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(cpu[0].Seconds()*1e6/float64((i+1)/2), "tmpfile-cpu-µs/op")
	b.ReportMetric(cpu[1].Seconds()*1e6/float64(max(i/2, 1)), "renamed-cpu-µs/op")
}
