package store

import (
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
// Immutable objects are published by hard-linking a synced temporary file
// from the same directory into place, so a name is either absent or holds
// complete bytes, and of two writers (threads or processes) exactly one
// installs the object while the other finds it and checks it. Slots are
// replaced by rename. Symlinks anywhere under the root are refused
// (IO_FAILED) so the store cannot be redirected outside itself.
type FileStore struct {
	root string
	// clean removes killed writers' temporary files before the first
	// write (leftovers.go).
	clean sync.Once
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
	return &FileStore{root: dir}, nil
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

func (f *FileStore) objectPath(op string, ns Namespace, digest string) (string, error) {
	hex, err := checkDigest(op, ns, digest)
	if err != nil {
		return "", err
	}
	d, err := f.dir(string(ns))
	if err != nil {
		return "", err
	}
	return filepath.Join(d, hex+".json"), nil
}

// readRegular reads a bounded regular file without following a final
// symlink and without blocking on a FIFO. A missing file is (nil, false).
func readRegular(op, path string, max int) ([]byte, bool, error) {
	fd, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, false, nil
		}
		if errors.Is(err, syscall.ELOOP) {
			return nil, false, errf(fault.IOFailed, op, path, "store symlinks are not admitted")
		}
		return nil, false, errf(fault.IOFailed, op, path, "%v", unwrap(err))
	}
	defer fd.Close()
	st, err := fd.Stat()
	if err != nil {
		return nil, false, errf(fault.IOFailed, op, path, "%v", unwrap(err))
	}
	if !st.Mode().IsRegular() {
		return nil, false, errf(fault.IOFailed, op, path, "not a regular file (%s)", st.Mode().Type())
	}
	if st.Size() > int64(max) {
		return nil, false, errf(fault.BudgetExhausted, op, path, "file is %d bytes, over the %d-byte bound", st.Size(), max)
	}
	b, err := io.ReadAll(io.LimitReader(fd, int64(max)+1))
	if err != nil {
		return nil, false, errf(fault.IOFailed, op, path, "%v", unwrap(err))
	}
	if len(b) > max {
		return nil, false, errf(fault.BudgetExhausted, op, path, "file grew past the %d-byte bound", max)
	}
	return b, true, nil
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
// atomically.
func (f *FileStore) publish(op, path string, data []byte, replace bool) (installed bool, err error) {
	release, err := f.writing(op)
	if err != nil {
		return false, err
	}
	defer release()
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return false, errf(fault.IOFailed, op, dir, "%v", unwrap(err))
	}
	if err := noLink(dir); err != nil {
		return false, err
	}
	if st, err := os.Lstat(path); err == nil && !st.Mode().IsRegular() {
		return false, errf(fault.IOFailed, op, path, "not a regular file (%s)", st.Mode().Type())
	}
	tmp, err := os.CreateTemp(dir, TempPrefix)
	if err != nil {
		return false, errf(fault.IOFailed, op, dir, "%v", unwrap(err))
	}
	tmpName := tmp.Name()
	defer os.Remove(tmpName) // after a link or a failure; a no-op after rename
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return false, errf(fault.IOFailed, op, tmpName, "%v", unwrap(err))
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return false, errf(fault.IOFailed, op, tmpName, "%v", unwrap(err))
	}
	if err := tmp.Close(); err != nil {
		return false, errf(fault.IOFailed, op, tmpName, "%v", unwrap(err))
	}
	if replace {
		if err := os.Rename(tmpName, path); err != nil {
			return false, errf(fault.IOFailed, op, path, "%v", unwrap(err))
		}
	} else if err := os.Link(tmpName, path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return false, nil
		}
		// A file system without hard links: fall back to a rename that
		// only proceeds when the name is still free. The window between
		// the check and the rename can only let an identical CAS object, or
		// a competing memo record, replace a just-published one.
		if _, serr := os.Lstat(path); serr == nil {
			return false, nil
		}
		if rerr := os.Rename(tmpName, path); rerr != nil {
			return false, errf(fault.IOFailed, op, path, "%v", unwrap(rerr))
		}
	}
	syncDir(dir)
	return true, nil
}

// syncDir makes a published name durable. Failure is ignored: some file
// systems refuse fsync on directories and the data itself is already synced.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}

// Put implements Store.
func (f *FileStore) Put(ns Namespace, v any) (string, error) {
	if err := checkNamespace(ns); err != nil {
		return "", err
	}
	b, err := canon.Encode(v)
	if err != nil {
		return "", errf(fault.Parse, "put", string(ns), "value is not canonical JSON: %v", err)
	}
	if len(b) > MaxObjectBytes {
		return "", errf(fault.BudgetExhausted, "put", string(ns), "object is %d bytes, over the %d-byte bound", len(b), MaxObjectBytes)
	}
	return f.putCanonical(ns, b)
}

func (f *FileStore) putCanonical(ns Namespace, b []byte) (string, error) {
	d := canon.DigestBytes(b)
	path, err := f.objectPath("put", ns, d)
	if err != nil {
		return "", err
	}
	if _, err := os.Lstat(path); err == nil {
		return d, f.checkExisting(path, d)
	}
	installed, err := f.publish("put", path, b, false)
	if err != nil {
		return "", err
	}
	if !installed {
		return d, f.checkExisting(path, d)
	}
	return d, nil
}

// checkExisting verifies an object another writer (or an earlier run)
// installed: a corrupt copy is reported rather than silently trusted.
func (f *FileStore) checkExisting(path, digest string) error {
	b, ok, err := readRegular("put", path, MaxObjectBytes)
	if err != nil {
		return err
	}
	if !ok {
		return errf(fault.IOFailed, "put", path, "object vanished after publication")
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
	path, err := f.objectPath("get", ns, digest)
	if err != nil {
		return nil, false, err
	}
	b, ok, err := readRegular("get", path, MaxObjectBytes)
	if err != nil || !ok {
		return nil, false, err
	}
	v, err := verified("get", path, b, digest)
	if err != nil {
		return nil, false, err
	}
	return v, true, nil
}

// Has implements Store.
func (f *FileStore) Has(ns Namespace, digest string) (bool, error) {
	path, err := f.objectPath("has", ns, digest)
	if err != nil {
		return false, err
	}
	st, err := os.Lstat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		return false, errf(fault.IOFailed, "has", path, "%v", unwrap(err))
	}
	if !st.Mode().IsRegular() {
		return false, errf(fault.IOFailed, "has", path, "not a regular file (%s)", st.Mode().Type())
	}
	return true, nil
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

func (f *FileStore) effectPath(key string) (string, error) {
	hex, ok := canon.DigestHex(key)
	if !ok {
		return "", errf(fault.Parse, "effect", key, "memo key is not a digest token")
	}
	d, err := f.dir("effects")
	if err != nil {
		return "", err
	}
	return filepath.Join(d, hex+".json"), nil
}

// readEffect reads a retained memo record. A record that is malformed or
// names another request is a hard error, never a silent miss.
func readEffect(path, requestDigest string) (map[string]any, bool, error) {
	b, ok, err := readRegular("effect", path, MaxObjectBytes)
	if err != nil || !ok {
		return nil, false, err
	}
	v, err := canon.Parse(b, MaxObjectBytes)
	if err != nil {
		return nil, false, errf(fault.DigestMismatch, "effect", path, "memo record is not valid JSON")
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

// GetEffect implements Store.
func (f *FileStore) GetEffect(requestDigest, identity string) (map[string]any, bool, error) {
	key, err := MemoKey(requestDigest, identity)
	if err != nil {
		return nil, false, err
	}
	path, err := f.effectPath(key)
	if err != nil {
		return nil, false, err
	}
	return readEffect(path, requestDigest)
}

// PutEffect implements Store.
func (f *FileStore) PutEffect(record map[string]any, identity string) (map[string]any, error) {
	rd, err := checkMemoRecord(record)
	if err != nil {
		return nil, err
	}
	b, err := canon.Encode(record)
	if err != nil {
		return nil, errf(fault.Parse, "effect", rd, "record is not canonical JSON: %v", err)
	}
	key, err := MemoKey(rd, identity)
	if err != nil {
		return nil, err
	}
	path, err := f.effectPath(key)
	if err != nil {
		return nil, err
	}
	if _, err := os.Lstat(path); err != nil {
		installed, err := f.publish("effect", path, b, false)
		if err != nil {
			return nil, err
		}
		if installed {
			return record, nil
		}
	}
	// Someone was first: the retained record wins, and it must be sound.
	rec, ok, err := readEffect(path, rd)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errf(fault.IOFailed, "effect", path, "retained memo record disappeared")
	}
	return rec, nil
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
