package live

import (
	"fmt"

	"github.com/algal-assay/assay/engine/manifest"
)

// Tool is one function an agent cell may call: the name the manifest's
// tools list gives it and the JSON Schema of its inputs.
type Tool struct {
	Name       string
	Parameters map[string]any // nil: any object
}

// WireTool is a tool as a provider's API names it.
type WireTool struct {
	Name        string
	Description string
	Parameters  map[string]any
}

// WireTools names tools for the wire, in the order given (names allow
// only [A-Za-z0-9_-], at most 64 characters), and maps the wire names back
// to tool names. Two tools with one wire name are refused.
func WireTools(tools []Tool) ([]WireTool, map[string]string, error) {
	names := map[string]string{}
	var wire []WireTool
	for _, t := range tools {
		name := WireName(t.Name)
		if prev, dup := names[name]; dup {
			return nil, nil, fmt.Errorf("tools %q and %q have the same function name %q on the wire", prev, t.Name, name)
		}
		names[name] = t.Name
		params := t.Parameters
		if params == nil {
			params = map[string]any{"type": "object"}
		}
		wire = append(wire, WireTool{Name: name, Description: "Call the cell tool " + t.Name + ".", Parameters: params})
	}
	return wire, names, nil
}

// WireName maps a tool name onto the alphabet [A-Za-z0-9_-], at most 64
// characters.
func WireName(s string) string {
	out := []byte(s)
	for i, c := range out {
		if !(c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z') {
			out[i] = '_'
		}
	}
	if len(out) > 64 {
		out = out[:64]
	}
	return string(out)
}

// ToolsOf returns the tool catalog of m's agent and classifier cells: for
// each cell the tools its manifest lists, in order, with a parameters
// schema built from the tool's signature when sigs (host tools) or the
// builtin registry knows it, else any object. Cells of embedded organisms
// are not in m, so their requests render without tools.
func ToolsOf(m *manifest.Manifest, sigs map[string]manifest.Signature) func(cellID string) []Tool {
	byCell := map[string][]Tool{}
	for _, c := range m.Cells {
		if c.Agent == nil || len(c.Agent.Tools) == 0 {
			continue
		}
		for _, name := range c.Agent.Tools {
			t := Tool{Name: name}
			sig, ok := sigs[name]
			if !ok {
				sig, ok = manifest.Builtin(name)
			}
			if ok {
				t.Parameters = parameters(sig)
			}
			byCell[c.ID] = append(byCell[c.ID], t)
		}
	}
	return func(cell string) []Tool { return byCell[cell] }
}

// parameters is the JSON Schema of a signature's inputs.
func parameters(sig manifest.Signature) map[string]any {
	props := map[string]any{}
	var required []any
	for _, p := range sig.Inputs {
		props[p.Name] = portSchema(p)
		if !p.Optional {
			required = append(required, p.Name)
		}
	}
	out := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		out["required"] = required
	}
	return out
}

func portSchema(p manifest.Port) map[string]any {
	var s map[string]any
	switch p.Type {
	case manifest.TypeText:
		s = map[string]any{"type": "string"}
	case manifest.TypeChoice:
		s = map[string]any{"type": "string"}
		if p.Labels != nil {
			labels := make([]any, len(p.Labels))
			for i, l := range p.Labels {
				labels[i] = l
			}
			s["enum"] = labels
		}
	default:
		if schema, ok := p.Schema.(map[string]any); ok {
			s = schema
		} else {
			s = map[string]any{}
		}
	}
	if p.Many {
		return map[string]any{"type": "array", "items": s}
	}
	return s
}
