package effect

// The algal.effect.v1 requests the VM issues, as Go values: an
// agent-family, decide or recall request (ModelRequest) with its budget,
// its context object (AgentContext, RecallContext, RerankContext) and the
// tool log an agent sends back to the model. The VM builds these; Value
// renders each as the canonical request an executor sees and whose digest
// names it, so the request's wire shape (which keys, absent or null, how
// numbers are written) is decided here, once. A field whose absence is a
// different request from its zero value says how it is absent.

// ToolOutputRefContract is the contract of the stub an elided tool output
// becomes in a request's tool log.
const ToolOutputRefContract = "algal.tool-output-ref.v1"

// ModelRequest is an algal.effect.v1 request.
type ModelRequest struct {
	CellID string
	Kind   string // KindAgent, KindClassifier, KindGate, KindDecide or KindRecall
	Prompt string
	// Context is the request's context object.
	Context Context
	// Output is the output contract value (the cell's, or a decide
	// request's DecideOutput).
	Output any
	Budget Budget
	// Route is the route value as the manifest holds it (nil: absent).
	Route any
	// Questions is a decide request's questions object (nil: absent).
	Questions any
	// Recall is a recall request's query (nil: absent).
	Recall *RecallQuery
}

// Context is a request's context object.
type Context interface {
	// Value is the context as the canonical object the request carries.
	Value() map[string]any
}

// Value is the canonical request.
func (r *ModelRequest) Value() Request {
	req := Request{"contract": EffectContract, "cellId": r.CellID, "kind": r.Kind, "prompt": r.Prompt,
		"context": r.Context.Value(), "output": r.Output, "budget": r.Budget.Value()}
	if r.Route != nil {
		req["route"] = r.Route
	}
	if r.Questions != nil {
		req["questions"] = r.Questions
	}
	if r.Recall != nil {
		req["recall"] = r.Recall.Value()
	}
	return req
}

// Budget is a request's byte bounds: how large its context may be and
// how large an answer it admits.
type Budget struct{ MaxContextBytes, MaxOutputBytes int }

// Value is the budget object.
func (b Budget) Value() map[string]any {
	return map[string]any{"maxContextBytes": float64(b.MaxContextBytes), "maxOutputBytes": float64(b.MaxOutputBytes)}
}

// AgentContext is the context of an agent-family or decide request: the
// viewed inputs and the turn, what the view adds (a note, the records of
// the cells it names and the graph between them) and the tool log.
type AgentContext struct {
	Inputs map[string]any
	Turn   int
	Note   *string // nil: absent
	// Cells is nil when the view names no cells; a nil entry is a cell
	// that has not resolved (JSON null).
	Cells map[string]*ViewedCell
	Graph []Edge // nil: no graph
	// ToolLog is the tool log as sent (nil: absent); an elided entry's
	// output is a ToolOutputRef value.
	ToolLog []ToolCall
}

// ViewedCell is the record of a cell an agent's view names.
type ViewedCell struct {
	Status  string
	Outputs map[string]any // nil: absent
}

// Edge is one edge of a view's graph, its ends as "cell.port".
type Edge struct {
	From, To string
	Guard    any // the guard's normalized value; nil: no guard
}

// ToolCall is one entry of an agent's tool log: a tool call and its
// result.
type ToolCall struct {
	Fn     string
	Inputs map[string]any
	Output any
}

// Value is the context object.
func (c *AgentContext) Value() map[string]any {
	v := map[string]any{"inputs": c.Inputs, "turn": float64(c.Turn)}
	if c.Note != nil {
		v["note"] = *c.Note
	}
	if c.Cells != nil {
		v["cells"] = c.CellsValue()
	}
	if c.Graph != nil {
		edges := make([]any, len(c.Graph))
		for i, e := range c.Graph {
			edges[i] = e.Value()
		}
		v["graph"] = map[string]any{"edges": edges}
	}
	if c.ToolLog != nil {
		v["toolLog"] = ToolLogValue(c.ToolLog)
	}
	return v
}

// CellsValue is the context's cells object.
func (c *AgentContext) CellsValue() map[string]any {
	cells := make(map[string]any, len(c.Cells))
	for id, vc := range c.Cells {
		cells[id] = nil
		if vc != nil {
			cells[id] = vc.Value()
		}
	}
	return cells
}

// Value is the cell's record as the context shows it.
func (vc *ViewedCell) Value() map[string]any {
	v := map[string]any{"status": vc.Status}
	if vc.Outputs != nil {
		v["outputs"] = vc.Outputs
	}
	return v
}

// Value is the edge's entry in the graph.
func (e Edge) Value() map[string]any {
	v := map[string]any{"from": e.From, "to": e.To}
	if e.Guard != nil {
		v["guard"] = e.Guard
	}
	return v
}

// Value is the tool log entry.
func (tc ToolCall) Value() map[string]any {
	return map[string]any{"fn": tc.Fn, "inputs": tc.Inputs, "output": tc.Output}
}

// ToolLogValue is a tool log as a request carries it (never nil).
func ToolLogValue(log []ToolCall) []any {
	out := make([]any, len(log))
	for i, e := range log {
		out[i] = e.Value()
	}
	return out
}

// ToolOutputRef stands in a request's tool log for an output elided to
// fit the log's bound: the output's digest and canonical size.
type ToolOutputRef struct {
	Source string // digest of the elided output
	Bytes  int    // its canonical bytes
}

// Value is the algal.tool-output-ref.v1 stub.
func (r ToolOutputRef) Value() map[string]any {
	return map[string]any{"contract": ToolOutputRefContract, "source": r.Source, "bytes": float64(r.Bytes)}
}

// RecallContext is a recall request's context: the cell's inputs.
type RecallContext struct{ Inputs map[string]any }

// Value is the context object.
func (c RecallContext) Value() map[string]any { return map[string]any{"inputs": c.Inputs} }

// RecallQuery is what a recall request asks the index.
type RecallQuery struct {
	Query    string
	K        int
	Embedder string
}

// Value is the request's recall object.
func (q *RecallQuery) Value() map[string]any {
	return map[string]any{"query": q.Query, "k": float64(q.K), "embedder": q.Embedder}
}

// RerankContext is the context of the decide request that reranks a
// recall cell's hits: the query and the hits as the index answered them.
type RerankContext struct {
	Query string
	Hits  []any
}

// Value is the context object.
func (c RerankContext) Value() map[string]any {
	return map[string]any{"query": c.Query, "hits": c.Hits}
}
