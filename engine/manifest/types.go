package manifest

import (
	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/expr"
)

// Contract is the manifest contract literal.
const Contract = "algal.organism.v1"

// ExprContract is the only program contract a manifest may carry.
const ExprContract = "algal.expr.v1"

// Bounds of the algal.organism.v1 contract.
const (
	MaxManifestBytes   = 1_048_576 // file and normalized canonical size
	MaxCells           = 64
	MaxEdges           = 256
	MaxPorts           = 32
	MaxIDLen           = canon.MaxIDLen
	MaxNameLen         = 120
	MaxNoteLen         = 2000
	MaxPromptLen       = 8192
	MaxLabels          = 32
	MaxLabelLen        = 64
	MaxTools           = 16
	MaxViewCells       = 16
	MaxTurns           = 16
	MaxRetryAttempts   = 8
	MaxRounds          = 16
	MaxCarry           = 32
	MaxEachItems       = 64
	MaxRecallK         = 32
	MaxEffectMs        = 600_000
	MaxValueBytes      = 262_144
	MaxInterfacePorts  = 32
	MaxQuestions       = 64
	MaxQuestionName    = 100
	MaxInstructions    = 4096
	MaxCriteria        = 32
	MaxCriterionLen    = 512
	MaxSchemaDepthV1   = 4
	MaxSchemaLevels    = 8
	MaxExprFuel        = 100_000
	MaxCompileInstance = 1_024
	MaxCompileCells    = 4_096
	MaxCompileEdges    = 16_384
	MaxCompileBytes    = 67_108_864
	MaxCompileDepth    = 64
)

// Kind is a cell kind.
type Kind string

// The cell kinds of algal.organism.v1.
const (
	KindInput      Kind = "input"
	KindConst      Kind = "const"
	KindFn         Kind = "fn"
	KindExpr       Kind = "expr"
	KindAgent      Kind = "agent"
	KindClassifier Kind = "classifier"
	KindGate       Kind = "gate"
	KindDecide     Kind = "decide"
	KindRecall     Kind = "recall"
	KindOrganism   Kind = "organism"
	KindRepeat     Kind = "repeat"
	KindEach       Kind = "each"
	KindStore      Kind = "store"
	KindLoad       Kind = "load"
	KindSlot       Kind = "slot"
	KindSpawn      Kind = "spawn"
	KindTool       Kind = "tool"
)

// IsEffect reports whether activations of this kind issue an effect request.
func (k Kind) IsEffect() bool {
	s, ok := KindOf(k)
	return ok && s.Effect
}

// Embeds reports whether the kind embeds a child manifest by digest.
func (k Kind) Embeds() bool {
	s, ok := KindOf(k)
	return ok && s.Ports == ChildPorts
}

// Port types.
const (
	TypeText   = "text"
	TypeJSON   = "json"
	TypeChoice = "choice"
	TypeRef    = "ref"
	TypeCap    = "cap"
)

// Port is one typed port declaration.
type Port struct {
	Name     string
	Type     string // text | json | choice | ref | cap
	Optional bool
	Many     bool
	// Labels is set for a choice port that declares labels (nil: any string).
	Labels []string
	// Schema is the json schema declaration (nil when absent); SchemaVersion
	// is 1 without "schemaVersion", else 2 or 3.
	Schema        any
	SchemaVersion int
	// Capability is the class of a cap port.
	Capability string
	// Value is a const port's literal (HasValue true).
	Value    any
	HasValue bool
}

// Scalar returns the port with Many cleared: the per-element type.
func (p Port) Scalar() Port { p.Many = false; return p }

// HasLabel reports whether a choice port declares label l (true when the
// port declares no labels at all).
func (p Port) HasLabel(l string) bool {
	if p.Labels == nil {
		return true
	}
	for _, x := range p.Labels {
		if x == l {
			return true
		}
	}
	return false
}

// Output is an output contract ({"kind":"text"|"json"|"choice",...}).
type Output struct {
	Kind          string // text | json | choice
	Labels        []string
	OnMiss        string
	HasOnMiss     bool
	Schema        any
	SchemaVersion int
	// Value is the normalized declaration as it rides effect requests.
	Value map[string]any
}

// Port returns the single output port "out" this contract produces.
func (o *Output) Port() Port {
	return Port{Name: "out", Type: o.Kind, Labels: o.Labels, Schema: o.Schema, SchemaVersion: o.SchemaVersion}
}

// Route is an executor selection hint.
type Route struct {
	Provider, Model, Preset string
	// Value is the route object verbatim (it rides effect requests).
	Value map[string]any
}

// Budget is a cell's effect budget; zero means "not declared".
type Budget struct {
	MaxContextBytes int
	MaxOutputBytes  int
	MaxTurns        int
	MaxEffectMs     int
}

// Budgets are the manifest's run budgets, always complete after parsing.
type Budgets struct {
	MaxSteps        int
	MaxAgentCalls   int
	MaxWork         int
	MaxContextBytes int
	MaxOutputBytes  int
	MaxDepth        int
}

// DefaultBudgets returns the budgets filled in for every budget a manifest
// omits (a fresh value: a function, not a variable, so no caller can change
// them for every later parse).
func DefaultBudgets() Budgets {
	return Budgets{MaxSteps: 256, MaxAgentCalls: 16, MaxWork: 1_000_000,
		MaxContextBytes: 65_536, MaxOutputBytes: 65_536, MaxDepth: 4}
}

// View selects what enters an effect request's context.
type View struct {
	// AllInputs is true for "inputs":"*"; otherwise Inputs lists names.
	AllInputs bool
	Inputs    []string
	Note      string
	HasNote   bool
	Cells     []ViewCell
	Graph     bool
	// Value is the normalized view object.
	Value map[string]any
}

// ViewCell names an ancestor whose record enters the context, optionally
// sliced to some of its output ports (nil Ports: all).
type ViewCell struct {
	Cell  string
	Ports []string
}

// Program is an embedded algal.expr.v1 program, statically checked.
type Program struct {
	Source   any // the "program" value as declared
	Compiled *expr.Program
	// Value is the {"contract","program"} object verbatim.
	Value map[string]any
}

// Question is one entry of a decide cell's question map.
type Question struct {
	Name         string
	Type         string // noul | choice | score
	Instructions string
	Criteria     any // nil when absent
}

// Compact is an agent's tool-log compaction policy.
type Compact struct {
	MaxLogBytes   int
	KeepRecent    int
	HasKeepRecent bool
	Mode          string // "" or "elide"
	Route         *Route
}

// AgentCell holds the fields of agent, classifier and gate cells.
type AgentCell struct {
	Prompt  string
	View    View
	Output  Output
	Route   *Route
	Tools   []string
	Compact *Compact
	// Shadow is the label committed instead of the model output (HasShadow).
	Shadow    string
	HasShadow bool
	Retry     int // attempts; 0 when not declared
	Budget    Budget
}

// DecideCell holds the fields of a decide cell.
type DecideCell struct {
	Prompt    string
	HasPrompt bool
	// Questions in canonical (UTF-16) key order; QuestionsValue verbatim.
	Questions      []Question
	QuestionsValue map[string]any
	View           View
	Route          *Route
	Retry          int
	Budget         Budget
}

// RecallCell holds the fields of a recall cell.
type RecallCell struct {
	Query Program
	// K and Embedder are as declared (0 / ""); EffectiveK and
	// EffectiveEmbedder apply the run-time defaults.
	K        int
	Embedder string
	Route    *Route
	Rerank   *Rerank
	Retry    int
	Budget   Budget
}

// EffectiveK is k with its default of 8.
func (r *RecallCell) EffectiveK() int {
	if r.K == 0 {
		return 8
	}
	return r.K
}

// EffectiveEmbedder is the embedder with its default of "local".
func (r *RecallCell) EffectiveEmbedder() string {
	if r.Embedder == "" {
		return "local"
	}
	return r.Embedder
}

// Rerank is a recall cell's decision rerank policy; Take 0 keeps all hits.
type Rerank struct {
	Route Route
	Take  int
}

// ExprCell holds an expr cell's program and output contract.
type ExprCell struct {
	Program Program
	Output  Output
}

// EmbedCell holds the fields of organism, repeat and each cells.
type EmbedCell struct {
	Manifest string // sha256: digest of the child
	Via      string // transport name, "" when absent
	// repeat
	MaxRounds int
	Carry     []Carry // in canonical key order of the output name
	Until     *Until
	// each
	Over     string
	MaxItems int
}

// Carry feeds a repeat round's interface output into the next round's input.
type Carry struct{ Output, Input string }

// Until is a repeat cell's early-exit condition.
type Until struct {
	Output string
	Equals string
	Field  string // "" when absent
}

// SlotCell holds the fields of a slot cell.
type SlotCell struct {
	Name       string
	Mode       string // read | write
	Default    any
	HasDefault bool
}

// ToolCell holds the fields of a tool cell.
type ToolCell struct {
	Name   string
	Budget Budget // only MaxEffectMs may be set
}

// Cell is one admitted cell. Exactly the kind's field below is set: Agent
// for agent/classifier/gate, Decide, Recall, Expr, Embed for
// organism/repeat/each, Slot, Tool, Fn (the registry name). Declared holds
// the ports written in the manifest: outputs of input/const cells, inputs of
// expr/agent/classifier/gate/decide/recall cells, in canonical key order.
// The complete port signature of every cell is on Compiled.
type Cell struct {
	Index    int
	ID       string
	Kind     Kind
	Declared []Port

	Fn     string
	Agent  *AgentCell
	Decide *DecideCell
	Recall *RecallCell
	Expr   *ExprCell
	Embed  *EmbedCell
	Slot   *SlotCell
	Tool   *ToolCell

	// Value is the normalized cell object (part of the manifest digest).
	Value map[string]any
}

// Endpoint is one end of an edge.
type Endpoint struct{ Cell, Port string }

// Guard kinds.
const (
	GuardLabel = "label" // {"equals"} on a choice producer
	GuardField = "field" // {"field","equals"} on a json producer
	GuardExpr  = "expr"  // {"expr":{contract,program}} over {"value"}
)

// Guard is an edge predicate.
type Guard struct {
	Kind   string
	Equals string
	Field  string
	Expr   *Program
	// Value is the guard object verbatim.
	Value map[string]any
}

// Edge is one admitted edge.
type Edge struct {
	Index  int
	From   Endpoint
	To     Endpoint
	Guard  *Guard
	OnFail bool
	Value  map[string]any
}

// InterfacePort maps an interface name to a cell port.
type InterfacePort struct {
	Name string
	Cell string
	Port string
}

// Interface is a manifest's embedding interface.
type Interface struct {
	Inputs  []InterfacePort // canonical key order
	Outputs []InterfacePort
}

// Manifest is an admitted, normalized organism manifest. It is immutable
// after Parse; share it freely.
type Manifest struct {
	Key     string
	Name    string
	Note    string
	HasNote bool
	Budgets Budgets
	// Interface is nil when the manifest declares none.
	Interface *Interface
	// Cells and Edges keep their declared order.
	Cells []*Cell
	Edges []*Edge

	// Value is the normalized manifest (plain JSON values), Canonical its
	// canonical bytes and Digest the sha256: digest of those bytes.
	Value     map[string]any
	Canonical []byte
	Digest    string

	byID map[string]int
}

// Cell returns the cell with the given id.
func (m *Manifest) Cell(id string) (*Cell, bool) {
	i, ok := m.byID[id]
	if !ok {
		return nil, false
	}
	return m.Cells[i], true
}

// CellIndex returns the declared index of the cell with the given id.
func (m *Manifest) CellIndex(id string) (int, bool) {
	i, ok := m.byID[id]
	return i, ok
}
