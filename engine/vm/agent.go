package vm

import (
	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/effect"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/manifest"
	"github.com/algal-assay/assay/engine/receipt"
	"github.com/algal-assay/assay/engine/vm/localctx"
)

// requestBudget is the budget of an effect request: min(cell ?? run,
// run) for the context and output bytes.
func (s *scope) requestBudget(b manifest.Budget) effect.Budget {
	return effect.Budget{MaxContextBytes: budgetFor(b.MaxContextBytes, s.r.budgets.MaxContextBytes),
		MaxOutputBytes: budgetFor(b.MaxOutputBytes, s.r.budgets.MaxOutputBytes)}
}

// viewInputs filters delivered inputs through view.inputs.
func viewInputs(v manifest.View, in ports) ports {
	if v.AllInputs {
		return in.clone()
	}
	out := ports{}
	for _, n := range v.Inputs {
		if x, ok := in[n]; ok {
			out[n] = x
		}
	}
	return out
}

// viewContext builds the context shared by agent-family requests.
func (s *scope) viewContext(id string, v manifest.View, in ports, turn int) *effect.AgentContext {
	ctx := &effect.AgentContext{Inputs: viewInputs(v, in), Turn: turn}
	if v.HasNote {
		note := v.Note
		ctx.Note = &note
	}
	if len(v.Cells) == 0 {
		return ctx
	}
	ctx.Cells = make(map[string]*effect.ViewedCell, len(v.Cells))
	viewed := map[string]bool{}
	for _, vc := range v.Cells {
		viewed[vc.Cell] = true
		ctx.Cells[vc.Cell] = s.viewedCell(vc)
	}
	if v.Graph {
		ctx.Graph = s.viewedGraph(id, viewed)
	}
	return ctx
}

// viewedCell is the record of the cell vc names, its outputs sliced to
// vc.Ports; nil when it has not resolved.
func (s *scope) viewedCell(vc manifest.ViewCell) *effect.ViewedCell {
	j, ok := s.m.CellIndex(vc.Cell)
	if !ok || s.st[j].status == "" {
		return nil
	}
	rec := &effect.ViewedCell{Status: s.st[j].status}
	if outs := s.st[j].outputs; len(outs) > 0 {
		viewed := ports{}
		for k, x := range outs {
			if vc.Ports == nil || contains(vc.Ports, k) {
				viewed[k] = x
			}
		}
		rec.Outputs = viewed
	}
	return rec
}

// viewedGraph lists the edges out of viewed cells into viewed cells or
// the agent itself, in manifest order.
func (s *scope) viewedGraph(id string, viewed map[string]bool) []effect.Edge {
	edges := []effect.Edge{}
	for _, e := range s.m.Edges {
		if !viewed[e.From.Cell] || !(e.To.Cell == id || viewed[e.To.Cell]) {
			continue
		}
		ve := effect.Edge{From: e.From.Cell + "." + e.From.Port, To: e.To.Cell + "." + e.To.Port}
		if e.Guard != nil {
			ve.Guard = e.Guard.Value
		}
		edges = append(edges, ve)
	}
	return edges
}

func checkContext(ctx *effect.AgentContext, max int) *Failure {
	n, err := canon.EncodedSize(ctx.Value())
	if err != nil {
		return failf(fault.TypeMismatch, "context is not canonical JSON")
	}
	if n > max {
		return failf(fault.BudgetExhausted, "context view %dB exceeds maxContextBytes %dB", n, max)
	}
	return nil
}

// toolCalls is the record of an agent's tool log.
func toolCalls(log []effect.ToolCall) []receipt.ToolCall {
	out := make([]receipt.ToolCall, len(log))
	for i, e := range log {
		out[i] = receipt.ToolCall{Fn: e.Fn, Inputs: e.Inputs, Output: e.Output}
	}
	return out
}

// toolRequest reads an agent's answer as a call of one of its tools:
// {"tool": name, "inputs": {...}} naming a declared tool.
func toolRequest(raw any, tools []string) (name string, inputs ports, ok bool) {
	m, isObj := raw.(map[string]any)
	if !isObj || len(tools) == 0 {
		return "", nil, false
	}
	name, _ = m["tool"].(string)
	inputs, isObj = m["inputs"].(map[string]any)
	return name, inputs, isObj && contains(tools, name)
}

// agentLoop is one activation of an agent-family cell: its turns share
// the request bounds, the tool log sent to the model and every tool call
// made (what the local context tool reads back).
type agentLoop struct {
	s      *scope
	c      *manifest.Cell
	p      string
	in     ports
	rec    *receipt.Cell
	budget effect.Budget
	log    []effect.ToolCall
	calls  []effect.ToolCall
}

// maxTurns is an agent's turn bound: declared, else 8 with tools and 1
// without.
func maxTurns(a *manifest.AgentCell) int {
	switch {
	case a.Budget.MaxTurns > 0:
		return a.Budget.MaxTurns
	case len(a.Tools) > 0:
		return 8
	}
	return 1
}

func (s *scope) agentCell(c *manifest.Cell, p string, in ports, rec *receipt.Cell) (ports, *Failure) {
	l := &agentLoop{s: s, c: c, p: p, in: in, rec: rec, budget: s.requestBudget(c.Agent.Budget)}
	turns := maxTurns(c.Agent)
	for turn := 0; turn < turns; turn++ {
		out, done, f := l.turn(turn)
		if done || f != nil {
			return out, f
		}
	}
	return nil, failf(fault.BudgetExhausted, "cell %q produced no final output within maxTurns %d", c.ID, turns)
}

// suspend marks the cell suspended and ends the loop.
func (l *agentLoop) suspend() (ports, bool, *Failure) {
	l.rec.Status = receipt.StatusSuspended
	return nil, true, nil
}

// turn runs one model turn. done is true when the loop ends here: a
// final output, a failure or a suspension.
func (l *agentLoop) turn(turn int) (out ports, done bool, f *Failure) {
	a := l.c.Agent
	if a.Compact != nil && a.Compact.Mode != "elide" {
		kept, susp, f := l.s.compact(l.c, l.p, l.in, l.log, turn, l.budget)
		if susp {
			return l.suspend()
		}
		if f != nil {
			return nil, true, f
		}
		l.log = kept
	}
	ctx := l.s.viewContext(l.c.ID, a.View, l.in, turn)
	prompt := a.Prompt
	var snap *localctx.Snapshot
	if contains(a.Tools, localctx.Tool) {
		snap = l.s.captureContext(l.c, ctx, l.calls)
		prompt = localctx.Prompt(prompt)
	}
	if len(l.log) > 0 {
		ctx.ToolLog = l.log
		if a.Compact != nil && a.Compact.Mode == "elide" {
			ctx.ToolLog = elide(ctx, l.log, a.Compact, l.budget.MaxContextBytes)
		}
	}
	if f := checkContext(ctx, l.budget.MaxContextBytes); f != nil {
		return nil, true, f
	}
	res, f := l.s.issue(call{path: l.p, req: l.request(prompt, ctx), kind: string(l.c.Kind), attempts: a.Retry,
		maxOut: l.budget.MaxOutputBytes, effectMs: effectMs(a.Budget), bind: l.bind})
	switch {
	case f != nil:
		return nil, true, f
	case res.suspended:
		return l.suspend()
	case res.tool:
		return l.runTool(res.raw, snap, turn)
	}
	return l.final(res), true, nil
}

func (l *agentLoop) request(prompt string, ctx *effect.AgentContext) effect.Request {
	a := l.c.Agent
	req := effect.ModelRequest{CellID: l.c.ID, Kind: string(l.c.Kind), Prompt: prompt, Context: ctx,
		Output: a.Output.Value, Budget: l.budget, Route: routeValue(a.Route)}
	return req.Value()
}

// routeValue is a declared route's value (nil when none is declared).
func routeValue(r *manifest.Route) any {
	if r == nil {
		return nil
	}
	return r.Value
}

// bind binds a raw answer: a call of a declared tool, or the output.
func (l *agentLoop) bind(raw any) (any, bool, *Failure) {
	if _, _, ok := toolRequest(raw, l.c.Agent.Tools); ok {
		return nil, true, nil
	}
	b, f := bindOutput(l.c.ID, &l.c.Agent.Output, raw)
	return b, false, f
}

// runTool runs the tool call an answer made and logs it; the loop goes on
// unless the call failed or suspended.
func (l *agentLoop) runTool(raw any, snap *localctx.Snapshot, turn int) (ports, bool, *Failure) {
	name, inputs, _ := toolRequest(raw, l.c.Agent.Tools)
	var output any
	var susp bool
	var f *Failure
	if name == localctx.Tool {
		output, f = l.s.readContext(snap, inputs)
	} else {
		output, susp, f = l.s.agentTool(l.c.ID, l.p, turn, name, inputs, l.c.Agent.Budget.MaxEffectMs)
	}
	if f != nil {
		return nil, true, f
	}
	if susp {
		return l.suspend()
	}
	entry := effect.ToolCall{Fn: name, Inputs: inputs, Output: output}
	l.log = append(l.log, entry)
	l.calls = append(l.calls, entry)
	return nil, false, nil
}

// final records the answer that ended the loop and returns the cell's
// output, the shadow label instead when one is declared.
func (l *agentLoop) final(res issued) ports {
	a := l.c.Agent
	l.rec.EffectDigest = res.digest
	if len(l.log) > 0 {
		l.rec.ToolCalls = toolCalls(l.log)
	}
	value := res.bound
	if a.HasShadow {
		if value != a.Shadow {
			l.rec.ShadowOut, l.rec.HasShadowOut = value, true
		}
		value = a.Shadow
	}
	return ports{"out": value}
}

// captureContext snapshots, before a model turn, what the agent may read
// back through the local context tool, and charges the capture as work.
func (s *scope) captureContext(c *manifest.Cell, ctx *effect.AgentContext, calls []effect.ToolCall) *localctx.Snapshot {
	var cells any
	if ctx.Cells != nil {
		cells = ctx.CellsValue()
	}
	snap, work := localctx.Capture(c.Agent.Prompt, ctx.Inputs, cells, ctx.Cells != nil, effect.ToolLogValue(calls))
	s.r.units += work
	return snap
}

// readContext answers one local context query over the turn's snapshot
// and charges it as work.
func (s *scope) readContext(snap *localctx.Snapshot, inputs ports) (any, *Failure) {
	s.r.units += localctx.QueryCost
	out, err := snap.Query(inputs)
	if err != nil {
		return nil, &Failure{Code: err.Code, Message: err.Message}
	}
	return out, nil
}
