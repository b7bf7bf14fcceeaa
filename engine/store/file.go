package store

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/gofrs/flock"
)

// DefaultDir is the store directory the CLI uses when none is given.
const DefaultDir = ".algal"

// FileStore is the on-disk store. Its layout is upstream's:
//
//	manifests/<hex>.json  canonical normalized manifest
//	values/<hex>.json     canonical value
//	runs/<hex>.json       canonical full receipt, keyed by its storage reference
//	effects/<hex>.json    memo record, keyed by MemoKey
//	slots/<name>.json     slot value, overwritten on write
//
// The layout stays flat (one directory per namespace, no fan-out
// subdirectories) because upstream's store reads exactly
// <namespace>/<hex>.json: a fanned-out .algal would no longer verify under
// upstream's CLI.
//
// Immutable objects are published, on Linux, by writing a nameless file
// (O_TMPFILE) in the namespace directory the store holds open and naming
// it with linkat, which refuses to replace (publish_linux.go); elsewhere,
// or where the file system refuses O_TMPFILE, by moving a temporary file
// from the same directory into place with a rename that refuses to
// replace (renameat2 RENAME_NOREPLACE on Linux), or by hard-linking it
// where that is unavailable. Either way, of two writers (threads or
// processes) exactly one installs the object while the other finds it and
// checks it. An object
// of another FileStore can also be taken as a hard link to its file
// (LinkFrom, link.go), checked against its digest like a copy.
// A FileStore syncs each object before it publishes it and its directory
// after, so a Put that returned is durable; a Batch (batch.go) defers both
// to one barrier at Commit. Either way a name that a crash left holding
// torn bytes can never pass for its object: every read re-hashes, and the
// next Put of that object replaces the torn copy. Slots are replaced by
// rename. Symlinks anywhere under the root are refused (IO_FAILED) so the
// store cannot be redirected outside itself.
type FileStore struct {
	root string
	// dirs are the namespace directories held open (dirfd_linux.go);
	// batches share their store's.
	dirs *nsDirs
	// clean removes killed writers' temporary files before the first
	// write (leftovers.go); batches share their store's.
	clean *sync.Once
	// pend collects what a Batch wrote since its last Commit; nil makes
	// every write durable before it returns.
	pend *pending
	// hold is a Batch's hold of the writers' lock (nil: one per publish).
	hold *batchHold
	// lock is the writers' lock file ("": WritersLock at the root).
	lock string
	// mode is the permission of published files (0: os.CreateTemp's 0600).
	mode fs.FileMode
}

// FileOptions shape a store whose directory is shared with people, such
// as a receipt archive committed to a repository.
type FileOptions struct {
	// Mode is the permission of every published file (default 0600, a
	// private store's). An archive a team reads publishes 0644.
	Mode fs.FileMode
	// LockFile is the writers' lock (default WritersLock at the root). A
	// directory that is committed keeps no lock file inside it.
	LockFile string
}

// OpenFileStoreWith is OpenFileStore with options.
func OpenFileStoreWith(dir string, o FileOptions) (*FileStore, error) {
	f, err := OpenFileStore(dir)
	if err != nil {
		return nil, err
	}
	f.lock, f.mode = o.LockFile, o.Mode.Perm()
	return f, nil
}

// OpenFileStore opens (without creating) the store rooted at dir; the
// directories are created on first write. An empty dir means DefaultDir.
func OpenFileStore(dir string) (*FileStore, error) {
	if dir == "" {
		dir = DefaultDir
	}
	if err := noLink(dir); err != nil {
		return nil, err
	}
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		return nil, errf(fault.IOFailed, "open", dir, "store root is not a directory")
	}
	return &FileStore{root: dir, dirs: newNSDirs(), clean: new(sync.Once)}, nil
}

// Root returns the store directory.
func (f *FileStore) Root() string { return f.root }

func noLink(path string) error {
	st, err := os.Lstat(path)
	if err == nil && st.Mode()&fs.ModeSymlink != 0 {
		return errf(fault.IOFailed, "access", path, "store symlinks are not admitted")
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return errf(fault.IOFailed, "access", path, "%v", unwrap(err))
	}
	return nil
}

func unwrap(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

// dir returns a namespace directory after refusing symlinks on the way.
func (f *FileStore) dir(sub string) (string, error) {
	if err := noLink(f.root); err != nil {
		return "", err
	}
	d := filepath.Join(f.root, sub)
	if err := noLink(d); err != nil {
		return "", err
	}
	return d, nil
}

// readRegular reads a bounded regular file without following a final
// symlink and without blocking on a FIFO. A missing file is (nil, false).
func readRegular(op, path string, max int) ([]byte, bool, error) {
	b, _, ok, err := readRegularMode(op, path, max)
	return b, ok, err
}

// readRegularMode is readRegular that also returns the file's permission
// bits.
func readRegularMode(op, path string, max int) ([]byte, fs.FileMode, bool, error) {
	fd, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, 0, false, nil
		}
		if errors.Is(err, syscall.ELOOP) {
			return nil, 0, false, errf(fault.IOFailed, op, path, "store symlinks are not admitted")
		}
		return nil, 0, false, errf(fault.IOFailed, op, path, "%v", unwrap(err))
	}
	defer fd.Close()
	st, err := fd.Stat()
	if err != nil {
		return nil, 0, false, errf(fault.IOFailed, op, path, "%v", unwrap(err))
	}
	if !st.Mode().IsRegular() {
		return nil, 0, false, errf(fault.IOFailed, op, path, "not a regular file (%s)", st.Mode().Type())
	}
	if st.Size() > int64(max) {
		return nil, 0, false, errf(fault.BudgetExhausted, op, path, "file is %d bytes, over the %d-byte bound", st.Size(), max)
	}
	// Sized from the stat, so an object's bytes land in one allocation
	// (io.ReadAll would grow its buffer from 512 bytes).
	buf := bytes.NewBuffer(make([]byte, 0, int(st.Size())+bytes.MinRead))
	if _, err := buf.ReadFrom(io.LimitReader(fd, int64(max)+1)); err != nil {
		return nil, 0, false, errf(fault.IOFailed, op, path, "%v", unwrap(err))
	}
	b := buf.Bytes()
	if len(b) > max {
		return nil, 0, false, errf(fault.BudgetExhausted, op, path, "file grew past the %d-byte bound", max)
	}
	return b, st.Mode().Perm(), true, nil
}

// verified parses stored bytes and checks that they hash to digest. Bytes
// that no longer parse cannot be the value the digest names, so they are a
// mismatch too. Canonical bytes (the normal case) skip re-encoding.
func verified(op, path string, b []byte, digest string) (any, error) {
	v, err := canon.Parse(b, MaxObjectBytes)
	if err != nil {
		return nil, errf(fault.DigestMismatch, op, path, "stored content is not valid JSON, so it cannot hash to %s", digest)
	}
	if canon.DigestBytes(b) == digest {
		return v, nil
	}
	d, err := canon.Digest(v)
	if err != nil || d != digest {
		return nil, errf(fault.DigestMismatch, op, path, "store content does not match its digest %s", digest)
	}
	return v, nil
}

// publish installs data at path. With replace false an existing name is
// left untouched and installed is false; with replace true it is replaced
// atomically. Outside a batch the bytes are synced before the name appears
// and the directory after; in a batch both wait for Commit.
func (f *FileStore) publish(op, path string, data []byte, replace bool) (installed bool, err error) {
	release, err := f.writing(op)
	if err != nil {
		return false, err
	}
	defer release()
	dir := filepath.Dir(path)
	if err := prepareDir(op, dir, path); err != nil {
		return false, err
	}
	tmpName, err := f.writeTemp(op, dir, data)
	if err != nil {
		return false, err
	}
	installed, moved, err := install(tmpName, path, replace)
	defer func() {
		if !moved {
			os.Remove(tmpName) // after a link or a failure
		}
	}()
	if err != nil {
		return false, errf(fault.IOFailed, op, path, "%v", unwrap(err))
	}
	if !installed {
		return false, nil
	}
	if f.pend != nil {
		f.pend.add(path)
		return true, nil
	}
	syncDir(dir)
	return true, nil
}

// prepareDir makes the directory dir that path is published in, refusing
// a symbolic link on the way and anything but a regular file at path.
func prepareDir(op, dir, path string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return errf(fault.IOFailed, op, dir, "%v", unwrap(err))
	}
	if err := noLink(dir); err != nil {
		return err
	}
	if st, err := os.Lstat(path); err == nil && !st.Mode().IsRegular() {
		return errf(fault.IOFailed, op, path, "not a regular file (%s)", st.Mode().Type())
	}
	return nil
}

// writeTemp writes data to a new temporary file in dir, with the store's
// mode, synced unless in a batch, and returns its name; on failure it
// leaves no file behind.
func (f *FileStore) writeTemp(op, dir string, data []byte) (string, error) {
	tmp, err := os.CreateTemp(dir, TempPrefix)
	if err != nil {
		return "", errf(fault.IOFailed, op, dir, "%v", unwrap(err))
	}
	err = f.fill(tmp, data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp.Name())
		return "", errf(fault.IOFailed, op, tmp.Name(), "%v", unwrap(err))
	}
	return tmp.Name(), nil
}

// fill writes data to the open file tmp and sets its mode; outside a
// batch it syncs the bytes, which must be durable before the name
// appears.
func (f *FileStore) fill(tmp *os.File, data []byte) error {
	if _, err := tmp.Write(data); err != nil {
		return err
	}
	if f.mode != 0 {
		if err := tmp.Chmod(f.mode); err != nil {
			return err
		}
	}
	if f.pend != nil {
		return nil
	}
	barriers.Add(1)
	return tmp.Sync()
}

// install gives the written temporary file tmp its name path: by rename
// when replace is set, else only if path is still free (installNew).
// moved reports whether tmp's name is gone.
func install(tmp, path string, replace bool) (installed, moved bool, err error) {
	if !replace {
		return installNew(tmp, path)
	}
	if err := os.Rename(tmp, path); err != nil {
		return false, false, err
	}
	return true, true, nil
}

// linkNew is the portable no-replace publish: a hard link, which fails
// when the name exists, leaving tmp for the caller to remove.
func linkNew(tmp, path string) (installed bool, err error) {
	err = os.Link(tmp, path)
	if err == nil {
		return true, nil
	}
	if errors.Is(err, fs.ErrExist) {
		return false, nil
	}
	// A file system without hard links: fall back to a rename that only
	// proceeds when the name is still free. The window between the check
	// and the rename can only let an identical CAS object, or a competing
	// memo record, replace a just-published one.
	if _, serr := os.Lstat(path); serr == nil {
		return false, nil
	}
	if rerr := os.Rename(tmp, path); rerr != nil {
		return false, rerr
	}
	return true, nil
}

// retain makes an object another writer installed as durable as one this
// call would have published: that writer may be a batch that has not
// committed yet. A batch only notes it for Commit.
func (f *FileStore) retain(path string) {
	if f.pend != nil {
		f.pend.add(path)
		return
	}
	syncFile(path)
	syncDir(filepath.Dir(path))
}

// syncDir makes a published name durable. Failure is ignored: some file
// systems refuse fsync on directories and the data itself is already synced.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		barriers.Add(1)
		_ = d.Sync()
		d.Close()
	}
}

// syncFile flushes a file another writer published; its error surfaces
// on that writer's own sync, so it is ignored here.
func syncFile(path string) {
	if fd, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0); err == nil {
		barriers.Add(1)
		_ = fd.Sync()
		fd.Close()
	}
}

// WriteFile replaces the file name at the store's root (an index beside
// the namespaces) atomically with data: outside a batch durable when it
// returns, in a batch at the next Commit.
func (f *FileStore) WriteFile(name string, data []byte) error {
	if name == "" || name != filepath.Base(name) || strings.HasPrefix(name, ".") {
		return errf(fault.IOFailed, "write", name, "a root file name is one path element")
	}
	_, err := f.publish("write", filepath.Join(f.root, name), data, true)
	return err
}

// Put implements Store.
func (f *FileStore) Put(ns Namespace, v any) (string, error) {
	b, err := encodeObject(ns, v)
	if err != nil {
		return "", err
	}
	return f.putCanonical(ns, b)
}

// PutEncoded implements EncodedPutter.
func (f *FileStore) PutEncoded(ns Namespace, canonical []byte) (string, error) {
	if err := admitEncoded(ns, canonical); err != nil {
		return "", err
	}
	return f.putCanonical(ns, canonical)
}

func (f *FileStore) putCanonical(ns Namespace, b []byte) (string, error) {
	d := canon.DigestBytes(b)
	hex, err := checkDigest("put", ns, d)
	if err != nil {
		return "", err
	}
	dir, name, installed, err := f.putNew("put", string(ns), hex+".json", b)
	if err != nil {
		return "", err
	}
	if !installed {
		return d, f.keepExisting(dir, name, d, b)
	}
	return d, nil
}

// putNew publishes data as the new file name in the namespace directory
// sub (made if need be) unless something is there already (installed
// false: the caller checks it): by publishNew where the directory takes
// it, else by publish. A directory removed since it was opened is opened
// again from its path.
func (f *FileStore) putNew(op, sub, name string, data []byte) (d *nsDir, _ string, installed bool, err error) {
	for retry := true; ; retry = false {
		if d, err = f.openDir(op, sub, true); err != nil {
			return nil, name, false, err
		}
		if d.exists(name) {
			return d, name, false, nil
		}
		installed, done, err := f.publishNew(op, d, name, data)
		if !done {
			installed, err = f.publish(op, d.name(name), data, false)
		}
		if err != nil && retry && f.gone(sub, d) {
			continue
		}
		return d, name, installed, err
	}
}

// keepExisting checks an object another writer (or an earlier run)
// installed. A sound copy is kept and made durable; one that does not hash
// to its name (a write torn by a crash, or damage) is replaced by the
// bytes the name stands for, which is always safe for content-addressed
// data: the name says exactly what belongs there.
func (f *FileStore) keepExisting(d *nsDir, name, digest string, want []byte) error {
	err := f.checkExisting(d, name, digest)
	if err == nil {
		f.retain(d.name(name))
		return nil
	}
	if fault.CodeOf(err) != fault.DigestMismatch {
		return err
	}
	if _, err := f.publish("put", d.name(name), want, true); err != nil {
		return err
	}
	return nil
}

// checkExisting verifies an object already in place.
func (f *FileStore) checkExisting(d *nsDir, name, digest string) error {
	path := d.name(name)
	b, _, ok, err := d.read("put", name, MaxObjectBytes)
	if err != nil {
		return err
	}
	if !ok {
		return errf(fault.IOFailed, "put", path, "object vanished after publication")
	}
	if canon.DigestBytes(b) == digest {
		return nil // the canonical bytes themselves: nothing to parse
	}
	if _, err := verified("put", path, b, digest); err != nil {
		if e, ok := fault.As(err); ok {
			corrupt := *e
			corrupt.Message = "existing store content is corrupt: " + e.Message
			return &corrupt
		}
		return err
	}
	return nil
}

// Get implements Store.
func (f *FileStore) Get(ns Namespace, digest string) (any, bool, error) {
	path, b, ok, err := f.readObject(ns, digest)
	if err != nil || !ok {
		return nil, false, err
	}
	v, err := verified("get", path, b, digest)
	if err != nil {
		return nil, false, err
	}
	return v, true, nil
}

// readObject reads the bytes stored under digest, unchecked: its path, or
// false when there is none.
func (f *FileStore) readObject(ns Namespace, digest string) (string, []byte, bool, error) {
	hex, err := checkDigest("get", ns, digest)
	if err != nil {
		return "", nil, false, err
	}
	d, name, b, ok, err := f.readAt("get", string(ns), hex+".json", MaxObjectBytes)
	if d == nil || err != nil || !ok {
		return "", nil, false, err
	}
	return d.name(name), b, true, nil
}

// readAt reads the file name in the namespace directory sub (nsDir.read)
// and returns the directory it read from (nil: there is none). A
// directory removed since it was opened is opened again from its path.
func (f *FileStore) readAt(op, sub, name string, max int) (*nsDir, string, []byte, bool, error) {
	for retry := true; ; retry = false {
		d, err := f.openDir(op, sub, false)
		if err != nil || d == nil {
			return nil, name, nil, false, err
		}
		b, _, ok, err := d.read(op, name, max)
		if err == nil && !ok && retry && f.gone(sub, d) {
			continue
		}
		return d, name, b, ok, err
	}
}

// Has implements Store.
func (f *FileStore) Has(ns Namespace, digest string) (bool, error) {
	hex, err := checkDigest("has", ns, digest)
	if err != nil {
		return false, err
	}
	for retry := true; ; retry = false {
		d, err := f.openDir("has", string(ns), false)
		if err != nil || d == nil {
			return false, err
		}
		ok, err := d.stat("has", hex+".json")
		if err == nil && !ok && retry && f.gone(string(ns), d) {
			continue
		}
		return ok, err
	}
}

// List implements Store. Temporary files and foreign names are ignored.
func (f *FileStore) List(ns Namespace) ([]string, error) {
	if err := checkNamespace(ns); err != nil {
		return nil, err
	}
	d, err := f.dir(string(ns))
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(d)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, errf(fault.IOFailed, "list", d, "%v", unwrap(err))
	}
	var out []string
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || !e.Type().IsRegular() {
			continue
		}
		if digest := "sha256:" + name; canon.IsDigest(digest) {
			out = append(out, digest)
		}
	}
	slices.Sort(out)
	return out, nil
}

// errTornEffect marks a memo file whose bytes do not parse. Every writer
// publishes complete canonical JSON, so such bytes can only be a write a
// crash tore (or damage): they name no record, which makes them a miss that
// the next PutEffect replaces, never evidence.
var errTornEffect = errors.New("memo record is torn")

// parseEffect reads a retained memo record from the bytes b read from
// path. A record that parses but is malformed or names another request is
// a hard error, never a silent miss; one that does not parse is
// errTornEffect.
func parseEffect(path string, b []byte, requestDigest string) (map[string]any, bool, error) {
	v, err := canon.Parse(b, MaxObjectBytes)
	if err != nil {
		return nil, false, errTornEffect
	}
	rec, isObj := v.(map[string]any)
	if !isObj {
		return nil, false, errf(fault.DigestMismatch, "effect", path, "memo record is not an object")
	}
	rd, err := checkMemoRecord(rec)
	if err != nil {
		return nil, false, errf(fault.DigestMismatch, "effect", path, "memo record is malformed: %s", fault.MessageOf(err))
	}
	if rd != requestDigest {
		return nil, false, errf(fault.DigestMismatch, "effect", path, "memo record claims request %s, not %s", rd, requestDigest)
	}
	return rec, true, nil
}

// GetEffect implements Store. A torn record is a miss.
func (f *FileStore) GetEffect(requestDigest, identity string) (map[string]any, bool, error) {
	key, err := MemoKey(requestDigest, identity)
	if err != nil {
		return nil, false, err
	}
	hex, ok := canon.DigestHex(key)
	if !ok {
		return nil, false, errf(fault.Parse, "effect", key, "memo key is not a digest token")
	}
	d, name, b, ok, err := f.readAt("effect", "effects", hex+".json", MaxObjectBytes)
	if err != nil || !ok {
		return nil, false, err
	}
	rec, ok, err := parseEffect(d.name(name), b, requestDigest)
	if errors.Is(err, errTornEffect) {
		return nil, false, nil
	}
	return rec, ok, err
}

// PutEffect implements Store. A torn record loses its place to record.
func (f *FileStore) PutEffect(record map[string]any, identity string) (map[string]any, error) {
	rd, b, key, err := memoEntry(record, identity)
	if err != nil {
		return nil, err
	}
	hex, ok := canon.DigestHex(key)
	if !ok {
		return nil, errf(fault.Parse, "effect", key, "memo key is not a digest token")
	}
	d, name, installed, err := f.putNew("effect", "effects", hex+".json", b)
	if err != nil {
		return nil, err
	}
	if installed {
		return record, nil
	}
	// Someone was first: the retained record wins, and it must be sound.
	rec, err := f.readRetained(d, name, rd)
	if errors.Is(err, errTornEffect) {
		return f.repairEffect(d, name, rd, b, record)
	}
	return rec, err
}

// readEffectAt reads the memo record at name in d (parseEffect).
func readEffectAt(d *nsDir, name, requestDigest string) (map[string]any, bool, error) {
	b, _, ok, err := d.read("effect", name, MaxObjectBytes)
	if err != nil || !ok {
		return nil, false, err
	}
	return parseEffect(d.name(name), b, requestDigest)
}

// readRetained reads the memo record another writer installed at name in
// d. Once a name is published it is never removed except by a repair, so
// an absent record here is an I/O failure, not a miss.
func (f *FileStore) readRetained(d *nsDir, name, rd string) (map[string]any, error) {
	rec, ok, err := readEffectAt(d, name, rd)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errf(fault.IOFailed, "effect", d.name(name), "retained memo record disappeared")
	}
	f.retain(d.name(name))
	return rec, nil
}

// repairEffect replaces a torn memo record with record unless another
// writer already did. Repairs take the store's repair lock in turn, and
// the torn name is removed before record is published as in a first
// write, so every writer still agrees on one retained record: a plain
// writer that publishes between the removal and this publish wins, as it
// would have on an empty index.
func (f *FileStore) repairEffect(d *nsDir, name, rd string, b []byte, record map[string]any) (map[string]any, error) {
	l := flock.New(filepath.Join(f.root, RepairLock), flock.SetFlag(os.O_CREATE|os.O_RDONLY), flock.SetPermissions(0o644))
	if err := l.Lock(); err != nil {
		return nil, errf(fault.IOFailed, "effect", l.Path(), "%v", unwrap(err))
	}
	defer func() { _ = l.Unlock() }()
	rec, ok, err := readEffectAt(d, name, rd)
	if err == nil && ok {
		f.retain(d.name(name)) // an earlier repair won
		return rec, nil
	}
	if err != nil && !errors.Is(err, errTornEffect) {
		return nil, err
	}
	if err := d.remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, errf(fault.IOFailed, "effect", d.name(name), "%v", unwrap(err))
	}
	d, name, installed, err := f.putNew("effect", "effects", name, b)
	if err != nil {
		return nil, err
	}
	if installed {
		return record, nil
	}
	return f.readRetained(d, name, rd)
}

func (f *FileStore) slotPath(name string) (string, error) {
	if err := checkSlotName(name); err != nil {
		return "", err
	}
	d, err := f.dir("slots")
	if err != nil {
		return "", err
	}
	return filepath.Join(d, name+".json"), nil
}

// GetSlot implements Store.
func (f *FileStore) GetSlot(name string) (any, bool, error) {
	path, err := f.slotPath(name)
	if err != nil {
		return nil, false, err
	}
	b, ok, err := readRegular("slot", path, MaxSlotBytes)
	if err != nil || !ok {
		return nil, false, err
	}
	v, err := canon.Parse(b, MaxSlotBytes)
	if err != nil {
		return nil, false, errf(fault.Parse, "slot", path, "slot value is not valid JSON: %v", err)
	}
	return v, true, nil
}

// SetSlot implements Store.
func (f *FileStore) SetSlot(name string, v any) error {
	b, err := encodeSlot(name, v)
	if err != nil {
		return err
	}
	path, err := f.slotPath(name)
	if err != nil {
		return err
	}
	_, err = f.publish("slot", path, b, true)
	return err
}
