package vm

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/effect"
	"github.com/algal-assay/assay/engine/expr"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/manifest"
	"github.com/algal-assay/assay/engine/receipt"
	"github.com/algal-assay/assay/engine/store"
)

// runner is the state one run shares across every scope: budgets and
// ledger (root-owned), the receipt's cells, effects and events, and the
// first unhandled failure.
type runner struct {
	host    *Host
	ctx     context.Context
	root    *manifest.Manifest
	budgets manifest.Budgets

	steps, calls, units int

	cells     map[string]*receipt.Cell
	effects   []effect.Record
	events    []receipt.Event
	failure   *receipt.RunFailure
	suspended bool
	// abort is the first host fault (an event log over its bound, a router
	// error): once set, the run stops at the next check and produces no
	// receipt; Run returns abort instead.
	abort *fault.Error

	sigs map[string]*cellSig // by manifest digest + "\x00" + cell id
	// tools types the host's admitted tools.
	tools map[string]manifest.Signature
	// fetched remembers which transport served a manifest's closure.
	fetched map[string]string
}

// resolver resolves child manifests from the run's store, falling back to
// the cell's transport; it is what admission compiles against.
type resolver struct{ r *runner }

func (rv resolver) ResolveManifest(digest, via string) (any, error) {
	v, ok, err := rv.r.host.Store.Get(store.Manifests, digest)
	if err != nil {
		return nil, err
	}
	if !ok && via != "" {
		if f := rv.r.fetchBundle(digest, via); f != nil {
			return nil, &failureError{f}
		}
		rv.r.fetched[digest] = via
		v, _, err = rv.r.host.Store.Get(store.Manifests, digest)
	}
	return v, err
}

// admit compiles m with its whole embedding graph against the host's
// registries: graph, type and bound errors reject the run before it
// starts.
func (r *runner) admit(m *manifest.Manifest) error {
	plain := len(r.host.Signatures) == 0 && len(r.tools) == 0
	if plain {
		for _, c := range m.Cells {
			if c.Embed != nil {
				plain = false
				break
			}
		}
		if plain && admitted.has(m) {
			return nil
		}
	}
	err := r.compile(m)
	if err == nil && plain {
		admitted.add(m)
	}
	return err
}

// admitted remembers manifests (immutable once parsed) that compiled
// against the builtin registry alone and embed no children, so repeated
// runs and verifications of one manifest do not recompile it. It is keyed
// by manifest digest, not by the parsed value: the compile verdict of a
// plain manifest depends on its canonical content alone, so every parsed
// copy of one manifest (each workload of a batch parses its own) shares
// one entry, and the cache keeps no parsed manifest alive. It is bounded:
// a long process that parses many manifests (a foundry search) keeps only
// the newest maxAdmitted digests.
var admitted = newAdmitCache(maxAdmitted)

const maxAdmitted = 256

// admitCache is a fixed-size set of manifest digests; when full, the
// oldest entry leaves first. A manifest without a digest (not made by
// manifest.Parse) is never cached.
type admitCache struct {
	mu    sync.Mutex
	set   map[string]struct{}
	ring  []string // insertion order, oldest at next once full
	next  int
	limit int
}

func newAdmitCache(limit int) *admitCache {
	return &admitCache{set: make(map[string]struct{}, limit), limit: limit}
}

func (c *admitCache) has(m *manifest.Manifest) bool {
	if m.Digest == "" {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.set[m.Digest]
	return ok
}

func (c *admitCache) add(m *manifest.Manifest) {
	if m.Digest == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.set[m.Digest]; ok {
		return
	}
	d := strings.Clone(m.Digest)
	if len(c.ring) < c.limit {
		c.ring = append(c.ring, d)
	} else {
		delete(c.set, c.ring[c.next])
		c.ring[c.next] = d
		c.next = (c.next + 1) % c.limit
	}
	c.set[d] = struct{}{}
}

func (c *admitCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.set)
}

func (r *runner) compile(m *manifest.Manifest) error {
	_, err := manifest.Compile(m, manifest.Options{Resolver: resolver{r}, Fns: r.host.Signatures, Tools: r.tools})
	return err
}

// hostFault records the run's first host fault; see runner.abort.
func (r *runner) hostFault(err *fault.Error) {
	if r.abort == nil {
		r.abort = err
	}
}

// aborted returns the cell failure that unwinds an activation once a host
// fault is recorded (nil while the run may go on). The failure never
// reaches a receipt: Run returns the host fault itself.
func (r *runner) aborted() *Failure {
	if r.abort == nil {
		return nil
	}
	return &Failure{Code: r.abort.Code, Message: r.abort.Message}
}

func (r *runner) event(kind, path, digest, outcome string) {
	if r.abort != nil {
		return
	}
	if len(r.events) >= receipt.MaxEvents {
		r.hostFault(&fault.Error{Code: fault.BudgetExhausted, Message: "receipt event count exceeds 4096"})
		return
	}
	e := receipt.Event{Seq: len(r.events), Kind: kind, Digest: digest}
	if path != "" {
		e.Path = &path
	}
	if outcome != "" {
		e.Outcome = &outcome
	}
	r.events = append(r.events, e)
}

// fail records the run's first unhandled failure.
func (r *runner) fail(f *Failure, path string) {
	if r.failure == nil {
		r.failure = &receipt.RunFailure{Code: f.Code, Message: f.Message, Path: path}
	}
}

// Run executes m with args (cell id -> port -> value) on host and returns
// the sealed algal.run.v1 receipt. An error is returned only for host
// faults (malformed args, event log overflow); every run-level outcome,
// failed included, is a receipt.
func Run(m *manifest.Manifest, args Args, host *Host) (map[string]any, error) {
	p, err := runChecked(m, args, host)
	if err != nil {
		return nil, err
	}
	return p.rec, nil
}

// produced is a run's receipt as the typed model, as the sealed value and
// as that value's canonical bytes (what the runs namespace stores; nil
// after a replay for verification, which stores nothing).
type produced struct {
	typed     *receipt.Receipt
	rec       map[string]any
	canonical []byte
}

// runChecked is run with the produced receipt validated.
func runChecked(m *manifest.Manifest, args Args, host *Host) (*produced, error) {
	p, err := run(m, args, host, true)
	if err != nil {
		return nil, err
	}
	return p, p.validate()
}

// validate holds a produced receipt to the validation a checked one
// passes.
func (p *produced) validate() error {
	if err := receipt.Validate(p.rec); err != nil {
		return &fault.Error{Code: fault.Internal, Message: "produced " + err.Error()}
	}
	return nil
}

// run executes m and seals the receipt without validating it: Verify
// skips the validation when the receipt is the recorded one, already
// validated, byte for byte; every other caller goes through runChecked.
// Only with keepBytes does it keep the sealed receipt's canonical bytes;
// otherwise the seal hashes the encoding as it streams.
func run(m *manifest.Manifest, args Args, host *Host, keepBytes bool) (*produced, error) {
	p, err := runUnsealed(m, args, host)
	if err != nil {
		return nil, err
	}
	return p, p.seal(keepBytes)
}

// seal writes the receipt's digest into it (see run).
func (p *produced) seal(keepBytes bool) error {
	var d string
	var err error
	if keepBytes {
		d, p.canonical, err = receipt.SealEncoded(p.rec)
	} else {
		d, err = receipt.Seal(p.rec)
	}
	if err != nil {
		return &fault.Error{Code: fault.Internal, Message: "receipt is not canonical JSON: " + err.Error()}
	}
	p.typed.Digest = d
	return nil
}

// runUnsealed executes m and returns its receipt without a digest: a
// verification holding the recorded receipt's canonical bytes checks the
// replay against them instead of sealing it (Verify).
func runUnsealed(m *manifest.Manifest, args Args, host *Host) (*produced, error) {
	if host == nil {
		host = &Host{}
	}
	if host.Store == nil {
		h := *host
		h.Store = store.NewMemStore()
		host = &h
	}
	feed, err := args.feed()
	if err != nil {
		return nil, err
	}
	ctx := host.Context
	if ctx == nil {
		ctx = context.Background()
	}
	r := &runner{host: host, ctx: ctx, root: m, budgets: m.Budgets, cells: map[string]*receipt.Cell{},
		sigs: map[string]*cellSig{}, fetched: map[string]string{}}
	if r.tools, err = toolSignatures(host); err != nil {
		return nil, err
	}
	if err := r.admit(m); err != nil {
		return nil, err
	}
	outcome, err := r.execute(m, feed)
	if err != nil {
		return nil, err
	}
	typed := &receipt.Receipt{
		Contract:       receipt.Contract,
		Runtime:        receipt.Runtime{Name: receipt.RuntimeName, Version: receipt.RuntimeVersion},
		ManifestDigest: m.Digest,
		ManifestKey:    m.Key,
		Args:           args.object(),
		Outcome:        outcome,
		Cells:          r.cells,
		Effects:        r.effects,
		Events:         r.events,
		Work:           receipt.Work{Steps: r.steps, AgentCalls: r.calls, Units: r.units},
		Failure:        r.failure,
	}
	return &produced{typed: typed, rec: typed.Value()}, nil
}

func (r *runner) execute(m *manifest.Manifest, feed map[string]ports) (string, error) {
	r.event("run.start", "", m.Digest, "")
	sc := newScope(r, m, "", 0, feed)
	status := sc.run()
	if r.abort != nil {
		return "", r.abort
	}
	var outcome string
	switch {
	case r.suspended:
		outcome = receipt.Suspended
	case r.failure != nil:
		outcome = receipt.Failed
	case status == receipt.Stuck:
		outcome = receipt.Stuck
	default:
		outcome = receipt.Complete
	}
	r.event("run.end", "", "", outcome)
	if r.abort != nil {
		return "", r.abort
	}
	return outcome, nil
}

// Args are a run's arguments: by input cell id, an object of that cell's
// port values, as a workload, the CLI or a recorded receipt supplies them.
// They are unchecked JSON until feed reads them.
type Args map[string]any

// object is a as a plain JSON object (the receipt's args; never nil).
func (a Args) object() map[string]any {
	if a == nil {
		return map[string]any{}
	}
	return a
}

// cellPorts returns the ports of one cell's args (nil when absent) and
// whether they are an object.
func (a Args) cellPorts(cell string) (ports, bool) {
	v, present := a[cell]
	p, ok := v.(map[string]any)
	return p, ok || !present
}

// feed checks that every cell's args are an object of ports and that the
// whole fits the receipt's args bound, and returns them by cell.
func (a Args) feed() (map[string]ports, error) {
	feed := make(map[string]ports, len(a))
	for _, k := range canon.SortedKeys(a) {
		p, ok := a.cellPorts(k)
		if !ok {
			return nil, &fault.Error{Code: fault.Parse, Message: fmt.Sprintf("args.%s must be an object of ports", k)}
		}
		feed[k] = p
	}
	if n, err := canon.EncodedSize(a.object()); err != nil {
		return nil, &fault.Error{Code: fault.Parse, Message: "args are not canonical JSON"}
	} else if n > receipt.MaxArgsBytes {
		return nil, &fault.Error{Code: fault.BudgetExhausted, Message: "run argument bytes"}
	}
	return feed, nil
}

// cellState is the resolution of one cell inside a scope.
type cellState struct {
	status  string // "" pending, or a receipt cell status
	outputs ports
	failure *Failure
}

func (c *cellState) resolved() bool {
	return c.status == receipt.StatusCommitted || c.status == receipt.StatusSkipped || c.status == receipt.StatusFailed
}

// scope runs one manifest instance under a path prefix.
type scope struct {
	r      *runner
	m      *manifest.Manifest
	prefix string
	depth  int
	feed   map[string]ports
	st     []cellState
	in     [][]*manifest.Edge // incoming edges per cell, manifest order
	out    [][]*manifest.Edge
}

func newScope(r *runner, m *manifest.Manifest, prefix string, depth int, feed map[string]ports) *scope {
	s := &scope{r: r, m: m, prefix: prefix, depth: depth, feed: feed,
		st: make([]cellState, len(m.Cells)), in: make([][]*manifest.Edge, len(m.Cells)), out: make([][]*manifest.Edge, len(m.Cells))}
	for _, e := range m.Edges {
		if i, ok := m.CellIndex(e.To.Cell); ok {
			s.in[i] = append(s.in[i], e)
		}
		if i, ok := m.CellIndex(e.From.Cell); ok {
			s.out[i] = append(s.out[i], e)
		}
	}
	return s
}

func (s *scope) path(id string) string { return s.prefix + id }

// run sweeps the cells in declared order until nothing more can resolve.
// It returns "failed" when an unhandled failure stopped the sweep,
// "suspended" when a cell suspended, "stuck" when a cell never resolved,
// else "complete".
func (s *scope) run() string {
	for {
		progressed := false
		for i := range s.m.Cells {
			if s.r.abort != nil {
				return receipt.Failed
			}
			if s.st[i].status != "" || !s.ready(i) {
				continue
			}
			progressed = true
			if stop := s.step(i); stop {
				return receipt.Failed
			}
			// A suspension halts the sweep: the run waits for the answer
			// and nothing downstream of it (or after it) activates.
			if s.st[i].status == receipt.StatusSuspended {
				return receipt.Suspended
			}
		}
		if !progressed {
			break
		}
	}
	suspended, pending := false, false
	for i := range s.st {
		switch {
		case s.st[i].status == receipt.StatusSuspended:
			suspended = true
		case !s.st[i].resolved():
			pending = true
		}
	}
	switch {
	case suspended:
		return receipt.Suspended
	case pending:
		return receipt.Stuck
	}
	return receipt.Complete
}

func (s *scope) ready(i int) bool {
	for _, e := range s.in[i] {
		j, ok := s.m.CellIndex(e.From.Cell)
		if !ok || !s.st[j].resolved() {
			return false
		}
	}
	return true
}

// delivery is one edge's delivered value.
type delivery struct {
	edge  *manifest.Edge
	value any
	many  bool // the producer port is a list producer (each outputs)
}

// step resolves cell i: guards, skip or activation, commit, failure
// handling and the work check. It reports whether the sweep must stop.
func (s *scope) step(i int) bool {
	r := s.r
	c := s.m.Cells[i]
	p := s.path(c.ID)
	delivered, stop := s.deliveries(i, p)
	if stop {
		return true
	}
	sig, sigErr := s.signature(c)
	if sigErr == nil && skipped(sig.inputs, delivered) {
		s.st[i] = cellState{status: receipt.StatusSkipped}
		r.cells[p] = &receipt.Cell{Status: receipt.StatusSkipped}
		r.event("cell.skip", p, "", "")
		return false
	}
	if r.steps+1 > r.budgets.MaxSteps {
		r.fail(failf(fault.BudgetExhausted, "maxSteps exhausted"), p)
		return true
	}
	r.steps++
	before := r.units
	r.units += 100

	// rec is the cell record the activation fills in (effect digest, tool
	// calls, slot, via, ...); an activation that suspends sets its status.
	rec := &receipt.Cell{}
	outputs, f := s.activateDelivered(c, p, sig, sigErr, delivered, rec)
	if r.abort != nil {
		// A host fault inside the activation: nothing more is recorded.
		return true
	}
	if stop := s.settle(i, p, rec, outputs, f, r.units-before); stop {
		return true
	}
	if rec.Suspended() {
		// The sweep halts on the suspension; no work check.
		return false
	}
	if r.units > r.budgets.MaxWork {
		r.fail(failf(fault.BudgetExhausted, "maxWork exhausted"), p)
		return true
	}
	return false
}

// deliveries collects what cell i's incoming edges deliver, in edge
// order, through their guards. stop is true when a guard failed or ran
// the work out (the run failure is recorded then).
func (s *scope) deliveries(i int, p string) (delivered []delivery, stop bool) {
	for _, e := range s.in[i] {
		j, _ := s.m.CellIndex(e.From.Cell)
		v, ok := s.st[j].delivers(e)
		if !ok {
			continue
		}
		if e.Guard != nil {
			pass, stop := s.guardPasses(e.Guard, v, p)
			if stop {
				return nil, true
			}
			if !pass {
				continue
			}
		}
		delivered = append(delivered, delivery{edge: e, value: v, many: s.producesMany(j, e.From.Port)})
	}
	return delivered, false
}

// delivers is the value a resolved source cell sends along e: its
// failure on an on:"fail" edge, else its committed port value.
func (c *cellState) delivers(e *manifest.Edge) (any, bool) {
	switch {
	case e.OnFail && c.status == receipt.StatusFailed:
		return c.failure.record().Value(), true
	case !e.OnFail && c.status == receipt.StatusCommitted:
		v, ok := c.outputs[e.From.Port]
		return v, ok
	}
	return nil, false
}

// guardPasses evaluates guard g on v for the cell at path p; stop is true
// when the guard failed or its fuel ran the work out.
func (s *scope) guardPasses(g *manifest.Guard, v any, p string) (pass, stop bool) {
	ok, f := s.guard(g, v)
	if f != nil {
		s.r.fail(f, p)
		return false, true
	}
	if s.r.units > s.r.budgets.MaxWork {
		s.r.fail(failf(fault.BudgetExhausted, "maxWork exhausted"), p)
		return false, true
	}
	return ok, false
}

// activateDelivered builds the cell's inputs from its deliveries, checks
// them, runs the activation and checks its outputs. A signature or input
// failure fails the cell without activating it.
func (s *scope) activateDelivered(c *manifest.Cell, p string, sig *cellSig, sigErr *Failure, delivered []delivery, rec *receipt.Cell) (ports, *Failure) {
	if sigErr != nil {
		return nil, sigErr
	}
	inputs, f := collect(sig.inputs, delivered)
	if f != nil {
		return nil, f
	}
	if f := checkPorts(sig.inputs, inputs, "input"); f != nil {
		return nil, f
	}
	outputs, f := s.activate(c, p, sig, inputs, rec)
	if f == nil && !rec.Suspended() {
		f = checkOutputs(c.ID, sig, outputs)
	}
	return outputs, f
}

// settle records how cell i at path p resolved: suspended, failed or
// committed. It reports whether the sweep must stop: a failure no
// on:"fail" edge handles.
func (s *scope) settle(i int, p string, rec *receipt.Cell, outputs ports, f *Failure, work int) bool {
	r := s.r
	switch {
	case rec.Suspended():
		r.suspended = true
		s.st[i] = cellState{status: receipt.StatusSuspended}
		r.cells[p] = &receipt.Cell{Status: receipt.StatusSuspended, Work: work, Slot: rec.Slot}
		r.event("cell.suspend", p, "", "")
	case f != nil:
		// The activation error is recorded uncut (the native runtime does
		// not shorten it; only effect error messages are bounded, by the
		// executor record).
		s.st[i] = cellState{status: receipt.StatusFailed, failure: f}
		r.cells[p] = &receipt.Cell{Status: receipt.StatusFailed, Work: work,
			Failure: &receipt.Failure{Code: f.Code, Message: f.Message}, Slot: rec.Slot}
		r.event("cell.fail", p, "", "")
		if !s.handlesFailure(i) {
			r.fail(f, p)
			return true
		}
		r.failure = nil
	default:
		s.st[i] = cellState{status: receipt.StatusCommitted, outputs: outputs}
		rec.Status = receipt.StatusCommitted
		rec.Work = work
		if len(outputs) > 0 {
			rec.Outputs = outputs
		}
		r.cells[p] = rec
		r.event("cell.commit", p, "", "")
	}
	return false
}

// handlesFailure reports whether an on:"fail" edge leaves cell i.
func (s *scope) handlesFailure(i int) bool {
	for _, e := range s.out[i] {
		if e.OnFail {
			return true
		}
	}
	return false
}

// guard evaluates an edge guard on a delivered value; expression fuel is
// charged to the ledger whatever the result.
func (s *scope) guard(g *manifest.Guard, v any) (bool, *Failure) {
	switch g.Kind {
	case manifest.GuardLabel:
		return v == g.Equals, nil
	case manifest.GuardField:
		m, ok := v.(map[string]any)
		if !ok {
			return false, nil
		}
		fv, ok := m[g.Field]
		return ok && fv == g.Equals, nil
	}
	out, burn, err := g.Expr.Compiled.Eval(map[string]any{"value": v}, MaxExprFuel)
	s.r.units += burn
	if err != nil {
		return false, failf(fault.GuardInvalid, "guard expr %s", expr.Canonical(err))
	}
	b, ok := out.(bool)
	if !ok {
		return false, failf(fault.GuardInvalid, "guard expr must produce boolean, got %s", kindName(out))
	}
	return b, nil
}

// guardKinds names JSON types as upstream's guard failures do.
var guardKinds = canon.Names{"null", "bool", "number", "string", "list", "object", "object"}

func kindName(v any) string { return guardKinds.Of(v) }

// collect builds the cell's inputs from its deliveries: a scalar port takes
// its single delivery, a many port collects every delivery in edge order
// (flattening list producers), and an optional many port with nothing
// delivered arrives as [].
func collect(declared []manifest.Port, ds []delivery) (ports, *Failure) {
	in := ports{}
	for _, p := range declared {
		var got []delivery
		for _, d := range ds {
			if d.edge.To.Port == p.Name {
				got = append(got, d)
			}
		}
		if p.Many {
			list := []any{}
			for _, d := range got {
				if l, ok := d.value.([]any); ok && d.many {
					list = append(list, l...)
				} else {
					list = append(list, d.value)
				}
			}
			if len(got) > 0 || p.Optional {
				if len(list) > MaxManyItems {
					return in, failf(fault.BudgetExhausted, "port value bytes")
				}
				in[p.Name] = list
			}
			continue
		}
		if len(got) > 0 {
			in[p.Name] = got[0].value
		}
	}
	return in, nil
}

// skipped applies the skip rule: a cell with declared inputs skips when
// nothing was delivered to any of them or a required input got nothing.
func skipped(declared []manifest.Port, ds []delivery) bool {
	if len(declared) == 0 {
		return false
	}
	any := false
	for _, p := range declared {
		got := false
		for _, d := range ds {
			if d.edge.To.Port == p.Name {
				got = true
				break
			}
		}
		if got {
			any = true
		} else if !p.Optional {
			return true
		}
	}
	return !any
}

func boundMessage(s string) string {
	if len(s) <= receipt.MaxMessage {
		return s
	}
	b := []byte(s[:receipt.MaxMessage])
	for len(b) > 0 && b[len(b)-1]&0xC0 == 0x80 {
		b = b[:len(b)-1]
	}
	if len(b) > 0 && b[len(b)-1] >= 0xC0 {
		b = b[:len(b)-1]
	}
	return string(b)
}
