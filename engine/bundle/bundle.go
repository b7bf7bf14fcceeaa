// Package bundle moves organism closures between stores: an
// algal.bundle.v1 value holds a root manifest, every manifest its
// embedding graph reaches (organism, repeat and each cells, recursively)
// and every value a const ref port names, each keyed by its digest.
//
// Pack collects a closure from a store; Decode/Parse admit one (every entry
// re-hashes against its key, the root must be among the manifests) and
// Install writes it into a store. Transports deliver bundles for cells that
// declare via: a Source fetches <hex>.bundle.json from a directory or an
// HTTP(S) base URL under the ingestion bounds (64 MiB before parsing, a
// whole-request deadline, regular files only), and Fetch checks that what
// arrived is rooted where the cell asked. Trust is the digest: a transport
// can only deliver content the manifest already named.
package bundle

import (
	"fmt"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/manifest"
	"github.com/algal-assay/assay/engine/store"
)

// Contract is the bundle contract string.
const Contract = "algal.bundle.v1"

// MaxBytes bounds the bytes a bundle may occupy when received or read,
// checked before parsing.
const MaxBytes = 67_108_864

func errf(code, format string, a ...any) *fault.Error {
	return &fault.Error{Code: code, Message: fmt.Sprintf(format, a...)}
}

// Bundle is an admitted closure. Manifests and Values are keyed by digest;
// every entry is known to hash to its key.
type Bundle struct {
	Root      string
	Manifests map[string]*manifest.Manifest
	Values    map[string]any
}

// Value renders the bundle as its canonical algal.bundle.v1 object.
func (b *Bundle) Value() map[string]any {
	ms := make(map[string]any, len(b.Manifests))
	for d, m := range b.Manifests {
		ms[d] = m.Value
	}
	vs := make(map[string]any, len(b.Values))
	for d, v := range b.Values {
		vs[d] = v
	}
	return map[string]any{"contract": Contract, "root": b.Root, "manifests": ms, "values": vs}
}

// Pack collects the closure of root (a manifest digest) from st: the root,
// every manifest reachable through organism, repeat and each cells, and
// every value a const ref port names. A missing manifest or value is
// STORE_MISS: a bundle is complete or it is not made.
func Pack(st store.Store, root string) (*Bundle, error) {
	if !canon.IsDigest(root) {
		return nil, errf(fault.Parse, "bundle root %q is not a sha256 digest", root)
	}
	b := &Bundle{Root: root, Manifests: map[string]*manifest.Manifest{}, Values: map[string]any{}}
	queue := []string{root}
	for len(queue) > 0 {
		d := queue[0]
		queue = queue[1:]
		if _, seen := b.Manifests[d]; seen {
			continue
		}
		m, err := loadManifest(st, d)
		if err != nil {
			return nil, err
		}
		b.Manifests[d] = m
		for _, c := range m.Cells {
			if c.Embed != nil && c.Embed.Manifest != "" {
				queue = append(queue, c.Embed.Manifest)
			}
			if err := b.packConstRefs(st, c); err != nil {
				return nil, err
			}
		}
	}
	return b, nil
}

// loadManifest loads manifest d from st and checks that it normalizes to d.
func loadManifest(st store.Store, d string) (*manifest.Manifest, error) {
	v, err := store.Load(st, store.Manifests, d)
	if err != nil {
		return nil, err
	}
	m, err := manifest.ParseValue(v)
	if err != nil {
		return nil, err
	}
	if m.Digest != d {
		return nil, errf(fault.DigestMismatch, "stored manifest %s normalizes to %s", d, m.Digest)
	}
	return m, nil
}

// packConstRefs adds the values a const cell's ref ports name.
func (b *Bundle) packConstRefs(st store.Store, c *manifest.Cell) error {
	if c.Kind != manifest.KindConst {
		return nil
	}
	for _, p := range c.Declared {
		ref, ok := p.Value.(string)
		if p.Type != manifest.TypeRef || !p.HasValue || !ok {
			continue
		}
		if _, seen := b.Values[ref]; seen {
			continue
		}
		val, err := store.Load(st, store.Values, ref)
		if err != nil {
			return err
		}
		b.Values[ref] = val
	}
	return nil
}

// Parse admits bundle bytes: at most MaxBytes, strict JSON (no BOM, valid
// UTF-8), then Decode.
func Parse(data []byte) (*Bundle, error) {
	if len(data) > MaxBytes {
		return nil, errf(fault.BudgetExhausted, "bundle is %d bytes, over the %d-byte bound", len(data), MaxBytes)
	}
	v, err := canon.Parse(data, MaxBytes)
	if err != nil {
		return nil, err
	}
	return Decode(v)
}

// ReadFile reads and admits a bundle file (regular files only; a FIFO or
// device is refused before anything is read). canon.ReadFile parses a
// large bundle without holding its text beside its value.
func ReadFile(path string) (*Bundle, error) {
	v, err := canon.ReadFile(path, MaxBytes)
	if err != nil {
		return nil, err
	}
	b, err := Decode(v)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return b, nil
}

// Decode admits a bundle value: the closed key set {contract, root,
// manifests, values}, every manifest parsing and normalizing to its key,
// every value hashing to its key, and the root among the manifests.
func Decode(v any) (*Bundle, error) {
	root, ms, vs, err := bundleObject(v)
	if err != nil {
		return nil, err
	}
	b := &Bundle{Root: root, Manifests: make(map[string]*manifest.Manifest, len(ms)), Values: make(map[string]any, len(vs))}
	for _, k := range canon.SortedKeys(ms) {
		if b.Manifests[k], err = decodeManifest(k, ms[k]); err != nil {
			return nil, err
		}
	}
	for _, k := range canon.SortedKeys(vs) {
		if err := checkValue(k, vs[k]); err != nil {
			return nil, err
		}
		b.Values[k] = vs[k]
	}
	if _, ok := b.Manifests[root]; !ok {
		return nil, errf(fault.DigestMismatch, "bundle root %s is not among its manifests", root)
	}
	return b, nil
}

// bundleObject admits the bundle's outer object and returns its root, its
// manifests and its values (none when absent).
func bundleObject(v any) (string, map[string]any, map[string]any, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return "", nil, nil, errf(fault.Parse, "bundle must be an object")
	}
	if k, bad := canon.UnknownKey(obj, "contract", "root", "manifests", "values"); bad {
		return "", nil, nil, errf(fault.Parse, "bundle has unknown field %q", k)
	}
	if obj["contract"] != Contract {
		return "", nil, nil, errf(fault.Parse, "bundle contract must be %s", Contract)
	}
	root, _ := obj["root"].(string)
	if !canon.IsDigest(root) {
		return "", nil, nil, errf(fault.Parse, "bundle root must be a sha256 digest")
	}
	ms, ok := obj["manifests"].(map[string]any)
	if !ok {
		return "", nil, nil, errf(fault.Parse, "bundle manifests must be an object keyed by digest")
	}
	vs := map[string]any{}
	if raw, present := obj["values"]; present {
		if vs, ok = raw.(map[string]any); !ok {
			return "", nil, nil, errf(fault.Parse, "bundle values must be an object keyed by digest")
		}
	}
	return root, ms, vs, nil
}

// decodeManifest admits the manifest filed under key k: the entry hashes
// to k as written and normalizes to k.
func decodeManifest(k string, v any) (*manifest.Manifest, error) {
	if !canon.IsDigest(k) {
		return nil, errf(fault.Parse, "bundle manifest key %q is not a sha256 digest", k)
	}
	raw, err := canon.Digest(v)
	if err != nil {
		return nil, errf(fault.Parse, "bundle manifest %s: %v", k, err)
	}
	if raw != k {
		return nil, errf(fault.DigestMismatch, "bundle manifest %s hashes to %s", k, raw)
	}
	m, err := manifest.ParseValue(v)
	if err != nil {
		return nil, err
	}
	// A key that matches the raw entry but not its normalization would
	// name a manifest nobody can reference by digest.
	if m.Digest != k {
		return nil, errf(fault.DigestMismatch, "bundle manifest %s normalizes to %s", k, m.Digest)
	}
	return m, nil
}

// checkValue admits the value filed under key k: it hashes to k.
func checkValue(k string, v any) error {
	if !canon.IsDigest(k) {
		return errf(fault.Parse, "bundle value key %q is not a sha256 digest", k)
	}
	if d, err := canon.Digest(v); err != nil || d != k {
		return errf(fault.DigestMismatch, "bundle value %s does not hash to its key", k)
	}
	return nil
}

// Install writes every manifest and value into st (the store re-checks any
// copy it already holds).
func (b *Bundle) Install(st store.Store) error {
	for _, d := range canon.SortedKeys(b.Manifests) {
		if _, err := st.Put(store.Manifests, b.Manifests[d].Value); err != nil {
			return err
		}
	}
	for _, d := range canon.SortedKeys(b.Values) {
		if _, err := st.Put(store.Values, b.Values[d]); err != nil {
			return err
		}
	}
	return nil
}

// Unpack admits bundle bytes and installs them into st.
func Unpack(st store.Store, data []byte) (*Bundle, error) {
	b, err := Parse(data)
	if err != nil {
		return nil, err
	}
	if err := b.Install(st); err != nil {
		return nil, err
	}
	return b, nil
}
