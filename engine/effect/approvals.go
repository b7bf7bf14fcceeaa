package effect

import (
	"context"
	"errors"
	"io/fs"
	"os"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
)

// ApprovalsID is the id the approvals executor is admitted under.
const ApprovalsID = "approvals"

// Approvals answers gate requests from a JSON file mapping gate cell id to
// the chosen label, e.g. {"ship-it": "approve"}. A gate with no entry (or
// no file yet) is not an answer: the effect suspends with EFFECT_SUSPENDED,
// and a later resume reads the file again. It is admitted for gate only;
// approval stays a host decision and never reaches a model.
type Approvals struct {
	path string
}

// NewApprovals reads decisions from path on every request.
func NewApprovals(path string) *Approvals { return &Approvals{path: path} }

// ID implements Executor.
func (a *Approvals) ID() string { return ApprovalsID }

// Describe implements Executor.
func (a *Approvals) Describe() Descriptor { return Descriptor{Effects: GateEffects} }

// Execute implements Executor.
func (a *Approvals) Execute(_ context.Context, req Request) (Response, error) {
	if kindOf(req) != KindGate {
		return Response{}, &fault.Error{Code: fault.EffectUnbound, Message: "the approvals executor serves gate requests only", NotRetryable: true}
	}
	cell := cellOf(req)
	if _, err := os.Lstat(a.path); errors.Is(err, fs.ErrNotExist) {
		return Response{}, &fault.Error{Code: fault.EffectSuspended, Message: "gate \"" + cell + "\" awaits a decision (no approvals file yet)", NotRetryable: true}
	}
	v, err := canon.ReadFile(a.path, 1_048_576)
	if err != nil {
		return Response{}, &fault.Error{Code: fault.EffectFailed, Message: "approvals file: " + err.Error()}
	}
	m, ok := v.(map[string]any)
	if !ok {
		return Response{}, Errorf(fault.EffectFailed, "approvals file must map gate cell ids to labels")
	}
	label, ok := m[cell]
	if !ok {
		return Response{}, &fault.Error{Code: fault.EffectSuspended, Message: "gate \"" + cell + "\" awaits a decision", NotRetryable: true}
	}
	if _, isText := label.(string); !isText {
		return Response{}, Errorf(fault.EffectUnparseable, "approval for gate %q must be a label string", cell)
	}
	return Response{Output: label}, nil
}
