package bundle

import (
	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/manifest"
	"github.com/algal-assay/assay/engine/store"
	"github.com/algal-assay/assay/internal/atomicfile"
)

// PackFile admits the manifest file at path into st and packs its
// closure (`assay pack`).
func PackFile(st store.Store, path string) (*Bundle, error) {
	m, err := manifest.ReadFile(path)
	if err != nil {
		return nil, err
	}
	root, err := st.Put(store.Manifests, m.Value)
	if err != nil {
		return nil, err
	}
	return Pack(st, root)
}

// PackManifest packs the closure of the manifest arg names (`assay bundle
// pack`): a sha256: digest already in st, or a manifest file (PackFile).
func PackManifest(st store.Store, arg string) (*Bundle, error) {
	if canon.IsDigest(arg) {
		return Pack(st, arg)
	}
	return PackFile(st, arg)
}

// Replace writes b's canonical bytes to path atomically, replacing what
// is there (`assay bundle pack --out`; WriteFile refuses other bytes).
func Replace(path string, b *Bundle) error {
	data, err := canon.Encode(b.Value())
	if err != nil {
		return err
	}
	if err := atomicfile.Write(path, data); err != nil {
		return &fault.Error{Code: fault.IOFailed, Message: err.Error()}
	}
	return nil
}
