package mailbox

import (
	"context"

	"github.com/algal-assay/assay/engine/effect"
	"github.com/algal-assay/assay/engine/fault"
)

// Tool names the service serves.
const (
	SendTool    = "mailbox.send.v1"
	ReceiveTool = "mailbox.receive.v1"
)

// Tools serves mailbox.send.v1 and mailbox.receive.v1 tool requests
// (algal.tool-effect.v1) from a Service. It plugs into an effect.Router as
// a request-aware record source: the router consults it for tool requests
// after any recorded answers (a replay placed before it), so verification,
// which admits only the replay, never opens the live mailbox, and resume
// re-issues only the request that suspended. It never serves algal.effect.v1
// requests.
//
// The tool request's digest is the send's idempotency key, so a re-issued
// identical send is the same delivery.
type Tools struct {
	svc *Service
}

// NewTools serves the tools over svc; a nil svc answers every call
// CAPABILITY_DENIED (the mailbox host is not admitted).
func NewTools(svc *Service) *Tools { return &Tools{svc: svc} }

// ID implements effect.Executor.
func (t *Tools) ID() string { return "mailbox" }

// Describe implements effect.Executor: it admits no effect kind, so
// capability routing never selects it.
func (t *Tools) Describe() effect.Descriptor { return effect.Descriptor{Effects: []string{}} }

// Execute implements effect.Executor; it is never routed an effect.
func (t *Tools) Execute(context.Context, effect.Request) (effect.Response, error) {
	return effect.Response{}, &fault.Error{Code: fault.EffectUnbound, Message: "the mailbox host serves tool requests only", NotRetryable: true}
}

// HostTools lists the tools this executor serves (the VM types them with
// the reserved signatures).
func (t *Tools) HostTools() []string { return []string{ReceiveTool, SendTool} }

// Serves implements effect.Admitter: mailbox tool requests only.
func (t *Tools) Serves(req effect.Request) bool {
	if req["contract"] != effect.ToolContract {
		return false
	}
	name, _ := req["tool"].(string)
	return name == SendTool || name == ReceiveTool
}

// Take implements effect.RecordSource by running the tool live.
func (t *Tools) Take(req effect.Request, digest string) (effect.Record, bool) {
	if !t.Serves(req) {
		return effect.Record{}, false
	}
	name, _ := req["tool"].(string)
	rec := effect.Record{RequestDigest: digest, Executor: "tool:" + name}
	out, err := t.call(name, req, digest)
	if err != nil {
		// The service's own rejections are bare; anything else (a located
		// parse error, a plain Go error) is a tool failure.
		e, ok := fault.As(err)
		if !ok || e.Located() {
			e = &fault.Error{Code: fault.ToolFailed, Message: err.Error()}
		}
		rec.Err = &effect.Failure{Code: e.Code, Message: bound(e.Message)}
		// A mailbox operation may have acted before failing; a suspended
		// receive must be re-issued by resume, never retried blindly.
		rec.NotRetryable = true
		if e.Code == fault.EffectSuspended && len(e.Wake) > 0 {
			rec.Wake = e.Wake
		}
		return rec, true
	}
	rec.Output = out
	return rec, true
}

func (t *Tools) call(name string, req effect.Request, digest string) (map[string]any, error) {
	if t.svc == nil {
		return nil, errf(fault.CapabilityDenied, "the mailbox host is not admitted (no store directory)")
	}
	in, _ := req["inputs"].(map[string]any)
	handle, ok := in["mailbox"].(string)
	if !ok {
		return nil, errf(fault.TypeMismatch, "mailbox input must be a capability handle")
	}
	if name == SendTool {
		msg, ok := in["message"]
		if !ok {
			return nil, errf(fault.ToolFailed, "mailbox.send.v1 needs a message")
		}
		id, _, err := t.svc.Send(handle, msg, digest)
		if err != nil {
			return nil, err
		}
		return map[string]any{"id": id}, nil
	}
	id, msg, err := t.svc.Receive(handle)
	if err != nil {
		return nil, err
	}
	return map[string]any{"id": id, "message": msg}, nil
}

func bound(s string) string {
	if len(s) <= effect.MaxErrorMessage {
		return s
	}
	cut := effect.MaxErrorMessage
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut]
}
