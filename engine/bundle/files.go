package bundle

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/store"
	"github.com/algal-assay/assay/internal/atomicfile"
)

// Bundle files as the CLI reads and writes them (`assay pack`, `bundle`,
// `unpack`, `foundry pack`/`export`).

// Summary is what the CLI prints for a bundle it wrote or installed:
// {root, manifests, values[, out]}.
func (b *Bundle) Summary(out string) map[string]any {
	v := map[string]any{"root": b.Root, "manifests": float64(len(b.Manifests)), "values": float64(len(b.Values))}
	if out != "" {
		v["out"] = out
	}
	return v
}

// WriteInto writes b into dir as <hex>.bundle.json, as upstream names it,
// and returns the file's path.
func WriteInto(dir string, b *Bundle) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", &fault.Error{Code: fault.IOFailed, Message: err.Error()}
	}
	path := filepath.Join(dir, strings.TrimPrefix(b.Root, "sha256:")+".bundle.json")
	return path, WriteFile(path, b)
}

// WriteFile writes b's canonical bytes to path atomically. A file already
// there with the same bytes is left alone; with other bytes it is
// DIGEST_MISMATCH.
func WriteFile(path string, b *Bundle) error {
	data, err := canon.Encode(b.Value())
	if err != nil {
		return err
	}
	if old, err := os.ReadFile(path); err == nil {
		if !bytes.Equal(old, data) {
			return &fault.Error{Code: fault.DigestMismatch, Message: path + ": an existing bundle file holds other bytes"}
		}
		return nil
	}
	if err := atomicfile.Write(path, data); err != nil {
		return &fault.Error{Code: fault.IOFailed, Message: fmt.Sprintf("%s: %v", path, err)}
	}
	return nil
}

// InstallFile reads the bundle file at path (every entry re-hashed) and
// installs it into the file store under dir.
func InstallFile(dir, path string) (*Bundle, error) {
	st, err := store.OpenFileStore(dir)
	if err != nil {
		return nil, err
	}
	b, err := ReadFile(path)
	if err != nil {
		return nil, err
	}
	if err := b.Install(st); err != nil {
		return nil, err
	}
	return b, nil
}
