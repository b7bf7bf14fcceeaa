// Package store is the content-addressed store a run reads and writes:
// manifests, values and receipts named by the digest of their canonical
// bytes, the effect memo index (first successful record wins), and named
// mutable slots. Every immutable read re-hashes what it found against the
// name it was asked for, so a tampered object can never pass as the one a
// digest names.
//
// Two implementations share the Store interface: FileStore, the on-disk
// layout upstream's file store uses (default directory .algal), and
// MemStore, for tests, benchmarks and throwaway runs. A FileStore's Batch
// defers durability to one Commit for many writes (a bench part's
// receipts); whoever publishes a document naming stored objects commits
// first (Commit, Committer). Overlay layers a
// memory store over any other so verification can write without touching
// the store it reads.
package store

import (
	"fmt"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
)

// Namespace names one family of immutable, digest-keyed objects.
type Namespace string

// The immutable namespaces. A receipt's key in Runs is the digest of the
// full receipt including its own "digest" field (the storage reference),
// which differs from the receipt's intrinsic digest.
const (
	Manifests Namespace = "manifests"
	Values    Namespace = "values"
	Runs      Namespace = "runs"
)

// Bounds taken from the upstream store.
const (
	// MaxObjectBytes bounds one immutable object.
	MaxObjectBytes = canon.MaxDocumentBytes
	// MaxSlotBytes bounds one slot value's canonical bytes.
	MaxSlotBytes = 262_144
	// MemoContract tags the memo key so it can never collide with a value
	// digest.
	MemoContract = "algal.effect-cache.v1"
)

// Store is the persistence surface of a run. Values are plain canonical JSON
// values (nil, bool, float64, string, []any, map[string]any); a value
// returned by Get may be shared with the store and must be treated as
// read-only.
type Store interface {
	// Put stores v under the digest of its canonical bytes and returns that
	// digest. Putting an object that is already present is a no-op, except
	// that the present copy must still hash to its key (DIGEST_MISMATCH).
	Put(ns Namespace, v any) (string, error)
	// Get returns the object named by digest; ok is false when it is absent.
	// A present object whose content does not hash to digest is
	// DIGEST_MISMATCH.
	Get(ns Namespace, digest string) (v any, ok bool, err error)
	// Has reports whether an object is present without reading it.
	Has(ns Namespace, digest string) (bool, error)
	// List returns the digests present in ns in ascending order.
	List(ns Namespace) ([]string, error)

	// GetEffect reads the memoized effect record for a request as served by
	// the executor whose cache identity is given ("" scopes by the request
	// digest alone). ok is false on a miss.
	GetEffect(requestDigest, identity string) (record map[string]any, ok bool, err error)
	// PutEffect memoizes a successful effect record ({requestDigest,
	// executor, output, usage?}). The first record stored under a key wins
	// and is never overwritten; PutEffect returns the record that is now
	// retained, which may be an earlier writer's.
	PutEffect(record map[string]any, identity string) (map[string]any, error)

	// GetSlot reads a named mutable slot; ok is false when it was never
	// written.
	GetSlot(name string) (v any, ok bool, err error)
	// SetSlot overwrites a named slot.
	SetSlot(name string, v any) error
}

// EncodedPutter is a store that takes an object together with its
// canonical bytes, so a caller that already encoded the object (a sealed
// receipt) spares Put a second encoding.
type EncodedPutter interface {
	// PutEncoded is Put of the value whose canonical bytes (exactly what
	// canon.Encode gives) are canonical: they are stored and named as
	// they are.
	PutEncoded(ns Namespace, canonical []byte) (string, error)
}

// PutEncoded stores v, whose canonical bytes the caller holds, through
// s's PutEncoded where it has one and its Put otherwise.
func PutEncoded(s Store, ns Namespace, v any, canonical []byte) (string, error) {
	if p, ok := s.(EncodedPutter); ok {
		return p.PutEncoded(ns, canonical)
	}
	return s.Put(ns, v)
}

func errf(code, op, path, format string, a ...any) *fault.Error {
	return &fault.Error{Code: code, Op: "store " + op, File: path, Message: fmt.Sprintf(format, a...)}
}

// Load is Get with absence reported as STORE_MISS, for callers that need the
// object to exist (a manifest named by an organism cell, a receipt).
func Load(s Store, ns Namespace, digest string) (any, error) {
	v, ok, err := s.Get(ns, digest)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errf(fault.StoreMiss, "get", string(ns)+"/"+digest, "not in store")
	}
	return v, nil
}

// MemoKey is the memo index key of a request served under a cache identity:
// the digest of {"contract","executor","requestDigest"}, so one request
// served by two executors never shares an entry. An empty identity keys by
// the request digest itself.
func MemoKey(requestDigest, identity string) (string, error) {
	if !canon.IsDigest(requestDigest) {
		return "", errf(fault.Parse, "effect", requestDigest, "request digest is not a sha256 digest token")
	}
	if identity == "" {
		return requestDigest, nil
	}
	return canon.Digest(map[string]any{
		"contract":      MemoContract,
		"executor":      identity,
		"requestDigest": requestDigest,
	})
}

func checkNamespace(ns Namespace) error {
	switch ns {
	case Manifests, Values, Runs:
		return nil
	}
	return errf(fault.Parse, "access", string(ns), "unknown store namespace")
}

func checkDigest(op string, ns Namespace, digest string) (string, error) {
	if err := checkNamespace(ns); err != nil {
		return "", err
	}
	hex, ok := canon.DigestHex(digest)
	if !ok {
		return "", errf(fault.Parse, op, string(ns)+"/"+digest, "key is not a sha256 digest token")
	}
	return hex, nil
}

// memoEntry admits record for the memo index and returns what every store
// files it under: its request digest, its canonical bytes and its memo key.
func memoEntry(record map[string]any, identity string) (rd string, b []byte, key string, err error) {
	if rd, err = checkMemoRecord(record); err != nil {
		return "", nil, "", err
	}
	if b, err = canon.Encode(record); err != nil {
		return "", nil, "", errf(fault.Parse, "effect", rd, "record is not canonical JSON: %v", err)
	}
	if key, err = MemoKey(rd, identity); err != nil {
		return "", nil, "", err
	}
	return rd, b, key, nil
}

// checkMemoRecord admits a record for the memo index: a successful effect
// record naming its request. Errors are never memoized because a recorded
// failure may be transient.
func checkMemoRecord(record map[string]any) (string, error) {
	rd, _ := record["requestDigest"].(string)
	if !canon.IsDigest(rd) {
		return "", errf(fault.Parse, "effect", "", "memo record needs a requestDigest digest token")
	}
	if _, ok := record["error"]; ok {
		return "", errf(fault.Parse, "effect", rd, "failed effects are never memoized")
	}
	if _, ok := record["output"]; !ok {
		return "", errf(fault.Parse, "effect", rd, "memo record carries no output")
	}
	for k := range record {
		switch k {
		case "requestDigest", "executor", "output", "usage":
		default:
			return "", errf(fault.Parse, "effect", rd, "memo record has unexpected field %q", k)
		}
	}
	if _, ok := record["executor"].(string); !ok {
		return "", errf(fault.Parse, "effect", rd, "memo record needs an executor id")
	}
	return rd, nil
}

// checkSlotName admits a slot name: a lowercase kebab id of at most 64
// bytes, which also keeps it a safe file name.
func checkSlotName(name string) error {
	if !canon.IsID(name) {
		return errf(fault.Parse, "slot", name, "slot name must be a lowercase id ([a-z][a-z0-9-]*, at most 64 bytes)")
	}
	return nil
}

func encodeObject(ns Namespace, v any) ([]byte, error) {
	if err := checkNamespace(ns); err != nil {
		return nil, err
	}
	b, err := canon.Encode(v)
	if err != nil {
		return nil, errf(fault.Parse, "put", string(ns), "value is not canonical JSON: %v", err)
	}
	return b, checkObjectSize(ns, b)
}

// admitEncoded admits an object's canonical bytes as encodeObject would
// have produced them.
func admitEncoded(ns Namespace, b []byte) error {
	if err := checkNamespace(ns); err != nil {
		return err
	}
	return checkObjectSize(ns, b)
}

func checkObjectSize(ns Namespace, b []byte) error {
	if len(b) > MaxObjectBytes {
		return errf(fault.BudgetExhausted, "put", string(ns), "object is %d bytes, over the %d-byte bound", len(b), MaxObjectBytes)
	}
	return nil
}

func encodeSlot(name string, v any) ([]byte, error) {
	if err := checkSlotName(name); err != nil {
		return nil, err
	}
	b, err := canon.Encode(v)
	if err != nil {
		return nil, errf(fault.Parse, "slot", name, "value is not canonical JSON: %v", err)
	}
	if len(b) > MaxSlotBytes {
		return nil, errf(fault.BudgetExhausted, "slot", name, "slot value is %d bytes, over the %d-byte bound", len(b), MaxSlotBytes)
	}
	return b, nil
}
