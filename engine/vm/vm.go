// Package vm is the ALGAL run engine: it schedules a manifest's cells,
// activates local cells (input, const, fn, expr, store, load, slot, tool;
// the builtin fn bodies live in engine/builtins) and effect cells (agent,
// classifier, gate, decide, recall) through the host's executors, keeps
// the work ledger, writes the algal.run.v1 receipt (built as the typed
// receipt.Receipt, sealed as its canonical value), and verifies a receipt
// by replaying the run offline against its own recorded effects.
//
// A Host carries everything a run may use (store, executors, function and
// tool registries, transports); nothing is global. A run is a tree of
// scopes: the root manifest and every nested organism, repeat round, each
// item and spawned child run in a scope with a path prefix
// ("inbox/", "loop/r0/", "map/i2/") while sharing the root's budgets,
// ledger, effects list and event log.
package vm

import (
	"context"
	"errors"
	"fmt"

	"github.com/algal-assay/assay/engine/builtins"
	"github.com/algal-assay/assay/engine/bundle"
	"github.com/algal-assay/assay/engine/effect"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/manifest"
	"github.com/algal-assay/assay/engine/receipt"
	"github.com/algal-assay/assay/engine/store"
)

// Run-time bounds.
const (
	MaxValueBytes   = 262_144
	MaxBlobBytes    = 262_144
	MaxManyItems    = 4_096
	MaxExprFuel     = 100_000
	MaxRecallQuery  = 4_096
	MaxHitText      = 2_048
	DefaultEffectMs = 120_000
	DefaultToolMs   = 30_000
)

// Failure is a cell or run failure: a contract code and a message. It is
// what a failed cell record carries and what an on:"fail" edge delivers.
//
// It is a value, not an error: a receipt records a failure as exactly
// these two fields, so a located *fault.Error (a store key, a byte
// offset) is flattened into its whole text once, by asFailure, and no
// location can be dropped on the way to a record. Errors are *fault.Error
// everywhere; the one place a Failure must travel as an error (a child
// manifest the resolver could not fetch, out through manifest.Compile) it
// rides a failureError.
type Failure struct {
	Code    string
	Message string
}

// record is the failure as its cell's record keeps it; an on:"fail"
// edge delivers its value.
func (f *Failure) record() receipt.Failure {
	return receipt.Failure{Code: f.Code, Message: f.Message}
}

func failf(code, format string, a ...any) *Failure {
	return &Failure{Code: code, Message: fmt.Sprintf(format, a...)}
}

// failureError carries a cell failure through an API that returns errors.
// It prints "CODE: message" and unwraps to the *fault.Error of that code,
// and asFailure gives the Failure back unchanged, so a spawned child's
// fetch failure is recorded as the cell would have recorded it.
type failureError struct{ f *Failure }

func (e *failureError) Error() string { return e.f.Code + ": " + e.f.Message }

func (e *failureError) Unwrap() error { return &fault.Error{Code: e.f.Code, Message: e.f.Message} }

// asFailure maps any error raised inside an activation to a cell failure,
// keeping a contract code when the error has one. A bare coded error (an
// effect failure) prints its message alone; a located one keeps its
// location in the message.
func asFailure(err error) *Failure {
	var fe *failureError
	if errors.As(err, &fe) {
		return fe.f
	}
	f := fault.Flat(err, fault.Internal)
	return &Failure{Code: f.Code, Message: f.Message}
}

// Host is what a run may use. The zero value of every optional field is
// safe: no router means every effect is recorded unbound.
type Host struct {
	Store store.Store
	// Router selects executors for effect requests and serves host tool
	// requests (Router.Tools). Verification installs a replay router.
	Router *effect.Router
	// Fns adds host registry functions beside the builtins; Signatures
	// types them (builtin signatures come from the manifest package).
	Fns        map[string]Fn
	Signatures map[string]manifest.Signature
	// Transports maps a transport name to a bundle source spec: a
	// directory of <hex>.bundle.json files or an http(s) base URL (default
	// deadline). Sources, when it names the same transport, wins: it
	// carries configured deadlines (--transports FILE).
	Transports map[string]string
	Sources    bundle.Transports
	// Context bounds live effect calls (cancellation only).
	Context context.Context

	// recorded holds the checked receipt's cells during verification, so
	// slot reads and transport provenance replay from the record.
	recorded map[string]*receipt.Cell
	toolSigs map[string]manifest.Signature
}

func (h *Host) fn(name string) (Fn, manifest.Signature, bool) {
	if s, ok := h.Signatures[name]; ok {
		if f, ok := h.Fns[name]; ok {
			return f, s, true
		}
	}
	s, ok := manifest.Builtin(name)
	if !ok {
		return nil, manifest.Signature{}, false
	}
	f, ok := builtinFns[name]
	return f, s, ok
}

// builtinFns are the builtin bodies (engine/builtins), built once: the map
// is never written.
var builtinFns = builtins.Funcs()

// Fn is a registry function body (see builtins.Fn); host functions have
// the same shape as builtins.
type Fn = builtins.Fn
