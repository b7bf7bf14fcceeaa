package manifest

import (
	"strings"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
)

// ToolDefinition describes an admitted organism's interface inputs as a
// function-tool definition a model API accepts (`assay tool-def`): a
// JSON-schema object whose properties are the interface inputs (text and
// ref ports are strings, choice ports enumerate their labels, json ports
// carry their schema, many ports are arrays), every input that is not
// optional required. The tool is named by the manifest key without
// "organism:" and described by its note (else its name). format is
// "openai" (a {"type":"function","function"} object) or "anthropic" (a
// {"name","description","input_schema"} object).
func ToolDefinition(m *Manifest, compiled *Compiled, format string) (map[string]any, error) {
	if err := CheckToolFormat(format); err != nil {
		return nil, err
	}
	if m.Interface == nil {
		return nil, fault.New(fault.InterfaceMismatch, "%s declares no interface", m.Key)
	}
	props := map[string]any{}
	required := []any{}
	for _, in := range m.Interface.Inputs {
		p, ok := interfacePort(m, compiled, in)
		if !ok {
			return nil, fault.New(fault.InterfaceMismatch, "interface input %q names %s.%s, which is not an output port", in.Name, in.Cell, in.Port)
		}
		props[in.Name] = portSchema(p)
		if !p.Optional {
			required = append(required, in.Name)
		}
	}
	schema := map[string]any{"type": "object", "additionalProperties": false, "properties": props, "required": required}
	name := strings.TrimPrefix(m.Key, "organism:")
	desc := m.Name
	if m.HasNote {
		desc = m.Note
	}
	if format == "anthropic" {
		return map[string]any{"name": name, "description": desc, "input_schema": schema}, nil
	}
	return map[string]any{"type": "function", "function": map[string]any{"name": name, "description": desc, "parameters": schema}}, nil
}

// CheckToolFormat refuses a tool-definition format other than "openai"
// and "anthropic" (PARSE_FAILED).
func CheckToolFormat(format string) error {
	if format != "openai" && format != "anthropic" {
		return fault.New(fault.Parse, "tool format must be openai or anthropic")
	}
	return nil
}

// interfacePort is the output port an interface input names.
func interfacePort(m *Manifest, compiled *Compiled, in InterfacePort) (Port, bool) {
	for i, cell := range m.Cells {
		if cell.ID != in.Cell {
			continue
		}
		for _, p := range compiled.Signatures[i].Outputs {
			if p.Name == in.Port {
				return p, true
			}
		}
	}
	return Port{}, false
}

// portSchema is the JSON schema a tool caller must satisfy for a port.
func portSchema(p Port) any {
	var s any
	switch p.Type {
	case "text", "ref":
		s = map[string]any{"type": "string"}
	case "choice":
		s = map[string]any{"type": "string", "enum": canon.Strings(p.Labels)}
	default:
		if p.Schema != nil {
			s = p.Schema
		} else {
			s = map[string]any{}
		}
	}
	if p.Many {
		s = map[string]any{"type": "array", "items": s}
	}
	return s
}
