package store

import (
	"context"
	"io/fs"
	"runtime"
	"sync/atomic"

	"github.com/algal-assay/assay/engine/canon"
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

// linkAt hard-links the object file name from one namespace directory
// to another (linkEntry); a variable so a test can stand in for a pair of
// file systems that refuse the link.
var linkAt = linkEntry

// LinkFrom implements Linker. Each object is linked under its name and
// then read back through the name in this store, every byte hashed: an
// object that does not hash to its name, is not a regular file, or has a
// mode this store would not publish loses the link again and goes the
// copy's way (src.GetEncoded, then Put's publish), which names a torn or
// edited object with DIGEST_MISMATCH and repairs a torn copy already
// here. A link that cannot be made (another device, a file system without
// hard links, the name already taken, permissions) falls back to that
// copy too. The two namespace directories are made and checked for
// symbolic links once (each store holds them open, dirfd_linux.go), and
// every link and read-back names the object relative to them: for tens
// of thousands of receipts a path walk per object costs more than the
// links.
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
	from, to, err := f.linkDirs(src, ns)
	if err != nil || from == nil {
		return 0, err // src has no such namespace: nothing to take
	}
	var linked atomic.Int64
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i, d := range digests {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error {
			ok, err := f.linkObject(src, ns, d, from, to, names[i])
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

// linkDirs opens ns's directory in src (nil: src has none) and in f,
// made if need be, refusing a symbolic link on the way in either: held
// open (dirfd_linux.go), every link and read-back names an object
// relative to them.
func (f *FileStore) linkDirs(src *FileStore, ns Namespace) (from, to *nsDir, err error) {
	if err := checkNamespace(ns); err != nil {
		return nil, nil, err
	}
	if to, err = f.openDir("link", string(ns), true); err != nil {
		return nil, nil, err
	}
	if from, err = src.openDir("link", string(ns), false); err != nil {
		return nil, nil, err
	}
	return from, to, nil
}

// linkObject takes the object digest from the file name in from to the
// free name in to: linked when it could, else copied.
func (f *FileStore) linkObject(src *FileStore, ns Namespace, digest string, from, to *nsDir, name string) (bool, error) {
	if f.mode == src.mode && linkAt(from, to, name) == nil {
		if f.linkedSound(to, name, digest) {
			f.retain(to.name(name))
			return true, nil
		}
		_ = to.remove(name) // the name is ours: the link made it
	}
	return false, f.copyFrom(src, ns, digest)
}

// linkedSound reads the object just linked at name in d without
// following a symbolic link and says it is a regular file with a mode
// this store publishes, holding the canonical bytes digest names.
func (f *FileStore) linkedSound(d *nsDir, name, digest string) bool {
	b, perm, ok, err := d.read("link", name, MaxObjectBytes)
	return err == nil && ok && f.publishes(perm) && canon.DigestBytes(b) == digest
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
