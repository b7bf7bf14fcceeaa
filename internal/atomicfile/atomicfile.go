// Package atomicfile replaces files so that a reader, or a crash, sees
// either the old bytes or the new ones, never a mix. Run records, reports,
// receipts written with --out and run directories all go through it.
package atomicfile

import (
	"os"
	"path/filepath"
	"strings"
)

// TempPrefix marks the temporary files a write leaves behind only when it
// is killed between create and rename; readers skip such names.
const TempPrefix = ".assay-tmp-"

// IsTemp reports whether a file name is one of Write's temporary files.
func IsTemp(name string) bool { return strings.HasPrefix(name, TempPrefix) }

// Write replaces path with data: the bytes go to a temporary file in the
// same directory, are fsynced and renamed over path, and the directory is
// fsynced so the rename itself survives a power cut.
func Write(path string, data []byte) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, TempPrefix+base+"-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err = fill(f, data); err != nil {
		return err
	}
	if err = os.Rename(tmp, path); err != nil {
		return err
	}
	return syncDir(dir)
}

// fill writes data to the temporary file, makes it world-readable, syncs
// and closes it.
func fill(f *os.File, data []byte) error {
	if _, err := f.Write(data); err != nil {
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	return f.Close()
}

// syncDir fsyncs a directory, so a rename in it survives a power cut.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
