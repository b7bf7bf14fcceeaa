package store

import (
	"errors"

	"golang.org/x/sys/unix"
)

// renameNoReplace is renameat2(2) with RENAME_NOREPLACE; a variable so a
// test can stand in for a file system that refuses the flag.
var renameNoReplace = func(from, to string) error {
	return unix.Renameat2(unix.AT_FDCWD, from, unix.AT_FDCWD, to, unix.RENAME_NOREPLACE)
}

// installNew moves the temporary file tmp to path unless path exists, in
// one atomic step: renameat2 with RENAME_NOREPLACE names the object and
// removes the temporary name together, where a hard link needs a second
// call to unlink it. installed is false when path was taken; moved
// reports whether tmp is gone. A kernel or file system that refuses the
// flag (ENOSYS, EINVAL, ENOTSUP, or EPERM from a seccomp filter) falls
// back to the portable link.
func installNew(tmp, path string) (installed, moved bool, err error) {
	err = renameNoReplace(tmp, path)
	switch {
	case err == nil:
		return true, true, nil
	case errors.Is(err, unix.EEXIST):
		return false, false, nil
	case errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EINVAL), errors.Is(err, unix.ENOTSUP), errors.Is(err, unix.EPERM):
		installed, err = linkNew(tmp, path)
		return installed, false, err
	}
	return false, false, err
}
