package receipt

import (
	"github.com/algal-assay/assay/engine/effect"
)

// Receipt is an algal.run.v1 receipt as Go values: what the run engine
// writes and what verification, replay and the reports read, with the
// compiler naming every field. Decode builds one from a receipt value that
// passed Validate; Value turns it back into the canonical value, and the
// round trip is exact (TestModelRoundTrip* holds it to byte identity over
// every corpus): every key a valid receipt may carry has a field, and a
// field whose zero value is a valid recorded value says separately whether
// it is present (a pointer, a Has flag or a non-nil slice).
//
// The digest, the store key and the tamper diff are still computed on the
// canonical value (Value, or the value a receipt was read as), never on
// these structs, so a receipt's bytes are its identity.
type Receipt struct {
	Contract       string
	Runtime        Runtime
	ManifestDigest string
	ManifestKey    string
	// Args maps a cell id to an object of ports.
	Args    map[string]any
	Outcome string
	Cells   map[string]*Cell // by cell path
	// Effects are the effect records in issue order.
	Effects []effect.Record
	Events  []Event
	Work    Work
	Failure *RunFailure // nil: absent (only a failed run records one)
	Digest  string      // "" before sealing
}

// Runtime is the runtime stamp.
type Runtime struct{ Name, Version string }

// Work is a work ledger.
type Work struct{ Steps, AgentCalls, Units int }

// Failure is a cell failure record.
type Failure struct{ Code, Message string }

// Value is the failure record's canonical form (also what an on:"fail"
// edge delivers).
func (f Failure) Value() map[string]any {
	return map[string]any{"code": f.Code, "message": f.Message}
}

// RunFailure is the run's first unhandled failure and the cell path that
// raised it.
type RunFailure struct{ Code, Message, Path string }

// Cell is one cell record. Status decides which fields may be set (see
// Validate).
type Cell struct {
	Status string
	Work   int
	// Outputs is nil when absent; a recorded one is never empty.
	Outputs      map[string]any
	Failure      *Failure
	EffectDigest string     // "": absent
	ToolCalls    []ToolCall // nil: absent; a recorded list is never empty
	// ShadowOut is the live value of a shadowed cell that differed from
	// its shadow; it may be JSON null, so HasShadowOut says it is there.
	ShadowOut    any
	HasShadowOut bool
	Rounds       int     // 0: absent (recorded only when >= 2)
	Items        int     // 0: absent (recorded only when >= 1)
	Via          *string // the transport that served an organism's closure
	Slot         *Slot
}

// Suspended reports whether the record is of a suspended cell.
func (c *Cell) Suspended() bool { return c.Status == StatusSuspended }

// ToolCall is one tool call of an agent cell's loop.
type ToolCall struct {
	Fn     string
	Inputs map[string]any
	Output any
}

// Slot names the slot a slot cell read or wrote.
type Slot struct{ Name, Mode string }

// Event is one event log entry. Path and Outcome may be recorded empty,
// so absence is nil; Digest is a digest token or absent ("").
type Event struct {
	Seq     int
	Kind    string
	Path    *string
	Digest  string
	Outcome *string
}

// Decode validates v and returns it as a Receipt.
func Decode(v any) (*Receipt, error) {
	if err := Validate(v); err != nil {
		return nil, err
	}
	return FromValue(v.(map[string]any))
}

// FromValue converts a receipt value that has passed Validate. Its only
// error is an effect record the effect contract rejects (effect.ParseRecord
// is stricter than the receipt's structural check, e.g. on an empty
// executor); the receipt is still returned then, with no Effects, so a
// caller can check its identity first. Maps and lists inside values (args,
// outputs, tool inputs) are shared with r, not copied.
func FromValue(r map[string]any) (*Receipt, error) {
	out := &Receipt{
		Contract:       r["contract"].(string),
		ManifestDigest: r["manifestDigest"].(string),
		ManifestKey:    r["manifestKey"].(string),
		Args:           r["args"].(map[string]any),
		Outcome:        r["outcome"].(string),
	}
	out.Digest, _ = r["digest"].(string)
	rt := r["runtime"].(map[string]any)
	out.Runtime = Runtime{Name: rt["name"].(string), Version: rt["version"].(string)}
	cells := r["cells"].(map[string]any)
	out.Cells = make(map[string]*Cell, len(cells))
	for p, v := range cells {
		out.Cells[p] = cellFrom(v.(map[string]any))
	}
	effects, effectsErr := effect.ParseRecords(r["effects"].([]any))
	out.Effects = effects
	events := r["events"].([]any)
	out.Events = make([]Event, len(events))
	for i, v := range events {
		e := v.(map[string]any)
		ev := Event{Seq: intOf(e["seq"]), Kind: e["kind"].(string)}
		ev.Path = optText(e, "path")
		ev.Outcome = optText(e, "outcome")
		ev.Digest, _ = e["digest"].(string)
		out.Events[i] = ev
	}
	w := r["work"].(map[string]any)
	out.Work = Work{Steps: intOf(w["steps"]), AgentCalls: intOf(w["agentCalls"]), Units: intOf(w["units"])}
	if f, ok := r["failure"].(map[string]any); ok {
		out.Failure = &RunFailure{Code: f["code"].(string), Message: f["message"].(string), Path: f["path"].(string)}
	}
	return out, effectsErr
}

func cellFrom(m map[string]any) *Cell {
	c := &Cell{Status: m["status"].(string), Work: intOf(m["work"])}
	c.Outputs, _ = m["outputs"].(map[string]any)
	if f, ok := m["failure"].(map[string]any); ok {
		c.Failure = &Failure{Code: f["code"].(string), Message: f["message"].(string)}
	}
	c.EffectDigest, _ = m["effectDigest"].(string)
	if l, ok := m["toolCalls"].([]any); ok {
		c.ToolCalls = make([]ToolCall, len(l))
		for i, e := range l {
			tc := e.(map[string]any)
			c.ToolCalls[i] = ToolCall{Fn: tc["fn"].(string), Inputs: tc["inputs"].(map[string]any), Output: tc["output"]}
		}
	}
	c.ShadowOut, c.HasShadowOut = m["shadowOut"]
	c.Rounds = intOf(m["rounds"])
	c.Items = intOf(m["items"])
	c.Via = optText(m, "via")
	if s, ok := m["slot"].(map[string]any); ok {
		c.Slot = &Slot{Name: s["name"].(string), Mode: s["mode"].(string)}
	}
	return c
}

// Value returns the receipt as its canonical value (fresh maps and lists;
// values inside args, outputs and effect outputs are shared).
func (r *Receipt) Value() map[string]any {
	cells := make(map[string]any, len(r.Cells))
	for p, c := range r.Cells {
		cells[p] = c.Value()
	}
	effects := make([]any, len(r.Effects))
	for i, e := range r.Effects {
		effects[i] = e.Value()
	}
	events := make([]any, len(r.Events))
	for i, e := range r.Events {
		events[i] = e.Value()
	}
	v := map[string]any{
		"contract":       r.Contract,
		"runtime":        map[string]any{"name": r.Runtime.Name, "version": r.Runtime.Version},
		"manifestDigest": r.ManifestDigest,
		"manifestKey":    r.ManifestKey,
		"args":           r.Args,
		"outcome":        r.Outcome,
		"cells":          cells,
		"effects":        effects,
		"events":         events,
		"work":           r.Work.Value(),
	}
	if r.Failure != nil {
		v["failure"] = map[string]any{"code": r.Failure.Code, "message": r.Failure.Message, "path": r.Failure.Path}
	}
	if r.Digest != "" {
		v["digest"] = r.Digest
	}
	return v
}

// Value is the ledger's canonical form.
func (w Work) Value() map[string]any {
	return map[string]any{"steps": float64(w.Steps), "agentCalls": float64(w.AgentCalls), "units": float64(w.Units)}
}

// Value is the cell record's canonical form.
func (c *Cell) Value() map[string]any {
	v := make(map[string]any, 4)
	v["status"] = c.Status
	v["work"] = float64(c.Work)
	if c.Outputs != nil {
		v["outputs"] = c.Outputs
	}
	if c.Failure != nil {
		v["failure"] = c.Failure.Value()
	}
	if c.EffectDigest != "" {
		v["effectDigest"] = c.EffectDigest
	}
	if c.ToolCalls != nil {
		l := make([]any, len(c.ToolCalls))
		for i, tc := range c.ToolCalls {
			l[i] = map[string]any{"fn": tc.Fn, "inputs": tc.Inputs, "output": tc.Output}
		}
		v["toolCalls"] = l
	}
	if c.HasShadowOut {
		v["shadowOut"] = c.ShadowOut
	}
	if c.Rounds != 0 {
		v["rounds"] = float64(c.Rounds)
	}
	if c.Items != 0 {
		v["items"] = float64(c.Items)
	}
	if c.Via != nil {
		v["via"] = *c.Via
	}
	if c.Slot != nil {
		v["slot"] = map[string]any{"name": c.Slot.Name, "mode": c.Slot.Mode}
	}
	return v
}

// Value is the event's canonical form.
func (e Event) Value() map[string]any {
	v := map[string]any{"seq": float64(e.Seq), "kind": e.Kind}
	if e.Path != nil {
		v["path"] = *e.Path
	}
	if e.Digest != "" {
		v["digest"] = e.Digest
	}
	if e.Outcome != nil {
		v["outcome"] = *e.Outcome
	}
	return v
}

// CommittedOutput returns the committed value of a cell's output port.
func (r *Receipt) CommittedOutput(path, port string) (any, bool) {
	c := r.Cells[path]
	if c == nil || c.Status != StatusCommitted {
		return nil, false
	}
	v, ok := c.Outputs[port]
	return v, ok
}

func optText(m map[string]any, key string) *string {
	if s, ok := m[key].(string); ok {
		return &s
	}
	return nil
}

// intOf reads a validated non-negative safe integer (0 when absent).
func intOf(v any) int {
	f, _ := v.(float64)
	return int(f)
}
