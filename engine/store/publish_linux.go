package store

import (
	"errors"
	"runtime"
	"strconv"
	"sync"

	"github.com/algal-assay/assay/engine/fault"
	"golang.org/x/sys/unix"
)

// procFD says /proc/self/fd is mounted: an O_TMPFILE file is given its
// name by linkat(2) through it (the AT_EMPTY_PATH way needs a capability).
var procFD = sync.OnceValue(func() bool {
	return unix.Access("/proc/self/fd", unix.X_OK) == nil
})

// openTmpfile opens a nameless file in the directory dirfd (O_TMPFILE);
// a variable so a test can stand in for a file system that refuses it.
var openTmpfile = func(dirfd int) (int, error) {
	return unix.Openat(dirfd, ".", unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC, 0o600)
}

// linkTmpfile gives the nameless file fd the name name in dirfd, failing
// with EEXIST when the name is taken; a variable so a test can count the
// names it installs.
var linkTmpfile = func(fd, dirfd int, name string) error {
	return unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(fd), dirfd, name, unix.AT_SYMLINK_FOLLOW)
}

// refusesTmpfile says err is a file system's or kernel's refusal of
// O_TMPFILE (an old kernel reads the flag as O_DIRECTORY: EISDIR), or a
// seccomp filter's, rather than a failure the portable publish would hit
// as well.
func refusesTmpfile(err error) bool {
	for _, e := range []error{unix.EOPNOTSUPP, unix.EISDIR, unix.EINVAL, unix.ENOSYS, unix.EPERM} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// publishNew publishes data as the new file name in d unless the name is
// taken (installed false: the caller checks what is there), in one
// atomic step that leaves nothing behind: the bytes go to a nameless file
// (O_TMPFILE) in d, which linkat names; a writer killed before the link
// leaves no temporary file. It is about 40% less system time per object
// than a named temporary file and renameat2 (measured on this ext4:
// 7.8 s against 12.8 s for 160,000 receipts). Outside a batch the file is
// synced before its name appears and the directory after, as publish
// does. done is false when d's file system refuses O_TMPFILE or /proc is
// not mounted: the caller then publishes the portable way (publish), and
// so does every later object in d.
func (f *FileStore) publishNew(op string, d *nsDir, name string, data []byte) (installed, done bool, err error) {
	if d.plain.Load() || !procFD() {
		return false, false, nil
	}
	release, err := f.enter(op)
	if err != nil {
		return false, true, err
	}
	defer release()
	defer runtime.KeepAlive(d)
	fd, err := openTmpfile(d.fd)
	if err != nil {
		if refusesTmpfile(err) {
			d.plain.Store(true)
			return false, false, nil
		}
		return false, true, errf(fault.IOFailed, op, d.path, "%v", err)
	}
	defer unix.Close(fd)
	if err := f.fillFD(fd, data); err != nil {
		return false, true, errf(fault.IOFailed, op, d.name(name), "%v", err)
	}
	switch err := linkTmpfile(fd, d.fd, name); {
	case errors.Is(err, unix.EEXIST):
		return false, true, nil
	case err != nil:
		return false, true, errf(fault.IOFailed, op, d.name(name), "%v", err)
	}
	if f.pend != nil {
		f.pend.add(d.name(name))
		return true, true, nil
	}
	// The name's durability, as syncDir: a failure is ignored.
	barriers.Add(1)
	_ = unix.Fsync(d.fd)
	return true, true, nil
}

// fillFD writes data to the nameless file fd and sets the store's mode;
// outside a batch it syncs the bytes, which must be durable before the
// name appears (fill, for a file descriptor).
func (f *FileStore) fillFD(fd int, data []byte) error {
	for len(data) > 0 {
		n, err := unix.Write(fd, data)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return err
		}
		data = data[n:]
	}
	if f.mode != 0 {
		if err := unix.Fchmod(fd, uint32(f.mode)); err != nil {
			return err
		}
	}
	if f.pend != nil {
		return nil
	}
	barriers.Add(1)
	return unix.Fsync(fd)
}

// exists says an entry (of any kind) is at name in d.
func (d *nsDir) exists(name string) bool {
	var st unix.Stat_t
	err := unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
	runtime.KeepAlive(d)
	return err == nil
}

// remove removes the entry name from d.
func (d *nsDir) remove(name string) error {
	err := unix.Unlinkat(d.fd, name, 0)
	runtime.KeepAlive(d)
	return err
}

// linkEntry hard-links the file name in from to the same name in to,
// which must be free, without following a symbolic link.
func linkEntry(from, to *nsDir, name string) error {
	err := unix.Linkat(from.fd, name, to.fd, name, 0)
	runtime.KeepAlive(from)
	runtime.KeepAlive(to)
	return err
}
