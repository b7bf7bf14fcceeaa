package store

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/algal-assay/assay/engine/fault"
	"golang.org/x/sys/unix"
)

// nsDirs holds a store's namespace directories open, shared by the store
// and its batches. A directory is opened on first use, after the symlink
// refusal (the root and the namespace each opened O_NOFOLLOW, so neither
// can be a symbolic link), and kept: every object after that is named
// relative to the held descriptor, one path element, with no walk of the
// root's path and no lstat of root or namespace per object (at 160,000
// receipts those were a quarter of a run's store time). The descriptors
// are os.Files, closed by their finalizers once the store and its batches
// are unreachable: FileStore has no Close, and a process that opens many
// stores (a test binary) keeps only the live ones' open.
//
// A held descriptor also pins where objects go: a namespace directory
// replaced by a symbolic link after the store opened it does not redirect
// a single read or write, which keep to the real directory (moved or not)
// the store checked. A directory removed meanwhile is noticed on the miss
// it causes (its link count is 0) and opened again from its path.
type nsDirs struct {
	mu   sync.Mutex
	open map[string]*nsDir
}

func newNSDirs() *nsDirs { return &nsDirs{open: map[string]*nsDir{}} }

// nsDir is one open namespace directory.
type nsDir struct {
	f    *os.File
	fd   int
	path string
	// plain is set once this directory refused O_TMPFILE (a file system
	// or kernel without it): objects are then published the portable way.
	plain atomic.Bool
}

// openDir returns the namespace directory sub, opened and checked on
// first use. Without create an absent directory is nil (and nothing is
// remembered, so a directory made later is found); with create it is
// made.
func (f *FileStore) openDir(op, sub string, create bool) (*nsDir, error) {
	f.dirs.mu.Lock()
	d := f.dirs.open[sub]
	f.dirs.mu.Unlock()
	if d != nil {
		return d, nil
	}
	d, err := f.openDirPath(op, sub, create)
	if err != nil || d == nil {
		return nil, err
	}
	f.dirs.mu.Lock()
	defer f.dirs.mu.Unlock()
	if held := f.dirs.open[sub]; held != nil {
		d.f.Close() // another goroutine opened it first
		return held, nil
	}
	f.dirs.open[sub] = d
	return d, nil
}

// openDirPath opens the root and then sub in it, each refusing a
// symbolic link (O_NOFOLLOW) and anything but a directory.
func (f *FileStore) openDirPath(op, sub string, create bool) (*nsDir, error) {
	path := filepath.Join(f.root, sub)
	if err := noLink(f.root); err != nil {
		return nil, err
	}
	if create {
		if err := os.MkdirAll(path, 0o755); err != nil {
			return nil, errf(fault.IOFailed, op, path, "%v", unwrap(err))
		}
	}
	const dirFlags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC
	root, err := unix.Open(f.root, dirFlags, 0)
	if err != nil {
		return nil, openDirErr(op, f.root, err)
	}
	defer unix.Close(root)
	fd, err := unix.Openat(root, sub, dirFlags, 0)
	if err != nil {
		return nil, openDirErr(op, path, err)
	}
	return &nsDir{f: os.NewFile(uintptr(fd), path), fd: fd, path: path}, nil
}

// openDirErr is the failure to open a store directory; an absent one is
// (no error: the caller sees a nil directory).
func openDirErr(op, path string, err error) error {
	switch {
	case errors.Is(err, unix.ENOENT):
		return nil
	case errors.Is(err, unix.ELOOP), errors.Is(err, unix.ENOTDIR):
		// O_DIRECTORY|O_NOFOLLOW on a symbolic link is ENOTDIR (or ELOOP).
		var st unix.Stat_t
		if unix.Lstat(path, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
			return errf(fault.IOFailed, "access", path, "store symlinks are not admitted")
		}
		return errf(fault.IOFailed, op, path, "not a directory")
	}
	return errf(fault.IOFailed, op, path, "%v", err)
}

// gone reports whether d was removed since it was opened (and so must be
// opened again from its path), and then forgets it.
func (f *FileStore) gone(sub string, d *nsDir) bool {
	var st unix.Stat_t
	err := unix.Fstat(d.fd, &st)
	runtime.KeepAlive(d)
	if err != nil || st.Nlink != 0 {
		return false
	}
	f.dirs.mu.Lock()
	if f.dirs.open[sub] == d {
		delete(f.dirs.open, sub)
	}
	f.dirs.mu.Unlock()
	return true
}

// name is the path of the entry name in d, for errors and a batch's list.
func (d *nsDir) name(name string) string { return d.path + string(filepath.Separator) + name }

// read reads the object file name in d as readRegular does: a bounded
// regular file, never through a final symlink, never blocking on a FIFO;
// absent is (nil, false). It also returns the file's permission bits.
// The bytes are read in one call sized from fstat: a file that changed
// size meanwhile is read as far as the stat said, and the digest check
// every caller makes judges what was read.
func (d *nsDir) read(op, name string, max int) ([]byte, fs.FileMode, bool, error) {
	defer runtime.KeepAlive(d)
	fd, err := openat(d.fd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC)
	if err != nil {
		switch {
		case errors.Is(err, unix.ENOENT):
			return nil, 0, false, nil
		case errors.Is(err, unix.ELOOP):
			return nil, 0, false, errf(fault.IOFailed, op, d.name(name), "store symlinks are not admitted")
		}
		return nil, 0, false, errf(fault.IOFailed, op, d.name(name), "%v", err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, 0, false, errf(fault.IOFailed, op, d.name(name), "%v", err)
	}
	mode := statMode(&st)
	if !mode.IsRegular() {
		return nil, 0, false, errf(fault.IOFailed, op, d.name(name), "not a regular file (%s)", mode.Type())
	}
	if st.Size > int64(max) {
		return nil, 0, false, errf(fault.BudgetExhausted, op, d.name(name), "file is %d bytes, over the %d-byte bound", st.Size, max)
	}
	b := make([]byte, int(st.Size))
	n := 0
	for n < len(b) {
		m, err := unix.Read(fd, b[n:])
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return nil, 0, false, errf(fault.IOFailed, op, d.name(name), "%v", err)
		}
		if m == 0 {
			break
		}
		n += m
	}
	return b[:n], mode.Perm(), true, nil
}

// statMode is the fs.FileMode of a raw stat: its type and permissions.
func statMode(st *unix.Stat_t) fs.FileMode {
	mode := fs.FileMode(st.Mode & 0o777)
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
	case unix.S_IFDIR:
		mode |= fs.ModeDir
	case unix.S_IFLNK:
		mode |= fs.ModeSymlink
	case unix.S_IFIFO:
		mode |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		mode |= fs.ModeSocket
	case unix.S_IFCHR:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	default:
		mode |= fs.ModeDevice
	}
	return mode
}

// stat is Has's look at the entry name in d, without following it.
func (d *nsDir) stat(op, name string) (bool, error) {
	var st unix.Stat_t
	err := unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
	runtime.KeepAlive(d)
	if err != nil {
		if errors.Is(err, unix.ENOENT) {
			return false, nil
		}
		return false, errf(fault.IOFailed, op, d.name(name), "%v", err)
	}
	if mode := statMode(&st); !mode.IsRegular() {
		return false, errf(fault.IOFailed, op, d.name(name), "not a regular file (%s)", mode.Type())
	}
	return true, nil
}

// openat is openat(2) retried on EINTR.
func openat(dirfd int, name string, flags int) (int, error) {
	for {
		fd, err := unix.Openat(dirfd, name, flags, 0)
		if !errors.Is(err, unix.EINTR) {
			return fd, err
		}
	}
}
