package store

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
	"golang.org/x/sys/unix"
)

// linkPair is a source store holding one value and a destination batch
// in another directory of the same file system; it returns the value's
// digest and the paths the object has in each.
func linkPair(t *testing.T) (src *FileStore, dst *Batch, d, from, to string) {
	t.Helper()
	root := t.TempDir()
	src, err := OpenFileStore(filepath.Join(root, "src"))
	if err != nil {
		t.Fatal(err)
	}
	d, err = src.Put(Runs, map[string]any{"receipt": strings.Repeat("r", 3000), "n": 7.0})
	if err != nil {
		t.Fatal(err)
	}
	f, err := OpenFileStore(filepath.Join(root, "dst"))
	if err != nil {
		t.Fatal(err)
	}
	hex, _ := canon.DigestHex(d)
	return src, f.Batch(), d, filepath.Join(root, "src", "runs", hex+".json"), filepath.Join(root, "dst", "runs", hex+".json")
}

// linkOne takes the object d of Runs from src into dst.
func linkOne(dst, src *FileStore, d string) (bool, error) {
	n, err := dst.LinkFrom(context.Background(), src, Runs, []string{d})
	return n == 1, err
}

// sameFile says the two paths name one file.
func sameFile(t *testing.T, a, b string) bool {
	t.Helper()
	sa, err := os.Lstat(a)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := os.Lstat(b)
	if err != nil {
		t.Fatal(err)
	}
	return os.SameFile(sa, sb)
}

// An object is taken by a hard link to the source's file (no new file
// written), waits for the batch's Commit like a written one, and reads
// back through the digest check; a second LinkFrom of it finds it there.
func TestLinkFromHardLinksTheSourceFile(t *testing.T) {
	t.Parallel()
	src, dst, d, from, to := linkPair(t)
	linked, err := linkOne(dst.FileStore, src, d)
	if err != nil || !linked {
		t.Fatalf("LinkFrom: linked=%v err=%v", linked, err)
	}
	if !sameFile(t, from, to) {
		t.Fatal("the object is not the source's file")
	}
	if dst.Pending() != 1 {
		t.Fatalf("%d objects wait for Commit, want the linked one", dst.Pending())
	}
	if err := dst.Commit(); err != nil {
		t.Fatal(err)
	}
	want, _, _ := src.GetEncoded(Runs, d)
	if got, ok, err := dst.GetEncoded(Runs, d); err != nil || !ok || !bytes.Equal(got, want) {
		t.Fatalf("read back: %v %v", ok, err)
	}
	if linked, err := linkOne(dst.FileStore, src, d); err != nil || linked {
		t.Fatalf("an object already present: linked=%v err=%v, want kept as it is", linked, err)
	}
	other, _ := canon.Digest(map[string]any{"absent": true})
	if linked, err := linkOne(dst.FileStore, src, other); err != nil || linked {
		t.Fatalf("an object the source lacks: linked=%v err=%v", linked, err)
	}
	if ok, _ := dst.Has(Runs, other); ok {
		t.Fatal("an object the source lacks appeared")
	}
}

// A source object whose bytes were edited fails with DIGEST_MISMATCH
// naming the source's file, and leaves no name in the destination: a
// torn or edited object never enters the store, linked or copied.
func TestLinkFromRefusesAnEditedObject(t *testing.T) {
	t.Parallel()
	src, dst, d, from, to := linkPair(t)
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(from, bytes.Replace(b, []byte(`"n":7`), []byte(`"n":8`), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	linked, err := linkOne(dst.FileStore, src, d)
	if linked || fault.CodeOf(err) != fault.DigestMismatch || !strings.Contains(err.Error(), from) {
		t.Fatalf("edited source: linked=%v err=%v, want %s naming %s", linked, err, fault.DigestMismatch, from)
	}
	if _, err := os.Lstat(to); !os.IsNotExist(err) {
		t.Fatalf("the edited object entered the store: %v", err)
	}
}

// One file under two names: a source object edited in place after the
// link fails the destination's digest check on read (the check `ci
// verify` makes of every receipt of a merged store).
func TestLinkedObjectEditedLaterFailsOnRead(t *testing.T) {
	t.Parallel()
	src, dst, d, from, _ := linkPair(t)
	if linked, err := linkOne(dst.FileStore, src, d); err != nil || !linked {
		t.Fatalf("LinkFrom: linked=%v err=%v", linked, err)
	}
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(from, bytes.Replace(b, []byte(`"n":7`), []byte(`"n":9`), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := dst.Get(Runs, d); fault.CodeOf(err) != fault.DigestMismatch {
		t.Fatalf("read of the linked object edited in its source: %v, want %s", err, fault.DigestMismatch)
	}
}

// An object that cannot be linked as it is goes the copy's way, into a
// file of its own: a source file more open than this store publishes, a
// source file holding the value in non-canonical bytes (copied as its
// canonical bytes), a store configured with another mode, a source name
// that is a symbolic link (refused, nothing left behind).
func TestLinkFromCopiesWhatItCannotLink(t *testing.T) {
	t.Parallel()
	t.Run("open mode", func(t *testing.T) {
		t.Parallel()
		src, dst, d, from, to := linkPair(t)
		if err := os.Chmod(from, 0o644); err != nil {
			t.Fatal(err)
		}
		assertCopied(t, src, dst.FileStore, d, from, to, 0o600)
	})
	t.Run("non-canonical bytes", func(t *testing.T) {
		t.Parallel()
		src, dst, d, from, to := linkPair(t)
		b, _ := os.ReadFile(from)
		if err := os.WriteFile(from, append([]byte(" "), b...), 0o600); err != nil {
			t.Fatal(err)
		}
		assertCopied(t, src, dst.FileStore, d, from, to, 0o600)
		if got, _ := os.ReadFile(to); !bytes.Equal(got, b) {
			t.Fatal("the copy is not the canonical bytes")
		}
	})
	t.Run("store mode", func(t *testing.T) {
		t.Parallel()
		src, dst, d, from, to := linkPair(t)
		archive, err := OpenFileStoreWith(dst.Root(), FileOptions{Mode: 0o644})
		if err != nil {
			t.Fatal(err)
		}
		assertCopied(t, src, archive, d, from, to, 0o644)
	})
	t.Run("symlink", func(t *testing.T) {
		t.Parallel()
		src, dst, d, from, to := linkPair(t)
		elsewhere := filepath.Join(t.TempDir(), "x.json")
		if err := os.Rename(from, elsewhere); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(elsewhere, from); err != nil {
			t.Fatal(err)
		}
		if linked, err := linkOne(dst.FileStore, src, d); linked || fault.CodeOf(err) != fault.IOFailed {
			t.Fatalf("a symlinked source: linked=%v err=%v, want %s", linked, err, fault.IOFailed)
		}
		if _, err := os.Lstat(to); !os.IsNotExist(err) {
			t.Fatalf("a symlink entered the store: %v", err)
		}
	})
}

// assertCopied takes d from src into dst and holds it to a copy: its own
// file, of mode perm, reading back through the digest check.
func assertCopied(t *testing.T, src, dst *FileStore, d, from, to string, perm os.FileMode) {
	t.Helper()
	linked, err := linkOne(dst, src, d)
	if err != nil || linked {
		t.Fatalf("LinkFrom: linked=%v err=%v, want a copy", linked, err)
	}
	if sameFile(t, from, to) {
		t.Fatal("linked, want a copy")
	}
	if st, _ := os.Lstat(to); st.Mode().Perm() != perm {
		t.Fatalf("copy's mode %v, want %v", st.Mode().Perm(), perm)
	}
	if _, ok, err := dst.Get(Runs, d); err != nil || !ok {
		t.Fatalf("read back: %v %v", ok, err)
	}
}

// Where the link is refused (another device: EXDEV; a file system without
// hard links) the object is copied, as before there were links.
func TestLinkFromCopiesAcrossDevices(t *testing.T) {
	real := linkAt
	linkAt = func(*nsDir, *nsDir, string) error { return unix.EXDEV }
	defer func() { linkAt = real }()
	src, dst, d, from, to := linkPair(t)
	assertCopied(t, src, dst.FileStore, d, from, to, 0o600)
}

// LinkFrom takes a whole namespace in one call, one worker per CPU:
// every object linked and counted; a list naming a key that is not a
// digest is refused before anything is taken; a cancelled call stops.
func TestLinkFromTakesANamespace(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	src, _ := OpenFileStore(filepath.Join(root, "src"))
	var digests []string
	for i := range 50 {
		d, err := src.Put(Values, map[string]any{"i": float64(i)})
		if err != nil {
			t.Fatal(err)
		}
		digests = append(digests, d)
	}
	dst, _ := OpenFileStore(filepath.Join(root, "dst"))
	n, err := dst.LinkFrom(context.Background(), src, Values, digests)
	if err != nil || n != len(digests) {
		t.Fatalf("LinkFrom of %d objects: linked %d, %v", len(digests), n, err)
	}
	got, err := dst.List(Values)
	if err != nil || len(got) != len(digests) {
		t.Fatalf("List after LinkFrom: %d objects, %v", len(got), err)
	}
	other, _ := OpenFileStore(filepath.Join(root, "other"))
	if n, err := other.LinkFrom(context.Background(), src, Values, append([]string{"sha256:nope"}, digests...)); n != 0 || fault.CodeOf(err) != fault.Parse {
		t.Fatalf("a list with a bad key: linked %d, %v, want %s", n, err, fault.Parse)
	}
	if _, err := os.Lstat(other.Root()); !os.IsNotExist(err) {
		t.Fatalf("a refused list made the store: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if n, err := other.LinkFrom(ctx, src, Values, digests); n != 0 || err != context.Canceled {
		t.Fatalf("a cancelled LinkFrom: linked %d, %v", n, err)
	}
}
