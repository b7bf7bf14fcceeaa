package vm

import (
	"fmt"
	"sort"
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
	ctxBytes, _ := canon.Encode(c.req["context"])
	var last *Failure
	for a := 0; a < max(c.attempts, 1); a++ {
		if r.calls+1 > r.budgets.MaxAgentCalls {
			return issued{digest: digest}, failf(fault.BudgetExhausted, "maxAgentCalls exhausted")
		}
		r.calls++
		r.units += 500 + len(ctxBytes)
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
		ob, err := canon.Encode(rec.Output)
		if err != nil {
			last = failf(fault.EffectUnparseable, "effect output is not canonical JSON")
			continue
		}
		if len(ob) > c.maxOut {
			last = failf(fault.BudgetExhausted, "effect output %dB exceeds maxOutputBytes %dB", len(ob), c.maxOut)
			if rec.NotRetryable {
				break
			}
			continue
		}
		r.units += len(ob)
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

func (s *scope) requestBudget(b manifest.Budget) (int, int, map[string]any) {
	mc := budgetFor(b.MaxContextBytes, s.r.budgets.MaxContextBytes)
	mo := budgetFor(b.MaxOutputBytes, s.r.budgets.MaxOutputBytes)
	return mc, mo, map[string]any{"maxContextBytes": float64(mc), "maxOutputBytes": float64(mo)}
}

func checkContext(ctx map[string]any, max int) *Failure {
	b, err := canon.Encode(ctx)
	if err != nil {
		return failf(fault.TypeMismatch, "context is not canonical JSON")
	}
	if len(b) > max {
		return failf(fault.BudgetExhausted, "context view %dB exceeds maxContextBytes %dB", len(b), max)
	}
	return nil
}

// viewInputs filters delivered inputs through view.inputs.
func viewInputs(v manifest.View, in map[string]any) map[string]any {
	if v.AllInputs {
		out := make(map[string]any, len(in))
		for k, x := range in {
			out[k] = x
		}
		return out
	}
	out := map[string]any{}
	for _, n := range v.Inputs {
		if x, ok := in[n]; ok {
			out[n] = x
		}
	}
	return out
}

// viewContext builds the context shared by agent-family requests.
func (s *scope) viewContext(id string, v manifest.View, in map[string]any, turn int) map[string]any {
	ctx := map[string]any{"inputs": viewInputs(v, in), "turn": float64(turn)}
	if v.HasNote {
		ctx["note"] = v.Note
	}
	if len(v.Cells) > 0 {
		cells := map[string]any{}
		viewed := map[string]bool{}
		for _, vc := range v.Cells {
			viewed[vc.Cell] = true
			j, ok := s.m.CellIndex(vc.Cell)
			if !ok || s.st[j].status == "" {
				cells[vc.Cell] = nil
				continue
			}
			rec := map[string]any{"status": s.st[j].status}
			if outs := s.st[j].outputs; len(outs) > 0 {
				sliced := map[string]any{}
				for k, x := range outs {
					if vc.Ports == nil || contains(vc.Ports, k) {
						sliced[k] = x
					}
				}
				rec["outputs"] = sliced
			}
			cells[vc.Cell] = rec
		}
		ctx["cells"] = cells
		if v.Graph {
			edges := []any{}
			for _, e := range s.m.Edges {
				if !viewed[e.From.Cell] || !(e.To.Cell == id || viewed[e.To.Cell]) {
					continue
				}
				ge := map[string]any{"from": e.From.Cell + "." + e.From.Port, "to": e.To.Cell + "." + e.To.Port}
				if e.Guard != nil {
					ge["guard"] = e.Guard.Value
				}
				edges = append(edges, ge)
			}
			ctx["graph"] = map[string]any{"edges": edges}
		}
	}
	return ctx
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

func (s *scope) agentCell(c *manifest.Cell, p string, in map[string]any, rec *receipt.Cell) (map[string]any, *Failure) {
	a := c.Agent
	maxTurns := a.Budget.MaxTurns
	if maxTurns == 0 {
		maxTurns = 1
		if len(a.Tools) > 0 {
			maxTurns = 8
		}
	}
	mc, mo, budget := s.requestBudget(a.Budget)
	var log, calls []any
	for turn := 0; turn < maxTurns; turn++ {
		if a.Compact != nil && a.Compact.Mode != "elide" {
			kept, susp, f := s.compact(c, p, in, log, turn, budget, mc, mo)
			if f != nil || susp {
				if susp {
					rec.Status = receipt.StatusSuspended
				}
				return nil, f
			}
			log = kept
		}
		ctx := s.viewContext(c.ID, a.View, in, turn)
		prompt := a.Prompt
		var snap *contextSnapshot
		if contains(a.Tools, localContextTool) {
			snap = s.captureContext(c, ctx, calls)
			prompt = localContextPrompt(prompt)
		}
		if len(log) > 0 {
			ctx["toolLog"] = log
			if a.Compact != nil && a.Compact.Mode == "elide" {
				ctx["toolLog"] = elide(ctx, log, a.Compact, mc)
			}
		}
		if f := checkContext(ctx, mc); f != nil {
			return nil, f
		}
		req := effect.Request{"contract": effect.EffectContract, "cellId": c.ID, "kind": string(c.Kind),
			"prompt": prompt, "context": ctx, "output": a.Output.Value, "budget": budget}
		if a.Route != nil {
			req["route"] = a.Route.Value
		}
		out := &a.Output
		res, f := s.issue(call{path: p, req: req, kind: string(c.Kind), attempts: a.Retry, maxOut: mo,
			effectMs: effectMs(a.Budget), bind: func(raw any) (any, bool, *Failure) {
				if m, ok := raw.(map[string]any); ok && len(a.Tools) > 0 {
					name, _ := m["tool"].(string)
					if _, isObj := m["inputs"].(map[string]any); isObj && contains(a.Tools, name) {
						return nil, true, nil
					}
				}
				b, f := bindOutput(c.ID, out, raw)
				return b, false, f
			}})
		if f != nil {
			return nil, f
		}
		if res.suspended {
			rec.Status = receipt.StatusSuspended
			return nil, nil
		}
		if res.tool {
			m := res.raw.(map[string]any)
			name := m["tool"].(string)
			inputs := m["inputs"].(map[string]any)
			var output any
			var susp bool
			var f *Failure
			if name == localContextTool {
				output, f = s.readContext(snap, inputs)
			} else {
				output, susp, f = s.agentTool(c.ID, p, turn, name, inputs, a.Budget.MaxEffectMs)
			}
			if f != nil {
				return nil, f
			}
			if susp {
				rec.Status = receipt.StatusSuspended
				return nil, nil
			}
			entry := map[string]any{"fn": name, "inputs": inputs, "output": output}
			log = append(log, entry)
			calls = append(calls, entry)
			continue
		}
		rec.EffectDigest = res.digest
		if len(log) > 0 {
			rec.ToolCalls = toolCalls(log)
		}
		value := res.bound
		if a.HasShadow {
			if value != a.Shadow {
				rec.ShadowOut, rec.HasShadowOut = value, true
			}
			value = a.Shadow
		}
		return map[string]any{"out": value}, nil
	}
	return nil, failf(fault.BudgetExhausted, "cell %q produced no final output within maxTurns %d", c.ID, maxTurns)
}

// agentTool runs one tool call of an agent's loop: a registry fn runs
// in-process and leaves no effect record; a host tool is a recorded tool
// effect under the request path <cell path>/t<turn>.
func (s *scope) agentTool(cellID, p string, turn int, name string, inputs map[string]any, effectMs int) (any, bool, *Failure) {
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
	return out, false, nil
}

func checkToolInputs(name string, sig manifest.Signature, inputs map[string]any) *Failure {
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
func (s *scope) toolCall(cellID, cellPath, reqPath, name string, sig manifest.Signature, inputs map[string]any, effectMs int, rec *receipt.Cell) (map[string]any, *Failure) {
	r := s.r
	req := map[string]any{"contract": effect.ToolContract, "path": reqPath, "tool": name,
		"effect": sig.Effect, "inputs": inputs}
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
	ob, _ := canon.Encode(er.Output)
	if sig.MaxOutputBytes > 0 && len(ob) > sig.MaxOutputBytes {
		return nil, failf(fault.BudgetExhausted, "tool output bytes")
	}
	r.units += sig.Cost + len(ob)
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

// answerSchema derives the output contract of a question map. The
// required list is in UTF-8 byte order of the names (the native
// runtime's map order).
func answerSchema(qs []manifest.Question) map[string]any {
	names := make([]string, 0, len(qs))
	props := map[string]any{}
	for _, q := range qs {
		names = append(names, q.Name)
		props[q.Name] = answerType(q.Type)
	}
	sort.Strings(names)
	req := make([]any, len(names))
	for i, n := range names {
		req[i] = n
	}
	return map[string]any{"kind": "json", "schema": map[string]any{"type": "object", "required": []any{"answers"},
		"properties": map[string]any{"answers": map[string]any{"type": "object", "required": req, "properties": props}}}}
}

func answerType(t string) map[string]any {
	str := map[string]any{"type": "string"}
	num := map[string]any{"type": "number"}
	if t == "noul" {
		return map[string]any{"type": "object", "required": []any{"noul"}, "properties": map[string]any{"type": str, "noul": num}}
	}
	head := "choice"
	ht := str
	if t == "score" {
		head, ht = "score", num
	}
	return map[string]any{"type": "object", "required": []any{head, "confidence", "probabilities"},
		"properties": map[string]any{"type": str, head: ht, "confidence": num, "probabilities": map[string]any{"type": "object"}}}
}

// bindAnswers checks a decision record: exactly the declared answers, each
// well-formed for its type.
func bindAnswers(qs []manifest.Question, raw any) (map[string]any, string) {
	m, ok := raw.(map[string]any)
	if !ok {
		return nil, "output must be an object"
	}
	for _, k := range canon.SortedKeys(m) {
		if k != "answers" {
			return nil, fmt.Sprintf("unexpected field %q", k)
		}
	}
	ans, ok := m["answers"].(map[string]any)
	if !ok {
		return nil, "missing required property \"answers\""
	}
	for _, k := range canon.SortedKeys(ans) {
		found := false
		for _, q := range qs {
			if q.Name == k {
				found = true
			}
		}
		if !found {
			return nil, fmt.Sprintf("unexpected answer %q", k)
		}
	}
	for _, q := range qs {
		a, ok := ans[q.Name].(map[string]any)
		if !ok {
			return nil, fmt.Sprintf("missing answer %q", q.Name)
		}
		if msg := manifest.ValidateValue(answerType(q.Type), a, 1); msg != "" {
			return nil, fmt.Sprintf("answer %q: %s", q.Name, msg)
		}
		allowed := []string{"type", "noul"}
		if q.Type != "noul" {
			allowed = []string{"type", q.Type, "confidence", "probabilities"}
		}
		for _, k := range canon.SortedKeys(a) {
			if !contains(allowed, k) {
				return nil, fmt.Sprintf("answer %q: unexpected field %q", q.Name, k)
			}
		}
		if t, ok := a["type"]; ok && t != q.Type {
			return nil, fmt.Sprintf("answer %q: type must be %q", q.Name, q.Type)
		}
		if q.Type == "choice" {
			if crit, ok := q.Criteria.(map[string]any); ok {
				if _, ok := crit[a["choice"].(string)]; !ok {
					return nil, fmt.Sprintf("answer %q: choice is not a declared criterion", q.Name)
				}
			}
		}
	}
	return m, ""
}

func (s *scope) decideCell(c *manifest.Cell, p string, in map[string]any, rec *receipt.Cell) (map[string]any, *Failure) {
	d := c.Decide
	mc, mo, budget := s.requestBudget(d.Budget)
	ctx := s.viewContext(c.ID, d.View, in, 0)
	if f := checkContext(ctx, mc); f != nil {
		return nil, f
	}
	req := effect.Request{"contract": effect.EffectContract, "cellId": c.ID, "kind": "decide",
		"prompt": d.Prompt, "context": ctx, "output": answerSchema(d.Questions), "budget": budget,
		"questions": d.QuestionsValue}
	if d.Route != nil {
		req["route"] = d.Route.Value
	}
	bound, ok, f := s.issueFor(rec, call{path: p, req: req, kind: "decide", attempts: d.Retry, maxOut: mo, effectMs: effectMs(d.Budget),
		bind: answerBinder(d.Questions, "cell %q: %s", c.ID)})
	if !ok {
		return nil, f
	}
	return map[string]any{"out": bound}, nil
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

// answerBinder binds a decide-shaped answer to qs; a malformed one is
// EFFECT_UNPARSEABLE with the message format(id, what is wrong).
func answerBinder(qs []manifest.Question, format, id string) bindFn {
	return func(raw any) (any, bool, *Failure) {
		m, msg := bindAnswers(qs, raw)
		if msg != "" {
			return nil, false, failf(fault.EffectUnparseable, format, id, msg)
		}
		return m, false, nil
	}
}

// toolCalls is the record of an agent's tool log, whose entries the loop
// built as {fn, inputs, output}.
func toolCalls(log []any) []receipt.ToolCall {
	out := make([]receipt.ToolCall, len(log))
	for i, e := range log {
		m := e.(map[string]any)
		out[i] = receipt.ToolCall{Fn: m["fn"].(string), Inputs: m["inputs"].(map[string]any), Output: m["output"]}
	}
	return out
}
