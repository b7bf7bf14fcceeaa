package catalog

import (
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/store"
)

// What the store verbs read by name (`assay store get`, `assay manifest`,
// `assay slot get`): the object, verified on read, or STORE_MISS saying
// what is missing.

// Value is the value stored under digest.
func Value(st *store.FileStore, digest string) (any, error) {
	v, ok, err := st.Get(store.Values, digest)
	if err == nil && !ok {
		err = fault.New(fault.StoreMiss, "value not in store")
	}
	return v, err
}

// Manifest is the manifest stored under digest.
func Manifest(st *store.FileStore, digest string) (any, error) {
	v, ok, err := st.Get(store.Manifests, digest)
	if err == nil && !ok {
		err = fault.New(fault.StoreMiss, "manifest %s not found", digest)
	}
	return v, err
}

// Slot is the value of the durable slot name.
func Slot(st *store.FileStore, name string) (any, error) {
	v, ok, err := st.GetSlot(name)
	if err == nil && !ok {
		err = fault.New(fault.StoreMiss, "slot %q is empty", name)
	}
	return v, err
}
