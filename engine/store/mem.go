package store

import (
	"slices"
	"sync"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
)

// MemStore keeps everything in memory. It is safe for concurrent use.
// Objects are admitted through canonical encoding, so their keys are right
// by construction, and the store keeps its own copy (decoded from those
// bytes): a caller that goes on mutating a value it stored cannot change
// what a digest names. Values handed out are shared and read-only.
type MemStore struct {
	mu      sync.RWMutex
	objects map[Namespace]map[string]any
	effects map[string]map[string]any
	slots   map[string]any
}

// NewMemStore returns an empty memory store.
func NewMemStore() *MemStore {
	return &MemStore{
		objects: map[Namespace]map[string]any{},
		effects: map[string]map[string]any{},
		slots:   map[string]any{},
	}
}

// Put implements Store.
func (m *MemStore) Put(ns Namespace, v any) (string, error) {
	b, err := encodeObject(ns, v)
	if err != nil {
		return "", err
	}
	return m.putCanonical(ns, b)
}

// PutEncoded implements EncodedPutter.
func (m *MemStore) PutEncoded(ns Namespace, canonical []byte) (string, error) {
	if err := admitEncoded(ns, canonical); err != nil {
		return "", err
	}
	return m.putCanonical(ns, canonical)
}

func (m *MemStore) putCanonical(ns Namespace, b []byte) (string, error) {
	d := canon.DigestBytes(b)
	m.mu.RLock()
	_, present := m.objects[ns][d]
	m.mu.RUnlock()
	if present {
		return d, nil
	}
	own, err := private(b)
	if err != nil {
		return "", errf(fault.Parse, "put", string(ns), "value is not canonical JSON: %v", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	objs := m.objects[ns]
	if objs == nil {
		objs = map[string]any{}
		m.objects[ns] = objs
	}
	if _, ok := objs[d]; !ok {
		objs[d] = own
	}
	return d, nil
}

// Get implements Store.
func (m *MemStore) Get(ns Namespace, digest string) (any, bool, error) {
	if _, err := checkDigest("get", ns, digest); err != nil {
		return nil, false, err
	}
	m.mu.RLock()
	v, ok := m.objects[ns][digest]
	m.mu.RUnlock()
	return v, ok, nil
}

// Has implements Store.
func (m *MemStore) Has(ns Namespace, digest string) (bool, error) {
	_, ok, err := m.Get(ns, digest)
	return ok, err
}

// List implements Store.
func (m *MemStore) List(ns Namespace) ([]string, error) {
	if err := checkNamespace(ns); err != nil {
		return nil, err
	}
	m.mu.RLock()
	out := make([]string, 0, len(m.objects[ns]))
	for d := range m.objects[ns] {
		out = append(out, d)
	}
	m.mu.RUnlock()
	slices.Sort(out)
	return out, nil
}

// GetEffect implements Store.
func (m *MemStore) GetEffect(requestDigest, identity string) (map[string]any, bool, error) {
	key, err := MemoKey(requestDigest, identity)
	if err != nil {
		return nil, false, err
	}
	m.mu.RLock()
	r, ok := m.effects[key]
	m.mu.RUnlock()
	return r, ok, nil
}

// PutEffect implements Store.
func (m *MemStore) PutEffect(record map[string]any, identity string) (map[string]any, error) {
	rd, b, key, err := memoEntry(record, identity)
	if err != nil {
		return nil, err
	}
	own, err := private(b)
	if err != nil {
		return nil, errf(fault.Parse, "effect", rd, "record is not canonical JSON: %v", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if prev, ok := m.effects[key]; ok {
		return prev, nil
	}
	rec := own.(map[string]any)
	m.effects[key] = rec
	return rec, nil
}

// GetSlot implements Store.
func (m *MemStore) GetSlot(name string) (any, bool, error) {
	if err := checkSlotName(name); err != nil {
		return nil, false, err
	}
	m.mu.RLock()
	v, ok := m.slots[name]
	m.mu.RUnlock()
	return v, ok, nil
}

// SetSlot implements Store.
func (m *MemStore) SetSlot(name string, v any) error {
	b, err := encodeSlot(name, v)
	if err != nil {
		return err
	}
	own, err := private(b)
	if err != nil {
		return errf(fault.Parse, "slot", name, "value is not canonical JSON: %v", err)
	}
	m.mu.Lock()
	m.slots[name] = own
	m.mu.Unlock()
	return nil
}

// private decodes canonical bytes into a value no caller holds.
func private(b []byte) (any, error) { return canon.Parse(b, MaxObjectBytes) }
