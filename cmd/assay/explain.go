package main

import (
	"github.com/algal-assay/assay/engine/manifest"
	"github.com/spf13/cobra"
)

func newExplainCmd(c *cli) *cobra.Command {
	var f checkFlags
	cmd := &cobra.Command{
		Use:   "explain MANIFEST",
		Short: "Print a program's compiled signature: every cell's resolved ports and every edge",
		Long: "Admit MANIFEST and print {\"manifestDigest\",\"cells\":[{id,kind,inputs,outputs}],\"edges\"}: each\n" +
			"cell's resolved input and output ports (including those inherited from embedded organisms,\n" +
			"repeat and each cells) and the manifest's edges with their guards. Flags as for check.",
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			m, compiled, err := c.admitManifest(args[0], f)
			if err != nil {
				return err
			}
			cells := make([]any, len(m.Cells))
			for i, cell := range m.Cells {
				sig := compiled.Signatures[i]
				cells[i] = map[string]any{"id": cell.ID, "kind": string(cell.Kind), "inputs": portMap(sig.Inputs), "outputs": portMap(sig.Outputs)}
			}
			edges, _ := m.Value["edges"].([]any)
			if edges == nil {
				edges = []any{}
			}
			return c.emit(map[string]any{"manifestDigest": m.Digest, "cells": cells, "edges": edges}, "")
		},
	}
	f.add(cmd.Flags())
	return cmd
}

// portMap renders resolved ports as normalized port declarations:
// name -> {"type", and "optional", "many", "labels", "schema",
// "schemaVersion", "capability" when set}.
func portMap(ports []manifest.Port) map[string]any {
	out := make(map[string]any, len(ports))
	for _, p := range ports {
		v := map[string]any{"type": p.Type}
		if p.Optional {
			v["optional"] = true
		}
		if p.Many {
			v["many"] = true
		}
		if p.Labels != nil {
			labels := make([]any, len(p.Labels))
			for i, l := range p.Labels {
				labels[i] = l
			}
			v["labels"] = labels
		}
		if p.Schema != nil {
			v["schema"] = p.Schema
			if p.SchemaVersion > 1 {
				v["schemaVersion"] = float64(p.SchemaVersion)
			}
		}
		if p.Capability != "" {
			v["capability"] = p.Capability
		}
		out[p.Name] = v
	}
	return out
}
