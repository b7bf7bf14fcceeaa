package store

import (
	"errors"
	"os"

	"github.com/algal-assay/assay/engine/fault"
	"golang.org/x/sys/unix"
)

// syncPaths is a batch's barrier. On Linux it is one syncfs(2) of the file
// system holding the store: a single journal commit however many objects
// the batch wrote, where an fsync per file forces one commit each. A file
// system that refuses syncfs falls back to fsyncing each file and
// directory.
func syncPaths(root string, paths []string) error {
	d, err := os.Open(root)
	if err != nil {
		return errf(fault.IOFailed, "commit", root, "%v", unwrap(err))
	}
	defer d.Close()
	barriers.Add(1)
	err = unix.Syncfs(int(d.Fd()))
	if err == nil {
		return nil
	}
	if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.EPERM) {
		return syncEach(paths)
	}
	return errf(fault.IOFailed, "commit", root, "syncfs: %v", err)
}
