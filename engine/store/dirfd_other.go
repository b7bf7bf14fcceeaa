//go:build !linux

package store

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/algal-assay/assay/engine/fault"
)

// nsDirs holds nothing where directories are not held open (dirfd_linux.go):
// every object is reached by its path, root and namespace checked for
// symbolic links each time.
type nsDirs struct{}

func newNSDirs() *nsDirs { return &nsDirs{} }

// nsDir is a namespace directory by its path.
type nsDir struct{ path string }

// openDir checks the namespace directory sub on the way to an object and
// with create makes it.
func (f *FileStore) openDir(op, sub string, create bool) (*nsDir, error) {
	path, err := f.dir(sub)
	if err != nil {
		return nil, err
	}
	if create {
		if err := os.MkdirAll(path, 0o755); err != nil {
			return nil, errf(fault.IOFailed, op, path, "%v", unwrap(err))
		}
		if err := noLink(path); err != nil {
			return nil, err
		}
	}
	return &nsDir{path: path}, nil
}

// gone is false: a directory by path is never stale.
func (f *FileStore) gone(string, *nsDir) bool { return false }

func (d *nsDir) name(name string) string { return filepath.Join(d.path, name) }

// read reads the object file name in d (readRegular) and its permission.
func (d *nsDir) read(op, name string, max int) ([]byte, fs.FileMode, bool, error) {
	return readRegularMode(op, d.name(name), max)
}

// stat is Has's look at the entry name in d, without following it.
func (d *nsDir) stat(op, name string) (bool, error) {
	return statRegular(op, d.name(name))
}

// publishNew is not done (done false): objects are published the
// portable way (publish).
func (f *FileStore) publishNew(string, *nsDir, string, []byte) (installed, done bool, err error) {
	return false, false, nil
}

// exists says an entry (of any kind) is at name in d.
func (d *nsDir) exists(name string) bool {
	_, err := os.Lstat(d.name(name))
	return err == nil
}

// remove removes the entry name from d.
func (d *nsDir) remove(name string) error { return os.Remove(d.name(name)) }

// linkEntry hard-links the file name in from to the same name in to.
func linkEntry(from, to *nsDir, name string) error {
	return os.Link(from.name(name), to.name(name))
}

// statRegular reports whether a regular file is at path, without
// following a final symlink; anything else there is IO_FAILED.
func statRegular(op, path string) (bool, error) {
	st, err := os.Lstat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		return false, errf(fault.IOFailed, op, path, "%v", unwrap(err))
	}
	if !st.Mode().IsRegular() {
		return false, errf(fault.IOFailed, op, path, "not a regular file (%s)", st.Mode().Type())
	}
	return true, nil
}
