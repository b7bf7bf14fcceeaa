package manifest

import "github.com/algal-assay/assay/engine/canon"

// Explain is an admitted program's compiled signature as `assay explain`
// prints it: {"manifestDigest","cells":[{id,kind,inputs,outputs}],"edges"},
// each cell's resolved input and output ports (those inherited from
// embedded organisms, repeat and each cells included) and the manifest's
// edges with their guards.
func Explain(m *Manifest, compiled *Compiled) map[string]any {
	cells := make([]any, len(m.Cells))
	for i, cell := range m.Cells {
		sig := compiled.Signatures[i]
		cells[i] = map[string]any{"id": cell.ID, "kind": string(cell.Kind), "inputs": PortDeclarations(sig.Inputs), "outputs": PortDeclarations(sig.Outputs)}
	}
	edges, _ := m.Value["edges"].([]any)
	if edges == nil {
		edges = []any{}
	}
	return map[string]any{"manifestDigest": m.Digest, "cells": cells, "edges": edges}
}

// PortDeclarations renders resolved ports as normalized port declarations:
// name -> {"type", and "optional", "many", "labels", "schema",
// "schemaVersion", "capability" when set}.
func PortDeclarations(ports []Port) map[string]any {
	out := make(map[string]any, len(ports))
	for _, p := range ports {
		out[p.Name] = p.declaration()
	}
	return out
}

// declaration is one resolved port as a normalized port declaration.
func (p Port) declaration() map[string]any {
	v := map[string]any{"type": p.Type}
	if p.Optional {
		v["optional"] = true
	}
	if p.Many {
		v["many"] = true
	}
	if p.Labels != nil {
		v["labels"] = canon.Strings(p.Labels)
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
	return v
}
