package vm

import (
	"strings"
	"unicode/utf8"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/manifest"
)

// localContextTool is the reserved read-only tool an agent may declare to
// read back the exact original text of its own context after elision.
const localContextTool = "agent.context.local.v1"

// Bounds of the local context reader.
const (
	localReadBytes     = 4096
	localSearchMatches = 16
	localMaxQueryBytes = 4096
	localToolCost      = 100
	localMaxOutput     = 65_536
)

// captureContext snapshots, before a model turn, the original instruction,
// the filtered input map, each selected ancestor slice and every original
// tool result, and charges their text bytes to the ledger. The snapshot is
// rebuilt identically on replay from the same inputs and recorded effects.
//
// The entry labels and the query/result shapes below are this engine's
// reading of spec/v1/agent-context.md; upstream's exact shapes are
// unconfirmed.
func (s *scope) captureContext(c *manifest.Cell, in map[string]any, calls []any) []map[string]any {
	a := c.Agent
	var entries []map[string]any
	add := func(kind, label string, v any) {
		text, ok := v.(string)
		if !ok {
			b, _ := canon.Encode(v)
			text = string(b)
		}
		s.r.units += len(text)
		entries = append(entries, map[string]any{"kind": kind, "label": label, "text": text})
	}
	add("instruction", "prompt", a.Prompt)
	add("input", "inputs", viewInputs(a.View, in))
	for _, vc := range a.View.Cells {
		j, ok := s.m.CellIndex(vc.Cell)
		if !ok {
			continue
		}
		sliced := map[string]any{}
		for k, x := range s.st[j].outputs {
			if vc.Ports == nil || contains(vc.Ports, k) {
				sliced[k] = x
			}
		}
		add("input", "cell:"+vc.Cell, sliced)
	}
	for _, e := range calls {
		m := e.(map[string]any)
		add("observation", "tool:"+m["fn"].(string), m["output"])
	}
	return entries
}

// readContext answers one local context query: {"op":"read","index"} or
// {"op":"search","literal"}.
func (s *scope) readContext(snap []map[string]any, inputs map[string]any) (any, *Failure) {
	s.r.units += localToolCost
	q, ok := inputs["query"].(map[string]any)
	if !ok {
		return nil, failf(fault.ToolFailed, "agent.context.local.v1 query must be an object")
	}
	var result any
	switch q["op"] {
	case "read":
		f, ok := q["index"].(float64)
		i := int(f)
		if !ok || float64(i) != f || i < 0 || i >= len(snap) {
			return nil, failf(fault.ToolFailed, "agent.context.local.v1 index out of range")
		}
		e := snap[i]
		text := e["text"].(string)
		complete := true
		if len(text) > localReadBytes {
			cut := localReadBytes
			for cut > 0 && !utf8.RuneStart(text[cut]) {
				cut--
			}
			text, complete = text[:cut], false
		}
		result = map[string]any{"index": f, "kind": e["kind"], "label": e["label"], "text": text, "complete": complete}
	case "search":
		lit, ok := q["literal"].(string)
		if !ok || lit == "" || len(lit) > localMaxQueryBytes {
			return nil, failf(fault.ToolFailed, "agent.context.local.v1 search needs a literal of 1..4096 bytes")
		}
		matches := []any{}
		complete := true
		for i, e := range snap {
			text := e["text"].(string)
			for off := 0; ; {
				k := strings.Index(text[off:], lit)
				if k < 0 {
					break
				}
				if len(matches) == localSearchMatches {
					complete = false
					break
				}
				start := off + k
				matches = append(matches, map[string]any{"index": float64(i), "start": float64(start), "end": float64(start + len(lit))})
				off = start + len(lit)
			}
		}
		result = map[string]any{"matches": matches, "complete": complete}
	default:
		return nil, failf(fault.ToolFailed, "agent.context.local.v1 supports op read and search")
	}
	out := map[string]any{"result": result}
	b, _ := canon.Encode(out)
	if len(b) > localMaxOutput {
		return nil, failf(fault.BudgetExhausted, "tool output bytes")
	}
	return out, nil
}
