package vm

import (
	"strconv"
	"time"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/effect"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/manifest"
	"github.com/algal-assay/assay/engine/receipt"
)

// bindFn binds a raw executor output: it returns the bound value, or
// tool=true when the output is a tool call the loop must run.
type bindFn func(raw any) (bound any, tool bool, f *Failure)

// call is one effect request with its attempt policy.
type call struct {
	path     string // owning cell path (events)
	req      effect.Request
	kind     string
	attempts int
	maxOut   int
	effectMs int
	bind     bindFn
}

// outcome of issuing a call.
type issued struct {
	digest    string
	raw       any
	bound     any
	tool      bool
	suspended bool
}

// issue sends a request up to attempts times (the same request, so the
// same digest), charging 500 + context bytes per attempt and the raw
// output bytes of every in-bound answer.
func (s *scope) issue(c call) (issued, *Failure) {
	r := s.r
	digest, err := effect.RequestDigest(c.req)
	if err != nil {
		return issued{}, asFailure(err)
	}
	ctxBytes, _ := canon.EncodedSize(c.req["context"])
	var last *Failure
	for a := 0; a < max(c.attempts, 1); a++ {
		if r.calls+1 > r.budgets.MaxAgentCalls {
			return issued{digest: digest}, failf(fault.BudgetExhausted, "maxAgentCalls exhausted")
		}
		r.calls++
		r.units += 500 + ctxBytes
		r.event("effect", c.path, digest, "")
		if f := r.aborted(); f != nil {
			return issued{digest: digest}, f
		}
		answer, ok := r.dispatch(c.req, digest, c.effectMs)
		if !ok {
			return issued{digest: digest}, r.aborted()
		}
		rec := sanitize(answer)
		r.effects = append(r.effects, rec)
		if rec.Err != nil {
			if rec.Err.Code == fault.EffectSuspended {
				return issued{digest: digest, suspended: true}, nil
			}
			last = &Failure{Code: rec.Err.Code, Message: rec.Err.Message}
			if rec.NotRetryable {
				break
			}
			continue
		}
		ob, err := canon.EncodedSize(rec.Output)
		if err != nil {
			last = failf(fault.EffectUnparseable, "effect output is not canonical JSON")
			continue
		}
		if ob > c.maxOut {
			last = failf(fault.BudgetExhausted, "effect output %dB exceeds maxOutputBytes %dB", ob, c.maxOut)
			if rec.NotRetryable {
				break
			}
			continue
		}
		r.units += ob
		bound, tool, f := c.bind(rec.Output)
		if f != nil {
			last = f
			if rec.NotRetryable {
				break
			}
			continue
		}
		return issued{digest: digest, raw: rec.Output, bound: bound, tool: tool}, nil
	}
	if last == nil {
		last = failf(fault.EffectFailed, "effect never settled")
	}
	return issued{digest: digest}, last
}

// budgetFor returns min(cell ?? run, run) for the request budget.
func budgetFor(cell, run int) int {
	if cell > 0 && cell < run {
		return cell
	}
	return run
}

func effectMs(b manifest.Budget) int {
	if b.MaxEffectMs > 0 {
		return b.MaxEffectMs
	}
	return DefaultEffectMs
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// bindOutput binds a raw answer to an agent output contract.
func bindOutput(id string, o *manifest.Output, raw any) (any, *Failure) {
	switch o.Kind {
	case manifest.TypeChoice:
		if s, ok := raw.(string); ok && contains(o.Labels, s) {
			return s, nil
		}
		if o.HasOnMiss {
			return o.OnMiss, nil
		}
		b, _ := canon.Encode(raw)
		return nil, failf(fault.EffectUnparseable, "cell %q: output %s is not a declared label", id, b)
	case manifest.TypeText:
		if _, ok := raw.(string); !ok {
			return nil, failf(fault.EffectUnparseable, "cell %q: output must be text, got %s", id, kindName(raw))
		}
		return raw, nil
	default:
		if o.Schema != nil {
			if msg := manifest.ValidateValue(o.Schema, raw, o.SchemaVersion); msg != "" {
				return nil, failf(fault.EffectUnparseable, "cell %q: %s", id, msg)
			}
		}
		return raw, nil
	}
}

// agentTool runs one tool call of an agent's loop: a registry fn runs
// in-process and leaves no effect record; a host tool is a recorded tool
// effect under the request path <cell path>/t<turn>.
func (s *scope) agentTool(cellID, p string, turn int, name string, inputs ports, effectMs int) (any, bool, *Failure) {
	if fn, sig, ok := s.r.host.fn(name); ok {
		if f := checkToolInputs(name, sig, inputs); f != nil {
			return nil, false, f
		}
		outs, extra, err := fn(inputs)
		s.r.units += sig.Cost + extra
		if err != nil {
			f := asFailure(err)
			if f.Code == fault.Internal {
				f.Code = fault.FnFailed
			}
			return nil, false, f
		}
		return outs, false, nil
	}
	sig, ok := s.r.toolSig(name)
	if !ok {
		return nil, false, failf(fault.ToolUnknown, "agent tool is not configured")
	}
	if f := checkToolInputs(name, sig, inputs); f != nil {
		return nil, false, f
	}
	rec := &receipt.Cell{}
	out, f := s.toolCall(cellID, p, p+"/t"+strconv.Itoa(turn), name, sig, inputs, effectMs, rec)
	if f != nil {
		return nil, false, f
	}
	if rec.Suspended() {
		return nil, true, nil
	}
	return out.object(), false, nil
}

func checkToolInputs(name string, sig manifest.Signature, inputs ports) *Failure {
	for _, k := range canon.SortedKeys(inputs) {
		if _, ok := sig.Input(k); !ok {
			return failf(fault.TypeMismatch, "tool %s received undeclared input %s", name, k)
		}
	}
	// One pass over the signature ports in key order (sig.Inputs is
	// sorted): a present value is type-checked before a later port's
	// absence is reported, and a many port is required unless it is
	// declared optional, as for the native runtime's tool loop.
	for _, port := range sig.Inputs {
		v, ok := inputs[port.Name]
		if !ok {
			if !port.Optional {
				return failf(fault.EffectFailed, "tool missing required input")
			}
			continue
		}
		if f := checkValue(port, v); f != nil {
			return failf(f.Code, "input %s: %s", port.Name, f.Message)
		}
	}
	return nil
}

// toolCall issues one algal.tool-effect.v1 request. Tool effects do not
// count against maxAgentCalls and carry no 500-unit charge; a success
// charges the signature cost plus the output bytes.
func (s *scope) toolCall(cellID, cellPath, reqPath, name string, sig manifest.Signature, inputs ports, effectMs int, rec *receipt.Cell) (ports, *Failure) {
	r := s.r
	req := effect.Request{"contract": effect.ToolContract, "path": reqPath, "tool": name,
		"effect": sig.Effect, "inputs": inputs.object()}
	digest, err := canon.Digest(req)
	if err != nil {
		return nil, asFailure(err)
	}
	r.event("effect", cellPath, digest, "")
	if f := r.aborted(); f != nil {
		return nil, f
	}
	var er effect.Record
	if r.host.Router == nil {
		return nil, failf(fault.EffectUnbound, "tool %q is not admitted by the host", name)
	}
	// maxEffect 0 keeps the tool registry's own 30 s bound; a cell bound
	// shortens it.
	er, err = r.host.Router.Tool(r.ctx, req, "", time.Duration(effectMs)*time.Millisecond)
	if err != nil {
		// A tool request nothing can serve is a hard miss: the cell fails
		// and no effect record is written.
		return nil, asFailure(err)
	}
	er = sanitize(er)
	r.effects = append(r.effects, er)
	rec.EffectDigest = digest
	if er.Err != nil {
		if er.Err.Code == fault.EffectSuspended {
			rec.Status = receipt.StatusSuspended
			return nil, nil
		}
		return nil, &Failure{Code: er.Err.Code, Message: er.Err.Message}
	}
	ob, _ := canon.EncodedSize(er.Output)
	if sig.MaxOutputBytes > 0 && ob > sig.MaxOutputBytes {
		return nil, failf(fault.BudgetExhausted, "tool output bytes")
	}
	r.units += sig.Cost + ob
	out, ok := er.Output.(map[string]any)
	if !ok {
		return nil, failf(fault.ToolFailed, "tool %s output must be an object of ports", name)
	}
	// The native runtime checks a tool's outputs with the tool name in the
	// producing-cell slot of the message, and type-checks declared ports
	// here, so an agent's tool call fails on a mistyped output as a tool
	// cell does.
	if f := checkOutputs(name, &cellSig{outputs: sig.Outputs}, out); f != nil {
		return nil, f
	}
	return out, nil
}

func (s *scope) decideCell(c *manifest.Cell, p string, in ports, rec *receipt.Cell) (ports, *Failure) {
	d := c.Decide
	budget := s.requestBudget(d.Budget)
	ctx := s.viewContext(c.ID, d.View, in, 0)
	if f := checkContext(ctx, budget.MaxContextBytes); f != nil {
		return nil, f
	}
	req := decideRequest(c.ID, d.Prompt, ctx, d.Questions, d.QuestionsValue, budget, d.Route)
	bound, ok, f := s.issueFor(rec, call{path: p, req: req, kind: "decide", attempts: d.Retry, maxOut: budget.MaxOutputBytes, effectMs: effectMs(d.Budget),
		bind: answerBinder(d.Questions, "cell %q: %s", c.ID, nil)})
	if !ok {
		return nil, f
	}
	return ports{"out": bound}, nil
}

// issueFor issues c for the cell whose record is rec and settles the
// record: an answer records its request digest (the last one wins when a
// cell issues several), a suspended request suspends the cell. ok is
// false when the activation must stop there (a failure, or suspension
// with a nil failure).
func (s *scope) issueFor(rec *receipt.Cell, c call) (bound any, ok bool, f *Failure) {
	res, f := s.issue(c)
	if f != nil {
		return nil, false, f
	}
	if res.suspended {
		rec.Status = receipt.StatusSuspended
		return nil, false, nil
	}
	rec.EffectDigest = res.digest
	return res.bound, true, nil
}
