package main

import (
	"strings"

	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/manifest"
	"github.com/spf13/cobra"
)

func newToolDefCmd(c *cli) *cobra.Command {
	var f checkFlags
	var format string
	cmd := &cobra.Command{
		Use:   "tool-def MANIFEST",
		Short: "Print a function-tool definition (OpenAI or Anthropic) for an organism's interface",
		Long: "Admit MANIFEST and describe its declared interface inputs as a JSON-schema object: text and\n" +
			"ref ports are strings, choice ports enumerate their labels, json ports carry their schema,\n" +
			"many ports are arrays; every input that is not optional is required. The tool is named by the\n" +
			"manifest key without \"organism:\" and described by its note (else its name). --format openai\n" +
			"(default) or anthropic.",
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if format != "openai" && format != "anthropic" {
				return fault.New(fault.Parse, "tool format must be openai or anthropic")
			}
			m, compiled, err := c.admitManifest(args[0], f)
			if err != nil {
				return err
			}
			if m.Interface == nil {
				return fault.New(fault.InterfaceMismatch, "%s declares no interface", m.Key)
			}
			props := map[string]any{}
			required := []any{}
			for _, in := range m.Interface.Inputs {
				p, ok := interfacePort(m, compiled, in)
				if !ok {
					return fault.New(fault.InterfaceMismatch, "interface input %q names %s.%s, which is not an output port", in.Name, in.Cell, in.Port)
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
				return c.emit(map[string]any{"name": name, "description": desc, "input_schema": schema}, "")
			}
			return c.emit(map[string]any{"type": "function", "function": map[string]any{"name": name, "description": desc, "parameters": schema}}, "")
		},
	}
	f.addStore(cmd.Flags())
	cmd.Flags().StringVar(&format, "format", "openai", "openai or anthropic")
	return cmd
}

// interfacePort is the output port an interface input names.
func interfacePort(m *manifest.Manifest, compiled *manifest.Compiled, in manifest.InterfacePort) (manifest.Port, bool) {
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
	return manifest.Port{}, false
}

// portSchema is the JSON schema a tool caller must satisfy for a port.
func portSchema(p manifest.Port) any {
	var s any
	switch p.Type {
	case "text", "ref":
		s = map[string]any{"type": "string"}
	case "choice":
		labels := make([]any, len(p.Labels))
		for i, l := range p.Labels {
			labels[i] = l
		}
		s = map[string]any{"type": "string", "enum": labels}
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
