package store

import "slices"

// Overlay is a store whose writes stay in memory while reads fall through
// to a base store it never modifies. Verification replays a run on an
// overlay so checking a receipt leaves the checked store exactly as it was.
type Overlay struct {
	base Store
	top  *MemStore
}

// NewOverlay layers a fresh memory store over base.
func NewOverlay(base Store) *Overlay {
	return &Overlay{base: base, top: NewMemStore()}
}

// Put implements Store; the object lands in the memory layer only.
func (o *Overlay) Put(ns Namespace, v any) (string, error) { return o.top.Put(ns, v) }

// PutEncoded implements EncodedPutter, in the memory layer only.
func (o *Overlay) PutEncoded(ns Namespace, canonical []byte) (string, error) {
	return o.top.PutEncoded(ns, canonical)
}

// Get implements Store.
func (o *Overlay) Get(ns Namespace, digest string) (any, bool, error) {
	if v, ok, err := o.top.Get(ns, digest); err != nil || ok {
		return v, ok, err
	}
	return o.base.Get(ns, digest)
}

// Has implements Store.
func (o *Overlay) Has(ns Namespace, digest string) (bool, error) {
	if ok, err := o.top.Has(ns, digest); err != nil || ok {
		return ok, err
	}
	return o.base.Has(ns, digest)
}

// List implements Store: the union of both layers.
func (o *Overlay) List(ns Namespace) ([]string, error) {
	a, err := o.top.List(ns)
	if err != nil {
		return nil, err
	}
	b, err := o.base.List(ns)
	if err != nil {
		return nil, err
	}
	out := append(a, b...)
	slices.Sort(out)
	return slices.Compact(out), nil
}

// GetEffect implements Store.
func (o *Overlay) GetEffect(requestDigest, identity string) (map[string]any, bool, error) {
	if r, ok, err := o.top.GetEffect(requestDigest, identity); err != nil || ok {
		return r, ok, err
	}
	return o.base.GetEffect(requestDigest, identity)
}

// PutEffect implements Store. A base record still wins over a new one, as it
// would in the base store itself.
func (o *Overlay) PutEffect(record map[string]any, identity string) (map[string]any, error) {
	if rd, ok := record["requestDigest"].(string); ok {
		if r, hit, err := o.base.GetEffect(rd, identity); err != nil || hit {
			return r, err
		}
	}
	return o.top.PutEffect(record, identity)
}

// GetSlot implements Store.
func (o *Overlay) GetSlot(name string) (any, bool, error) {
	if v, ok, err := o.top.GetSlot(name); err != nil || ok {
		return v, ok, err
	}
	return o.base.GetSlot(name)
}

// SetSlot implements Store.
func (o *Overlay) SetSlot(name string, v any) error { return o.top.SetSlot(name, v) }
