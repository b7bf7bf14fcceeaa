package store

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"syscall"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
	"golang.org/x/sync/errgroup"
)

// Linker is a store that can take objects of another file store by hard
// links to the same files instead of copies of their bytes: `assay ci
// merge` gathers its shards' stores into one without creating and
// writing a file per receipt.
type Linker interface {
	// LinkFrom makes the objects digests of ns in src present in this
	// store, each one's bytes checked against its digest on the way in
	// (as a copy would read them): by hard link where the file systems
	// and modes allow, else by copy, one worker per CPU. linked counts
	// the objects linked. An object src does not hold is not an error
	// (nothing is taken).
	LinkFrom(ctx context.Context, src *FileStore, ns Namespace, digests []string) (linked int, err error)
}

// linkFile is os.Link; a variable so a test can stand in for a pair of
// file systems that refuse the link.
var linkFile = os.Link

// LinkFrom implements Linker. Each object is linked under its name and
// then read back through the name in this store, every byte hashed: an
// object that does not hash to its name, is not a regular file, or has a
// mode this store would not publish loses the link again and goes the
// copy's way (src.GetEncoded, then Put's publish), which names a torn or
// edited object with DIGEST_MISMATCH and repairs a torn copy already
// here. A link that cannot be made (another device, a file system without
// hard links, the name already taken, permissions) falls back to that
// copy too. The two namespace directories are made and checked for
// symbolic links once per call, not once per object as a Put does: for
// tens of thousands of receipts those checks cost more than the links.
//
// A linked object is one file with two names: its bytes stay verified on
// every read, so one edited later in the source store (stores never write
// a published object in place, so only something outside them can) fails
// the digest check here too, as a copy damaged in place would.
func (f *FileStore) LinkFrom(ctx context.Context, src *FileStore, ns Namespace, digests []string) (int, error) {
	if len(digests) == 0 {
		return 0, checkNamespace(ns)
	}
	names, err := objectNames(ns, digests)
	if err != nil {
		return 0, err
	}
	fromDir, toDir, err := f.linkDirs(src, ns)
	if err != nil {
		return 0, err
	}
	var linked atomic.Int64
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i, d := range digests {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error {
			ok, err := f.linkObject(src, ns, d, filepath.Join(fromDir, names[i]), filepath.Join(toDir, names[i]))
			if ok {
				linked.Add(1)
			}
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return int(linked.Load()), err
	}
	return int(linked.Load()), ctx.Err()
}

// objectNames are the file names of the objects digests of ns.
func objectNames(ns Namespace, digests []string) ([]string, error) {
	names := make([]string, len(digests))
	for i, d := range digests {
		hex, err := checkDigest("link", ns, d)
		if err != nil {
			return nil, err
		}
		names[i] = hex + ".json"
	}
	return names, nil
}

// linkDirs checks ns's directory in src and makes it in f, refusing a
// symbolic link on the way in either.
func (f *FileStore) linkDirs(src *FileStore, ns Namespace) (from, to string, err error) {
	if err := checkNamespace(ns); err != nil {
		return "", "", err
	}
	if from, err = src.dir(string(ns)); err != nil {
		return "", "", err
	}
	if to, err = f.dir(string(ns)); err != nil {
		return "", "", err
	}
	if err := os.MkdirAll(to, 0o755); err != nil {
		return "", "", errf(fault.IOFailed, "link", to, "%v", unwrap(err))
	}
	return from, to, noLink(to)
}

// linkObject takes the object digest from the file from to the free name
// to: linked when it could, else copied.
func (f *FileStore) linkObject(src *FileStore, ns Namespace, digest, from, to string) (bool, error) {
	if f.mode == src.mode && linkFile(from, to) == nil {
		if f.linkedSound(to, digest) {
			f.retain(to)
			return true, nil
		}
		os.Remove(to) // the name is ours: the link made it
	}
	return false, f.copyFrom(src, ns, digest)
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
