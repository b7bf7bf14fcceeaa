package manifest

import "slices"

// The cell-kind table: every cell kind of algal.organism.v1 is one KindSpec
// row, and the parser (which keys a cell may carry and how they are
// read), the compiler and the VM (where a cell's ports come from) and the
// receipt checker (which keys its record may carry) all read it. A new
// cell kind is one row here plus its behaviour in engine/vm's activation
// table; see docs/architecture.md.

// KindSpec is one cell kind's row of the kind table.
type KindSpec struct {
	Kind Kind
	// Fields are the keys a cell of the kind may carry.
	Fields []string
	// Ports says where the cell's port signature comes from; Signature
	// computes it when the cell alone decides it (CellPorts).
	Ports     PortSource
	Signature func(c *Cell) Signature
	// Effect says activations issue an effect request.
	Effect bool
	// Record lists the keys a committed cell record of the kind may carry
	// besides status, work and outputs.
	Record []string
	// fill reads the kind's fields into the cell and writes their
	// normalized form into norm (nil: the kind has none).
	fill func(c *Cell, raw, norm map[string]any) error
}

// PortSource says where a cell kind's ports come from.
type PortSource int

// Port sources.
const (
	// CellPorts: the cell's own declaration (KindSpec.Signature).
	CellPorts PortSource = iota
	// FnPorts: the fn registry's signature for the cell's fn.
	FnPorts
	// ToolPorts: the host tool registry's signature for the cell's tool.
	ToolPorts
	// ChildPorts: the interface of the embedded manifest.
	ChildPorts
)

// agentFields are the keys of agent-style cells.
var agentFields = []string{"id", "kind", "inputs", "prompt", "view", "output", "route", "tools", "compact", "budget", "shadow", "retry"}

var kindTable = []KindSpec{
	{Kind: KindInput, Fields: []string{"id", "kind", "outputs"}, Signature: declaredOutputs, fill: fillDeclared},
	{Kind: KindConst, Fields: []string{"id", "kind", "outputs"}, Signature: declaredOutputs, fill: fillDeclared},
	{Kind: KindFn, Fields: []string{"id", "kind", "fn"}, Ports: FnPorts, fill: fillFn},
	{Kind: KindExpr, Fields: []string{"id", "kind", "inputs", "expr", "output"}, fill: fillExpr,
		Signature: func(c *Cell) Signature { return fixed(c.Declared, []Port{c.Expr.Output.Port()}) }},
	{Kind: KindAgent, Fields: agentFields, Effect: true, Signature: agentSignature, fill: fillAgent, Record: []string{"effectDigest", "toolCalls", "shadowOut"}},
	{Kind: KindClassifier, Fields: agentFields, Effect: true, Signature: agentSignature, fill: fillAgent, Record: []string{"effectDigest", "toolCalls", "shadowOut"}},
	{Kind: KindGate, Fields: agentFields, Effect: true, Signature: agentSignature, fill: fillAgent, Record: []string{"effectDigest", "toolCalls", "shadowOut"}},
	{Kind: KindDecide, Fields: []string{"id", "kind", "inputs", "prompt", "questions", "view", "route", "budget", "retry"}, Effect: true, fill: fillDecide,
		Signature: func(c *Cell) Signature { return fixed(c.Declared, []Port{jsonPort("out")}) }, Record: []string{"effectDigest"}},
	{Kind: KindRecall, Fields: []string{"id", "kind", "inputs", "query", "k", "embedder", "route", "rerank", "budget", "retry"}, Effect: true, fill: fillRecall,
		Signature: func(c *Cell) Signature {
			return fixed(c.Declared, []Port{jsonPort("out"), {Name: "ref", Type: TypeRef}})
		}, Record: []string{"effectDigest"}},
	{Kind: KindOrganism, Fields: []string{"id", "kind", "manifest", "via"}, Ports: ChildPorts, fill: fillEmbed, Record: []string{"via"}},
	{Kind: KindRepeat, Fields: []string{"id", "kind", "manifest", "via", "maxRounds", "carry", "until"}, Ports: ChildPorts, fill: fillEmbed, Record: []string{"rounds", "via"}},
	{Kind: KindEach, Fields: []string{"id", "kind", "manifest", "via", "maxItems", "over"}, Ports: ChildPorts, fill: fillEmbed, Record: []string{"items", "via"}},
	{Kind: KindStore, Fields: []string{"id", "kind"},
		Signature: func(*Cell) Signature { return fixed([]Port{jsonPort("data")}, []Port{{Name: "ref", Type: TypeRef}}) }},
	{Kind: KindLoad, Fields: []string{"id", "kind"},
		Signature: func(*Cell) Signature { return fixed([]Port{{Name: "ref", Type: TypeRef}}, []Port{jsonPort("data")}) }},
	{Kind: KindSlot, Fields: []string{"id", "kind", "name", "mode", "default"}, fill: fillSlot, Record: []string{"slot"},
		Signature: func(c *Cell) Signature {
			if c.Slot.Mode == "write" {
				return fixed([]Port{jsonPort("data")}, []Port{jsonPort("data")})
			}
			return fixed(nil, []Port{jsonPort("data")})
		}},
	{Kind: KindSpawn, Fields: []string{"id", "kind"},
		Signature: func(*Cell) Signature {
			return fixed([]Port{optional(jsonPort("args")), jsonPort("manifest")}, []Port{jsonPort("data"), textPort("digest")})
		}},
	{Kind: KindTool, Fields: []string{"id", "kind", "tool", "budget"}, Ports: ToolPorts, fill: fillTool, Record: []string{"effectDigest"}},
}

// kindIndex finds a kind's row.
var kindIndex = func() map[Kind]*KindSpec {
	idx := make(map[Kind]*KindSpec, len(kindTable))
	for i := range kindTable {
		idx[kindTable[i].Kind] = &kindTable[i]
	}
	return idx
}()

// KindOf returns the row of kind k.
func KindOf(k Kind) (*KindSpec, bool) {
	s, ok := kindIndex[k]
	return s, ok
}

// Kinds lists the cell kinds in table order.
func Kinds() []Kind {
	out := make([]Kind, len(kindTable))
	for i, s := range kindTable {
		out[i] = s.Kind
	}
	return out
}

// RecordKeys lists every key a committed cell record of some kind may
// carry besides status, work and outputs, each once, in table order.
func RecordKeys() []string {
	var out []string
	for _, s := range kindTable {
		for _, k := range s.Record {
			if !slices.Contains(out, k) {
				out = append(out, k)
			}
		}
	}
	return out
}

// declaredOutputs is the signature of a cell that declares its outputs
// (input, const): the ports without their values.
func declaredOutputs(c *Cell) Signature {
	outs := make([]Port, len(c.Declared))
	for i, p := range c.Declared {
		p.Value, p.HasValue = nil, false
		outs[i] = p
	}
	return Signature{Outputs: outs}
}

// agentSignature is the signature of agent-style cells: the declared
// inputs and one output of the cell's output contract.
func agentSignature(c *Cell) Signature { return fixed(c.Declared, []Port{c.Agent.Output.Port()}) }
