package runrecord

import (
	"os"
	"path/filepath"
	"strings"
)

// tempPrefix marks the writer's temporary files; readers skip them (a
// SIGKILL between create and rename can leave one behind, never a torn
// record).
const tempPrefix = ".assay-tmp-"

func isTempName(name string) bool { return strings.HasPrefix(name, tempPrefix) }

// writeAtomic replaces path with data so that a reader (or a crash) sees
// either the old bytes or the new, never a mix: the bytes go to a temporary
// file in the same directory, are fsynced, renamed over path, and the
// directory is fsynced so the rename itself survives a power cut.
func writeAtomic(path string, data []byte) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, tempPrefix+base+"-*")
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
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Chmod(0o644); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp, path); err != nil {
		return err
	}
	return syncDir(dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
