package diff

import (
	"os"
	"path/filepath"

	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/internal/atomicfile"
)

// Render is d as `assay ci diff --format` names it: "json" (JSON), else
// the Markdown report.
func Render(d *Diff, format string) ([]byte, error) {
	if format == "json" {
		return d.JSON()
	}
	return []byte(Markdown(d, RenderOptions{})), nil
}

// WriteOut writes a rendered diff to the file path (`--out`) atomically,
// making its directory first.
func WriteOut(path string, b []byte) error {
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return &fault.Error{Code: fault.IOFailed, Message: "--out " + path, Err: err}
		}
	}
	if err := atomicfile.Write(path, b); err != nil {
		return &fault.Error{Code: fault.IOFailed, Message: "--out " + path, Err: err}
	}
	return nil
}
