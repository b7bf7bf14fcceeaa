package manifest

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/algal-assay/assay/engine/fault"
)

// Resolver supplies child manifests named by digest in organism, repeat and
// each cells. via is the cell's transport name ("" when none) so a resolver
// backed by a store may fall back to a bundle transport. A miss returns
// (nil, nil) or an error carrying STORE_MISS; Compile re-normalizes what it
// gets and rejects content whose digest differs (DIGEST_MISMATCH).
type Resolver interface {
	ResolveManifest(digest, via string) (any, error)
}

// MapResolver is an in-memory Resolver: digest -> manifest value.
type MapResolver map[string]any

// ResolveManifest implements Resolver; via is ignored.
func (r MapResolver) ResolveManifest(digest, _ string) (any, error) {
	return r[digest], nil
}

// Add admits v and files its normalized form under its digest.
func (r MapResolver) Add(v any) (*Manifest, error) {
	m, err := ParseValue(v)
	if err != nil {
		return nil, err
	}
	r[m.Digest] = m.Value
	return m, nil
}

// LoadModules admits every *.algal.json file directly inside dir (sorted by
// name) into a MapResolver, so digest references among them resolve.
func LoadModules(dir string) (MapResolver, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, &fault.Error{Code: "IO_FAILED", Message: fmt.Sprintf("modules %s: %v", dir, err)}
	}
	r := MapResolver{}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".algal.json") {
			continue
		}
		m, err := ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		r[m.Digest] = m.Value
	}
	return r, nil
}

// Options configure Compile.
type Options struct {
	// Resolver supplies embedded children; nil resolves nothing.
	Resolver Resolver
	// Fns extends Builtins for fn cells and agent tools.
	Fns map[string]Signature
	// Tools are the host-admitted tools (a tools file's signatures) for
	// tool cells and agent tools. ReservedTools are admitted unless
	// NoReservedTools is set.
	Tools           map[string]Signature
	NoReservedTools bool
}

func (o *Options) fn(name string) (Signature, bool) {
	if s, ok := o.Fns[name]; ok {
		return s, true
	}
	s, ok := builtins[name]
	return s, ok
}

// fnNames lists the fn names o admits, for a did-you-mean.
func (o *Options) fnNames() []string {
	names := slices.Collect(maps.Keys(builtins))
	for n := range o.Fns {
		names = append(names, n)
	}
	return names
}

func (o *Options) tool(name string) (Signature, bool) {
	if s, ok := o.Tools[name]; ok {
		return s, true
	}
	if o.NoReservedTools {
		return Signature{}, false
	}
	s, ok := reservedTools[name]
	return s, ok
}

// Stats are the counters of one compilation across the whole embedding
// graph, every occurrence counted (a digest embedded twice counts twice).
type Stats struct {
	Instances, Cells, Edges, Bytes int
}

// CompiledEdge is an edge with its ends resolved to cell indices and the
// producer and consumer port types (Consumer is the declared input port,
// Many included; for a fail edge Producer is the named port though the
// delivered value is the failure record).
type CompiledEdge struct {
	*Edge
	FromIndex, ToIndex int
	Producer, Consumer Port
}

// Compiled is a manifest admitted together with its whole embedding graph.
type Compiled struct {
	Manifest *Manifest
	Depth    int
	// Signatures holds every cell's complete port types, by cell index.
	Signatures []Signature
	// Children holds the compiled child of organism/repeat/each cells by
	// cell index (nil for other kinds).
	Children []*Compiled
	// Edges by manifest order; Inbound/Outbound list edge indices per cell
	// in manifest order.
	Edges    []CompiledEdge
	Inbound  [][]int
	Outbound [][]int
	// Order is a topological order of cell indices; among ready cells the
	// earliest declared comes first, so it equals declared order whenever
	// declared order is already topological.
	Order []int
	// Stats is the compilation total (meaningful on the root).
	Stats Stats
}

// Signature returns the port types of the cell with the given id.
func (c *Compiled) Signature(id string) (*Signature, bool) {
	i, ok := c.Manifest.byID[id]
	if !ok {
		return nil, false
	}
	return &c.Signatures[i], true
}

// InterfaceSignature types the manifest's interface: interface inputs take
// the type of the input cell port they name, outputs the producing port's.
func (c *Compiled) InterfaceSignature() (Signature, error) {
	iface := c.Manifest.Interface
	if iface == nil {
		return Signature{}, fail(fault.InterfaceMismatch, "", "embedded organism %s declares no interface", c.Manifest.Key)
	}
	sig := Signature{}
	for _, ip := range iface.Inputs {
		p, err := c.interfacePort("inputs", ip)
		if err != nil {
			return sig, err
		}
		sig.Inputs = append(sig.Inputs, p)
	}
	for _, ip := range iface.Outputs {
		p, err := c.interfacePort("outputs", ip)
		if err != nil {
			return sig, err
		}
		sig.Outputs = append(sig.Outputs, p)
	}
	return sig, nil
}

// interfacePort types one interface port of side ("inputs" or "outputs"):
// the output port it names, renamed, without a const value.
func (c *Compiled) interfacePort(side string, ip InterfacePort) (Port, error) {
	loc := fmt.Sprintf("interface.%s.%s", side, ip.Name)
	i, ok := c.Manifest.byID[ip.Cell]
	if side == "inputs" && (!ok || c.Manifest.Cells[i].Kind != KindInput) {
		return Port{}, hinted(fail(fault.InterfaceMismatch, loc, "must name an input cell, got %q", ip.Cell), ip.Cell, c.Manifest.cellIDs(KindInput))
	}
	if !ok {
		return Port{}, hinted(fail(fault.InterfaceMismatch, loc, "names missing cell %q", ip.Cell), ip.Cell, c.Manifest.cellIDs(""))
	}
	p, ok := c.Signatures[i].Output(ip.Port)
	if !ok {
		return Port{}, hinted(fail(fault.InterfaceMismatch, loc, "cell %q has no output port %q", ip.Cell, ip.Port), ip.Port, portNames(c.Signatures[i].Outputs))
	}
	p.Name = ip.Name
	p.Value, p.HasValue = nil, false
	return p, nil
}

type compiler struct {
	opts   *Options
	stats  Stats
	parsed map[string]*Manifest
}

// Compile admits root and its whole embedding graph: every child resolved
// by digest, every cell typed, every edge checked, within the compilation
// bounds (MaxCompileInstance instances, MaxCompileCells cells,
// MaxCompileEdges edges, MaxCompileBytes normalized bytes, depth
// MaxCompileDepth).
func Compile(root *Manifest, opts Options) (*Compiled, error) {
	c := &compiler{opts: &opts, parsed: map[string]*Manifest{}}
	out, err := c.compile(root, 0)
	if err != nil {
		return nil, err
	}
	out.Stats = c.stats
	return out, nil
}

func (c *compiler) admit(m *Manifest) error {
	s := c.stats
	s.Instances++
	s.Cells += len(m.Cells)
	s.Edges += len(m.Edges)
	if s.Instances > MaxCompileInstance || s.Cells > MaxCompileCells || s.Edges > MaxCompileEdges {
		return limit("", "expanded compilation count budget exceeded (%d instances, %d cells, %d edges)", s.Instances, s.Cells, s.Edges)
	}
	s.Bytes += len(m.Canonical)
	if s.Bytes > MaxCompileBytes {
		return limit("", "expanded compilation manifest byte budget exceeded (%d bytes)", s.Bytes)
	}
	c.stats = s
	return nil
}

func (c *compiler) resolve(digest, via string) (*Manifest, error) {
	if m, ok := c.parsed[digest]; ok {
		return m, nil
	}
	if c.opts.Resolver == nil {
		return nil, fail(fault.StoreMiss, "", "manifest %s is not in the store (no resolver)", digest)
	}
	v, err := c.opts.Resolver.ResolveManifest(digest, via)
	if err != nil {
		return nil, err
	}
	if v == nil {
		return nil, fail(fault.StoreMiss, "", "manifest %s is not in the store", digest)
	}
	m, err := ParseValue(v)
	if err != nil {
		return nil, within("manifest "+digest, err)
	}
	if m.Digest != digest {
		return nil, fail(fault.DigestMismatch, "", "manifest resolved for %s normalizes to %s", digest, m.Digest)
	}
	c.parsed[digest] = m
	return m, nil
}

func (c *compiler) compile(m *Manifest, depth int) (*Compiled, error) {
	if depth > MaxCompileDepth {
		return nil, fail(fault.DepthExceeded, "", "compile depth %d exceeds %d", depth, MaxCompileDepth)
	}
	if err := c.admit(m); err != nil {
		return nil, err
	}
	n := len(m.Cells)
	out := &Compiled{Manifest: m, Depth: depth, Signatures: make([]Signature, n), Children: make([]*Compiled, n)}
	for _, cell := range m.Cells {
		if err := c.compileCell(out, cell, depth); err != nil {
			return nil, within(cellLoc(cell), err)
		}
	}
	if m.Interface != nil {
		if _, err := out.InterfaceSignature(); err != nil {
			return nil, err
		}
	}
	if err := checkEdges(out); err != nil {
		return nil, err
	}
	if err := order(out); err != nil {
		return nil, err
	}
	for _, cell := range m.Cells {
		if err := c.checkEffectCell(out, cell); err != nil {
			return nil, within(cellLoc(cell), err)
		}
	}
	return out, nil
}

// cellLoc locates a cell by index and id.
func cellLoc(cell *Cell) string { return fmt.Sprintf("cells[%d] %q", cell.Index, cell.ID) }

// compileCell compiles the child a cell embeds, if any, and types the cell.
func (c *compiler) compileCell(out *Compiled, cell *Cell, depth int) error {
	if cell.Embed != nil {
		child, err := c.resolve(cell.Embed.Manifest, cell.Embed.Via)
		if err == nil {
			out.Children[cell.Index], err = c.compile(child, depth+1)
		}
		if err != nil {
			return err
		}
	}
	sig, err := c.signature(out, cell)
	if err != nil {
		return err
	}
	sig.Name = cell.ID
	out.Signatures[cell.Index] = sig
	return nil
}

func fixed(in, out []Port) Signature { return Signature{Inputs: in, Outputs: out} }

// signature reads where the cell's ports come from in the kind table.
func (c *compiler) signature(out *Compiled, cell *Cell) (Signature, error) {
	spec, ok := KindOf(cell.Kind)
	if !ok {
		return Signature{}, fail(fault.ManifestInvalid, "kind", "unsupported cell kind %q", cell.Kind)
	}
	switch spec.Ports {
	case FnPorts:
		s, ok := c.opts.fn(cell.Fn)
		if !ok {
			return s, hinted(fail(fault.FnUnknown, "fn", "unknown fn %s", cell.Fn), cell.Fn, c.opts.fnNames())
		}
		return s, nil
	case ToolPorts:
		s, ok := c.opts.tool(cell.Tool.Name)
		if !ok {
			return s, fail(fault.ToolUnknown, "tool", "tool %s is not host-admitted", cell.Tool.Name)
		}
		return s, nil
	case ChildPorts:
		return embedSignature(out.Children[cell.Index], cell)
	}
	return spec.Signature(cell), nil
}

// embedKindSignatures adjust an embedded child's interface signature to
// the embedding cell's kind (organism keeps it as is).
var embedKindSignatures = map[Kind]func(sig *Signature, e *EmbedCell) error{
	KindRepeat: repeatSignature,
	KindEach:   eachSignature,
}

func embedSignature(child *Compiled, cell *Cell) (Signature, error) {
	sig, err := child.InterfaceSignature()
	if err != nil {
		return sig, err
	}
	if adjust, ok := embedKindSignatures[cell.Kind]; ok {
		err = adjust(&sig, cell.Embed)
	}
	return sig, err
}

// repeatSignature checks a repeat's carries and until against the child's
// interface; a carried input becomes optional (round one has no carry).
func repeatSignature(sig *Signature, e *EmbedCell) error {
	for _, cr := range e.Carry {
		if err := sig.carry(cr); err != nil {
			return err
		}
	}
	if e.Until != nil {
		return sig.checkUntil(e.Until)
	}
	return nil
}

// carry checks that cr joins an interface output to an input of the same
// type and cardinality, and makes that input optional.
func (sig *Signature) carry(cr Carry) error {
	loc := "carry." + cr.Output
	src, ok1 := sig.Output(cr.Output)
	_, ok2 := sig.Input(cr.Input)
	if !ok1 || !ok2 {
		return fail(fault.InterfaceMismatch, loc, "carry must name an interface output and input (%s -> %s)", cr.Output, cr.Input)
	}
	for j := range sig.Inputs {
		if sig.Inputs[j].Name != cr.Input {
			continue
		}
		dst := sig.Inputs[j]
		if !Compatible(src, dst) || (dst.Many && !src.Many) {
			return fail(fault.TypeMismatch, loc, "repeat carry must preserve interface port types and cardinality (%s -> %s)", describePort(src), describePort(dst))
		}
		sig.Inputs[j].Optional = true
	}
	return nil
}

// checkUntil checks a repeat's exit condition against the output it reads.
func (sig *Signature) checkUntil(u *Until) error {
	p, ok := sig.Output(u.Output)
	if !ok {
		return fail(fault.InterfaceMismatch, "until.output", "interface has no output %q", u.Output)
	}
	if u.Field != "" && p.Type != TypeJSON {
		return fail(fault.GuardInvalid, "until.field", "requires a json output, %q is %s", u.Output, p.Type)
	}
	if u.Field == "" && p.Type == TypeChoice && !p.HasLabel(u.Equals) {
		return fail(fault.GuardInvalid, "until.equals", "%q is not a declared label of %q", u.Equals, u.Output)
	}
	return nil
}

// eachSignature turns the input each iterates over into a json list and
// every output into a list.
func eachSignature(sig *Signature, e *EmbedCell) error {
	found := false
	for j := range sig.Inputs {
		if sig.Inputs[j].Name != e.Over {
			continue
		}
		found = true
		if sig.Inputs[j].Type == TypeCap {
			return fail(fault.TypeMismatch, "over", "each cannot turn a json list into capability input %q; use a typed pass-through input", e.Over)
		}
		sig.Inputs[j] = jsonPort(e.Over)
	}
	if !found {
		return fail(fault.InterfaceMismatch, "over", "%q is not an interface input", e.Over)
	}
	for j := range sig.Outputs {
		sig.Outputs[j].Many = true
	}
	return nil
}

// Compatible reports whether a producer port may feed a consumer port:
// same type; choice feeds text; choice feeds choice when the consumer's
// labels cover the producer's; anything but ref and cap feeds json; ref
// feeds only ref; cap feeds only cap of the same class. A many (list)
// producer feeds a scalar consumer only when that consumer is json, and
// the rules then apply per element.
func Compatible(from, to Port) bool {
	if from.Many && !to.Many && to.Type != TypeJSON {
		return false
	}
	if from.Type == TypeCap || to.Type == TypeCap {
		return from.Type == TypeCap && to.Type == TypeCap && from.Capability == to.Capability
	}
	if from.Type == TypeRef || to.Type == TypeRef {
		return from.Type == to.Type
	}
	if to.Type == TypeJSON {
		return true
	}
	if from.Type == to.Type {
		return labelsCover(from.Labels, to.Labels)
	}
	return from.Type == TypeChoice && to.Type == TypeText
}

// labelsCover reports whether the consumer's labels (nil: any) include
// every producer label (nil: none declared).
func labelsCover(from, to []string) bool {
	if from == nil || to == nil {
		return true
	}
	for _, l := range from {
		if !contains(to, l) {
			return false
		}
	}
	return true
}

// cellIDs lists the ids of m's cells (of one kind, unless kind is empty),
// for a did-you-mean.
func (m *Manifest) cellIDs(kind Kind) []string {
	var ids []string
	for _, c := range m.Cells {
		if kind == "" || c.Kind == kind {
			ids = append(ids, c.ID)
		}
	}
	return ids
}

func describePort(p Port) string {
	s := p.Type
	if p.Type == TypeCap {
		s += "(" + p.Capability + ")"
	}
	if p.Labels != nil {
		s += fmt.Sprintf("%q", p.Labels)
	}
	if p.Many {
		s += " many"
	}
	return s
}

func checkEdges(out *Compiled) error {
	m := out.Manifest
	n := len(m.Cells)
	out.Inbound = make([][]int, n)
	out.Outbound = make([][]int, n)
	out.Edges = make([]CompiledEdge, len(m.Edges))
	for i, e := range m.Edges {
		ce, err := checkEdge(out, i, e)
		if err != nil {
			return err
		}
		out.Inbound[ce.ToIndex] = append(out.Inbound[ce.ToIndex], i)
		out.Outbound[ce.FromIndex] = append(out.Outbound[ce.FromIndex], i)
		out.Edges[i] = ce
	}
	return nil
}

// checkEdge resolves edge i's ends and checks that the producer may feed
// the consumer, the guard suits the producer, and the input is not fed
// twice unless it is many.
func checkEdge(out *Compiled, i int, e *Edge) (CompiledEdge, error) {
	loc := fmt.Sprintf("edges[%d]", i)
	fi, producer, err := edgeEnd(out, loc, e.From, false)
	if err != nil {
		return CompiledEdge{}, err
	}
	ti, consumer, err := edgeEnd(out, loc, e.To, true)
	if err != nil {
		return CompiledEdge{}, err
	}
	if e.OnFail {
		if consumer.Type != TypeJSON {
			return CompiledEdge{}, fail(fault.TypeMismatch, loc, "a failure edge needs a json consumer, %s.%s is %s", e.To.Cell, e.To.Port, describePort(consumer))
		}
	} else if !Compatible(producer, consumer) {
		return CompiledEdge{}, fail(fault.TypeMismatch, loc, "%s.%s (%s) cannot feed %s.%s (%s)", e.From.Cell, e.From.Port, describePort(producer), e.To.Cell, e.To.Port, describePort(consumer))
	}
	if err := checkGuard(e, producer, loc); err != nil {
		return CompiledEdge{}, err
	}
	if err := checkFanIn(out, e, ti, consumer, loc); err != nil {
		return CompiledEdge{}, err
	}
	return CompiledEdge{Edge: e, FromIndex: fi, ToIndex: ti, Producer: producer, Consumer: consumer}, nil
}

// checkGuard checks a label or field guard against the producer port.
func checkGuard(e *Edge, producer Port, loc string) error {
	g := e.Guard
	switch {
	case g == nil:
		return nil
	case g.Kind == GuardField && producer.Type != TypeJSON:
		return fail(fault.GuardInvalid, loc+".guard", "field guard needs a json producer, %s.%s is %s", e.From.Cell, e.From.Port, producer.Type)
	case g.Kind == GuardLabel && producer.Type != TypeChoice:
		return fail(fault.GuardInvalid, loc+".guard", "equals guard needs a choice producer, %s.%s is %s", e.From.Cell, e.From.Port, producer.Type)
	case g.Kind == GuardLabel && !producer.HasLabel(g.Equals):
		return fail(fault.GuardInvalid, loc+".guard.equals", "%q is not a declared label of %s.%s", g.Equals, e.From.Cell, e.From.Port)
	}
	return nil
}

// checkFanIn enforces single assignment: an input fed by an earlier edge
// must be many, and normal and failure edges do not mix on it.
func checkFanIn(out *Compiled, e *Edge, ti int, consumer Port, loc string) error {
	for _, prior := range out.Inbound[ti] {
		pe := out.Manifest.Edges[prior]
		if pe.To.Port != e.To.Port {
			continue
		}
		if !consumer.Many {
			return fail(fault.ManifestInvalid, loc+".to", "input %s.%s already fed by edges[%d] (single assignment; declare many)", e.To.Cell, e.To.Port, prior)
		}
		if pe.OnFail != e.OnFail {
			return fail(fault.ManifestInvalid, loc+".to", "input %s.%s mixes normal and failure edges", e.To.Cell, e.To.Port)
		}
	}
	return nil
}

// edgeEnd resolves one end of the edge at loc: its cell, then its port
// among that cell's outputs (the producer end) or inputs (the consumer end).
func edgeEnd(out *Compiled, loc string, end Endpoint, consumer bool) (int, Port, error) {
	field, role, side := loc+".from", "producer", "output"
	if consumer {
		field, role, side = loc+".to", "consumer", "input"
	}
	i, ok := out.Manifest.byID[end.Cell]
	if !ok {
		return 0, Port{}, hinted(fail(fault.ManifestInvalid, field, "unknown %s cell %q", role, end.Cell), end.Cell, out.Manifest.cellIDs(""))
	}
	ports := out.Signatures[i].Outputs
	if consumer {
		ports = out.Signatures[i].Inputs
	}
	p, ok := findPort(ports, end.Port)
	if !ok {
		return 0, Port{}, hinted(fail(fault.ManifestInvalid, field, "cell %q has no %s port %q", end.Cell, side, end.Port), end.Port, portNames(ports))
	}
	return i, p, nil
}

// order computes the topological order, earliest declared cell first among
// ready cells, and rejects cycles.
func order(out *Compiled) error {
	n := len(out.Manifest.Cells)
	indeg := make([]int, n)
	for _, e := range out.Edges {
		indeg[e.ToIndex]++
	}
	done := make([]bool, n)
	out.Order = make([]int, 0, n)
	for len(out.Order) < n {
		next := nextReady(done, indeg)
		if next < 0 {
			return cycleError(out, done)
		}
		done[next] = true
		out.Order = append(out.Order, next)
		for _, ei := range out.Outbound[next] {
			indeg[out.Edges[ei].ToIndex]--
		}
	}
	return nil
}

// nextReady returns the earliest declared cell not yet ordered whose
// inputs are all ordered, or -1.
func nextReady(done []bool, indeg []int) int {
	for i := range done {
		if !done[i] && indeg[i] == 0 {
			return i
		}
	}
	return -1
}

// cycleError names the cells left unordered.
func cycleError(out *Compiled, done []bool) error {
	var stuck []string
	for i, d := range done {
		if !d {
			stuck = append(stuck, fmt.Sprintf("%q", out.Manifest.Cells[i].ID))
		}
	}
	return fail(fault.GraphCycle, "edges", "the graph has a cycle through %s; organisms must be acyclic", strings.Join(stuck, ", "))
}

// ancestors returns the cells with a path of edges into cell i.
func ancestors(out *Compiled, i int) map[string]bool {
	seen := map[string]bool{}
	pending := []int{i}
	for len(pending) > 0 {
		cur := pending[len(pending)-1]
		pending = pending[:len(pending)-1]
		for _, ei := range out.Inbound[cur] {
			from := out.Edges[ei].FromIndex
			id := out.Manifest.Cells[from].ID
			if !seen[id] {
				seen[id] = true
				pending = append(pending, from)
			}
		}
	}
	return seen
}

// checkEffectCell checks view and tools of agent-family and decide cells
// against the compiled graph.
func (c *compiler) checkEffectCell(out *Compiled, cell *Cell) error {
	var view *View
	var tools []string
	switch {
	case cell.Agent != nil:
		view, tools = &cell.Agent.View, cell.Agent.Tools
	case cell.Decide != nil:
		view = &cell.Decide.View
	default:
		return nil
	}
	if err := checkView(out, cell, view); err != nil {
		return err
	}
	for k, t := range tools {
		_, isFn := c.opts.fn(t)
		_, isTool := c.opts.tool(t)
		if !isFn && !isTool {
			return fail(fault.ToolUnknown, fmt.Sprintf("tools[%d]", k), "tool %q is not host-admitted", t)
		}
	}
	return nil
}

// checkView checks that a view names declared inputs, and ancestors and
// their output ports.
func checkView(out *Compiled, cell *Cell, view *View) error {
	sig := &out.Signatures[cell.Index]
	for _, in := range view.Inputs {
		if _, ok := sig.Input(in); !ok {
			return fail(fault.ManifestInvalid, "view.inputs", "names undeclared input %q", in)
		}
	}
	if view.Graph && len(view.Cells) == 0 {
		return fail(fault.ManifestInvalid, "view.graph", "requires view.cells")
	}
	if len(view.Cells) == 0 {
		return nil
	}
	anc := ancestors(out, cell.Index)
	for k, vc := range view.Cells {
		if err := checkViewCell(out, cell, vc, anc, fmt.Sprintf("view.cells[%d]", k)); err != nil {
			return err
		}
	}
	return nil
}

func checkViewCell(out *Compiled, cell *Cell, vc ViewCell, anc map[string]bool, loc string) error {
	if !anc[vc.Cell] {
		return fail(fault.ManifestInvalid, loc, "%q is not an ancestor of %q", vc.Cell, cell.ID)
	}
	ps, _ := out.Signature(vc.Cell)
	for _, p := range vc.Ports {
		if _, ok := ps.Output(p); !ok {
			return fail(fault.ManifestInvalid, loc+".ports", "cell %q has no output port %q", vc.Cell, p)
		}
	}
	return nil
}

// PortNames returns the input (or output) port names in byte order.
func (s *Signature) PortNames(outputs bool) []string {
	list := s.Inputs
	if outputs {
		list = s.Outputs
	}
	names := portNames(list)
	sort.Strings(names)
	return names
}
