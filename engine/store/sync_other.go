//go:build !linux

package store

// syncPaths is a batch's barrier: an fsync of each file and directory,
// where no whole-file-system sync is available.
func syncPaths(_ string, paths []string) error { return syncEach(paths) }
