// Package evidence holds what the measurement layers (bench and foundry)
// share about runs: how interface args become run args, what a receipt
// says about outputs, work and tokens, how a pass claim is judged, and the
// interfaces through which they run organisms and read stored evidence.
// It keeps bench and foundry from depending on the VM or on each other.
package evidence

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/effect"
	"github.com/algal-assay/assay/engine/expr"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/manifest"
	"github.com/algal-assay/assay/engine/receipt"
)

// ScorerFuel is the fuel each scorer evaluation gets.
const ScorerFuel = 100_000

// Runner executes organisms; the VM provides it.
type Runner interface {
	// Open prepares one contender. Its executors live as long as the
	// session, so a scripted queue is shared by all of its cases.
	Open(ctx context.Context, m *manifest.Manifest, executors map[string]string) (Session, error)
}

// Session runs one contender's cases.
type Session interface {
	// Ordered reports whether cases must run one at a time in case order,
	// as when scripted responses form one shared ordered queue.
	Ordered() bool
	// Run executes the manifest with cell-keyed args, stores the receipt
	// and returns it with its digest. A Session that is not Ordered must
	// accept concurrent calls.
	Run(ctx context.Context, args map[string]any) (receipt map[string]any, digest string, err error)
}

// ExecutorBuilder builds the executor for one named spec of a contender's
// executors map (m is the contender's manifest), for specs whose executors
// the caller owns: live model backends behind a recording archive. ok
// false leaves the spec to the runner.
type ExecutorBuilder func(name, spec string, m *manifest.Manifest) (ex effect.Executor, ok bool, err error)

// LiveRunner is a Runner that admits executors its caller builds.
type LiveRunner interface {
	Runner
	// WithExecutors returns a runner that asks build first for every spec.
	WithExecutors(build ExecutorBuilder) Runner
}

// Committer is a Runner whose stored receipts become durable at one
// barrier rather than one by one (vm.Workbench over a store.Batch). The
// measurement layers commit after their last run and before they return a
// report, so no report can name a receipt a crash could still lose: one
// barrier per report, whatever its number of cases.
type Committer interface {
	Commit() error
}

// Commit commits r when it is a Committer; any other runner's receipts are
// durable as they are stored.
func Commit(r Runner) error {
	if c, ok := r.(Committer); ok {
		return c.Commit()
	}
	return nil
}

// Store is where a report's claims are checked.
type Store interface {
	Manifest(digest string) (*manifest.Manifest, error)
	Receipt(digest string) (map[string]any, error)
	// Replay re-runs receipt offline against m and names every divergence.
	Replay(ctx context.Context, receipt map[string]any, m *manifest.Manifest) ([]string, error)
}

// DefaultConcurrency is the worker count for cases when a caller leaves it
// zero: one per CPU, at least two.
func DefaultConcurrency() int { return max(2, runtime.GOMAXPROCS(0)) }

// Resolve joins a relative path to the config directory.
func Resolve(dir, path string) string {
	if filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(dir, path)
}

// CellArgs maps interface args onto the cell-keyed run args of m.
func CellArgs(m *manifest.Manifest, args map[string]any) map[string]any {
	out := map[string]any{}
	if m.Interface == nil {
		return out
	}
	for _, p := range m.Interface.Inputs {
		v, ok := args[p.Name]
		if !ok {
			continue
		}
		cell, _ := out[p.Cell].(map[string]any)
		if cell == nil {
			cell = map[string]any{}
			out[p.Cell] = cell
		}
		cell[p.Port] = v
	}
	return out
}

// InterfaceOutputs reads m's interface outputs from a root receipt: the
// committed value of each output's cell port. Outputs that never committed
// are absent. The receipt need not be valid (receipt.Unchecked): reports
// compare these with their claims before the receipt is replayed.
func InterfaceOutputs(m *manifest.Manifest, rec map[string]any) map[string]any {
	out := map[string]any{}
	if m.Interface == nil {
		return out
	}
	for _, p := range m.Interface.Outputs {
		if v, ok := receipt.Unchecked(rec).CommittedOutput(p.Cell, p.Port); ok {
			out[p.Name] = v
		}
	}
	return out
}

// Work is a receipt's work ledger.
type Work struct{ Steps, AgentCalls, Units int64 }

// Add accumulates o into w.
func (w *Work) Add(o Work) {
	w.Steps += o.Steps
	w.AgentCalls += o.AgentCalls
	w.Units += o.Units
}

// Value is the canonical JSON form.
func (w Work) Value() map[string]any {
	return map[string]any{"steps": float64(w.Steps), "agentCalls": float64(w.AgentCalls), "units": float64(w.Units)}
}

// ReceiptWork reads a receipt's work ledger (receipt.Unchecked).
func ReceiptWork(rec map[string]any) Work {
	w := receipt.Unchecked(rec).Work()
	return Work{Steps: int64(w.Steps), AgentCalls: int64(w.AgentCalls), Units: int64(w.Units)}
}

// Effects returns a receipt's effect records in order.
func Effects(receipt map[string]any) []map[string]any {
	list, _ := receipt["effects"].([]any)
	out := make([]map[string]any, 0, len(list))
	for _, e := range list {
		if m, ok := e.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// Scorer judges pass claims. A nil *Scorer is exact match: the canonical
// interface outputs must equal expect.
type Scorer struct {
	// Envelope is the recorded {"contract":"algal.expr.v1","program":...}.
	Envelope map[string]any
	prog     *expr.Program
}

// scorerNames are the names a scorer program may read.
var scorerNames = []string{"args", "expect", "outputs"}

// CompileScorer admits a scorer envelope; field names it in errors.
func CompileScorer(v any, field string) (*Scorer, error) {
	env, prog, err := CompileEnvelope(v, field, scorerNames, fault.ScorerInvalid)
	if err != nil {
		return nil, err
	}
	return &Scorer{Envelope: env, prog: prog}, nil
}

// CompileEnvelope admits an {"contract":"algal.expr.v1","program":...}
// envelope whose literal names must be among names; failures carry code.
func CompileEnvelope(v any, field string, names []string, code string) (map[string]any, *expr.Program, error) {
	env, ok := v.(map[string]any)
	if !ok {
		return nil, nil, &fault.Error{Code: code, Path: field, Message: "must be an algal.expr.v1 envelope"}
	}
	for _, k := range canon.SortedKeys(env) {
		if k != "contract" && k != "program" {
			return nil, nil, &fault.Error{Code: code, Path: field, Message: fmt.Sprintf("unknown key %q", k)}
		}
	}
	if env["contract"] != "algal.expr.v1" {
		return nil, nil, &fault.Error{Code: code, Path: field + ".contract", Message: "must be algal.expr.v1"}
	}
	prog, err := expr.Compile(env["program"], names)
	if err != nil {
		// People read this one (a workload's scorer or axis): a sentence
		// with a suggestion, not the canonical {code,...} text.
		return nil, nil, &fault.Error{Code: code, Path: field + ".program", Message: expr.Describe(err, names...)}
	}
	return env, prog, nil
}

// Judge decides a pass claim: the run completed and the outputs equal
// expect canonically, or the scorer returns true. A scorer that throws or
// returns a non-boolean is SCORER_INVALID naming the case.
func (s *Scorer) Judge(caseID string, args, expect map[string]any, outcome string, outputs map[string]any) (bool, error) {
	if outcome != "complete" {
		return false, nil
	}
	if s == nil {
		return canon.Equal(outputs, expect), nil
	}
	v, _, err := s.prog.Eval(map[string]any{"args": args, "expect": expect, "outputs": outputs}, ScorerFuel)
	if err != nil {
		return false, &fault.Error{Code: fault.ScorerInvalid, Path: "scorer", Message: fmt.Sprintf("case %q: %s", caseID, expr.Describe(err, scorerNames...))}
	}
	b, ok := v.(bool)
	if !ok {
		return false, &fault.Error{Code: fault.ScorerInvalid, Path: "scorer", Message: fmt.Sprintf("case %q: scorer returned %s, not a boolean", caseID, Describe(v))}
	}
	return b, nil
}

var articleKinds = canon.Names{"null", "a boolean", "a number", "a string", "a list", "an object", "an object"}

// Describe names a JSON value's type for messages.
func Describe(v any) string { return articleKinds.Of(v) }

// StoredReplayer is a Store that can replay a receipt knowing the digest it
// read the receipt's bytes under (and checked them against), so it can
// remember receipts it has already verified: the same bytes, manifest and
// executor configuration replay the same way (vm.VerifiedReceipts).
type StoredReplayer interface {
	// ReplayStored is Replay of receipt, which Receipt(digest) returned.
	ReplayStored(ctx context.Context, digest string, receipt map[string]any, m *manifest.Manifest) ([]string, error)
}

// ReplayStored replays receipt, which ev.Receipt(digest) returned, through
// ev's ReplayStored when it has one and its Replay otherwise.
func ReplayStored(ctx context.Context, ev Store, digest string, receipt map[string]any, m *manifest.Manifest) ([]string, error) {
	if r, ok := ev.(StoredReplayer); ok {
		return r.ReplayStored(ctx, digest, receipt, m)
	}
	return ev.Replay(ctx, receipt, m)
}
