package store

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/algal-assay/assay/engine/canon"
)

// Linker is a store that can take an object of another file store by a
// hard link to the same file instead of a copy of its bytes: `assay ci
// merge` gathers its shards' stores into one without creating and
// writing a file per receipt.
type Linker interface {
	// LinkFrom makes the object digest of ns in src present in this
	// store, its bytes checked against digest on the way in (as a copy
	// would read them): by hard link where the file systems and modes
	// allow, else by copy. linked reports which. An object src does not
	// hold is not an error (nothing is linked).
	LinkFrom(src *FileStore, ns Namespace, digest string) (linked bool, err error)
}

// linkFile is os.Link; a variable so a test can stand in for a pair of
// file systems that refuse the link.
var linkFile = os.Link

// LinkFrom implements Linker. The object is linked under its name and
// then read back through the name in this store, every byte hashed: an
// object that does not hash to its name, is not a regular file, or has a
// mode this store would not publish loses the link again and goes the
// copy's way (src.GetEncoded, then Put's publish), which names a torn or
// edited object with DIGEST_MISMATCH and repairs a torn copy already
// here. A link that cannot be made (another device, a file system without
// hard links, the name already taken, permissions) falls back to that
// copy too.
//
// A linked object is one file with two names: its bytes stay verified on
// every read, so one edited later in the source store (stores never write
// a published object in place, so only something outside them can) fails
// the digest check here too, as a copy damaged in place would.
func (f *FileStore) LinkFrom(src *FileStore, ns Namespace, digest string) (bool, error) {
	from, err := src.objectPath("link", ns, digest)
	if err != nil {
		return false, err
	}
	to, err := f.objectPath("link", ns, digest)
	if err != nil {
		return false, err
	}
	if f.mode == src.mode && f.link(from, to) {
		if f.linkedSound(to, digest) {
			f.retain(to)
			return true, nil
		}
		os.Remove(to) // the name is ours: the link made it
	}
	return false, f.copyFrom(src, ns, digest)
}

// link hard-links from to the free name to, making the namespace
// directory on the first miss; false when no link was made.
func (f *FileStore) link(from, to string) bool {
	err := linkFile(from, to)
	if errors.Is(err, fs.ErrNotExist) {
		dir := filepath.Dir(to)
		if prepareDir("link", dir, to) != nil {
			return false
		}
		err = linkFile(from, to)
	}
	return err == nil
}

// linkedSound reads the object just linked at path without following a
// symbolic link and says it is a regular file with a mode this store
// publishes, holding the canonical bytes digest names.
func (f *FileStore) linkedSound(path, digest string) bool {
	fd, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return false
	}
	defer fd.Close()
	st, err := fd.Stat()
	if err != nil || !st.Mode().IsRegular() || !f.publishes(st.Mode().Perm()) || st.Size() > MaxObjectBytes {
		return false
	}
	buf := bytes.NewBuffer(make([]byte, 0, int(st.Size())+bytes.MinRead))
	if _, err := buf.ReadFrom(io.LimitReader(fd, MaxObjectBytes+1)); err != nil {
		return false
	}
	return buf.Len() <= MaxObjectBytes && canon.DigestBytes(buf.Bytes()) == digest
}

// publishes says a file of permission perm could be one this store
// published: exactly its mode when it has one, else private (nothing for
// group or others, as os.CreateTemp's 0600 under any umask).
func (f *FileStore) publishes(perm fs.FileMode) bool {
	if f.mode != 0 {
		return perm == f.mode
	}
	return perm&0o077 == 0
}

// copyFrom puts the object digest of ns in src into f as its canonical
// bytes, read through src's digest check.
func (f *FileStore) copyFrom(src *FileStore, ns Namespace, digest string) error {
	b, ok, err := src.GetEncoded(ns, digest)
	if err != nil || !ok {
		return err
	}
	_, err = f.putCanonical(ns, b)
	return err
}
