package vm

import (
	"time"

	"github.com/algal-assay/assay/engine/effect"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/manifest"
)

// dispatch answers one effect attempt with a record through the host
// router; with no router every request is unbound. A router error is a
// host fault: it is recorded on the runner (see runner.abort) and ok is
// false.
func (r *runner) dispatch(req effect.Request, digest string, effectMs int) (rec effect.Record, ok bool) {
	if r.host.Router == nil {
		return effect.UnboundRecord(digest), true
	}
	rec, err := r.host.Router.EffectDigested(r.ctx, req, digest, time.Duration(effectMs)*time.Millisecond)
	if err != nil {
		r.hostFault(fault.Flat(err, fault.Internal))
		return effect.Record{}, false
	}
	return rec, true
}

// sanitize keeps a record inside the receipt contract: an executor error
// code outside the closed code set is recorded as EFFECT_FAILED with the
// original code in the message, so a foreign executor can never make the
// run's receipt invalid.
func sanitize(rec effect.Record) effect.Record {
	if rec.Err == nil || fault.IsReceiptCode(rec.Err.Code) {
		return rec
	}
	rec.Err = &effect.Failure{Code: fault.EffectFailed, Message: boundMessage(rec.Err.Code + ": " + rec.Err.Message)}
	return rec
}

// toolSignatures types the host's admitted tools: the router's registry,
// (during verification) the signatures the verifier was given, and the
// reserved tools an in-process HostToolServer serves.
func toolSignatures(h *Host) (map[string]manifest.Signature, error) {
	out := map[string]manifest.Signature{}
	if h.Router != nil {
		var err error
		if out, err = ToolSignatures(h.Router.Tools); err != nil {
			return nil, err
		}
	}
	for n, s := range h.toolSigs {
		out[n] = s
	}
	addHostTools(h, out)
	return out, nil
}

// ToolSignatures types every tool of a registry (nil: none), as runs and
// verifications that replay tool effects need them.
func ToolSignatures(t *effect.Tools) (map[string]manifest.Signature, error) {
	out := map[string]manifest.Signature{}
	if t == nil {
		return out, nil
	}
	for _, n := range t.Names() {
		tool, _ := t.Lookup(n)
		s, err := manifest.ParseSignature(n, tool.Signature)
		if err != nil {
			return nil, err
		}
		out[n] = s
	}
	return out, nil
}

// toolSig returns the signature of an admitted host tool.
func (r *runner) toolSig(name string) (manifest.Signature, bool) {
	s, ok := r.tools[name]
	return s, ok
}

// AcceptOutput reports whether an executor output satisfies the output
// contract its request carries. The memo index stores only such answers
// (effect.Cached.Accept), so a memo hit binds exactly as the live answer
// did.
func AcceptOutput(req effect.Request, output any) bool {
	o, _ := req["output"].(map[string]any)
	if o == nil {
		return false
	}
	switch o["kind"] {
	case "choice":
		s, ok := output.(string)
		if !ok {
			return false
		}
		labels, _ := o["labels"].([]any)
		for _, l := range labels {
			if l == s {
				return true
			}
		}
		return false
	case "text":
		_, ok := output.(string)
		return ok
	case "json":
		version := 1
		if v, ok := o["schemaVersion"].(float64); ok {
			version = int(v)
		}
		if s, ok := o["schema"]; ok {
			return manifest.ValidateValue(s, output, version) == ""
		}
		return true
	}
	return false
}
