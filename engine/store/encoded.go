package store

import "github.com/algal-assay/assay/engine/canon"

// GetEncoded is Get that returns the object's canonical bytes instead of
// its value, checked against digest like every read: a copy between
// stores (`assay ci merge`) moves bytes without parsing and re-encoding
// what already hashes to its name. Stored bytes that are not canonical but
// hold the value digest names are parsed, checked and encoded.
func (f *FileStore) GetEncoded(ns Namespace, digest string) ([]byte, bool, error) {
	path, b, ok, err := f.readObject(ns, digest)
	if err != nil || !ok {
		return nil, false, err
	}
	if canon.DigestBytes(b) == digest {
		return b, true, nil
	}
	v, err := verified("get", path, b, digest)
	if err != nil {
		return nil, false, err
	}
	if b, err = canon.Encode(v); err != nil {
		return nil, false, err
	}
	return b, true, nil
}
