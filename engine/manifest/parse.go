package manifest

import (
	"fmt"
	"strings"

	"github.com/algal-assay/assay/engine/canon"
)

// ReadFile admits a manifest file: a regular file (a symlink to one is
// fine) of at most MaxManifestBytes, strict JSON, then Parse rules.
// A rejection names the file and the line and column of the field at
// fault, with a did-you-mean where one is likely.
func ReadFile(path string) (*Manifest, error) {
	data, err := canon.ReadBounded(path, MaxManifestBytes)
	if err != nil {
		return nil, err
	}
	v, err := canon.Parse(data, MaxManifestBytes)
	if err != nil {
		return nil, canon.InFile(path, data, err)
	}
	m, err := ParseValue(v)
	if err != nil {
		return nil, locate(path, data, err)
	}
	return m, nil
}

// Parse admits manifest JSON bytes (at most MaxManifestBytes).
func Parse(data []byte) (*Manifest, error) {
	v, err := canon.Parse(data, MaxManifestBytes)
	if err != nil {
		return nil, err
	}
	return ParseValue(v)
}

// ParseValue checks and normalizes a decoded manifest value. The value must
// not be modified afterwards: the normalized form shares unchanged parts.
func ParseValue(v any) (*Manifest, error) {
	raw, ok := v.(map[string]any)
	if !ok {
		return nil, invalid("", "manifest must be an object, got %s", describe(v))
	}
	size, err := canonicalSize(raw)
	if err != nil {
		return nil, err
	}
	if size > MaxManifestBytes {
		return nil, limit("", "manifest is %d canonical bytes, over the %d-byte bound", size, MaxManifestBytes)
	}
	if err := onlyKeys(raw, "", "contract", "key", "name", "note", "budgets", "interface", "cells", "edges"); err != nil {
		return nil, err
	}
	if raw["contract"] != Contract {
		return nil, invalid("contract", "expected %q", Contract)
	}
	m := &Manifest{}
	key, err := asText(raw["key"], "key", 64)
	if err != nil {
		return nil, err
	}
	suffix, ok := strings.CutPrefix(key, "organism:")
	if !ok || !canon.IsID(suffix) {
		return nil, invalid("key", "%q is not organism:<kebab-id>", key)
	}
	m.Key = key
	if m.Name, err = asText(raw["name"], "name", MaxNameLen); err != nil {
		return nil, err
	}
	if n, ok := raw["note"]; ok {
		if m.Note, err = asText(n, "note", MaxNoteLen); err != nil {
			return nil, err
		}
		m.HasNote = true
	}
	if bv, ok := raw["budgets"]; ok {
		// A present null is not an absent field: both runtimes reject it.
		if m.Budgets, err = parseBudgets(bv); err != nil {
			return nil, err
		}
	} else {
		m.Budgets = DefaultBudgets()
	}

	cellsRaw, err := asList(raw["cells"], "cells", MaxCells)
	if err != nil {
		return nil, err
	}
	m.byID = make(map[string]int, len(cellsRaw))
	cellValues := make([]any, len(cellsRaw))
	for i, c := range cellsRaw {
		cell, err := parseCell(c, i)
		if err != nil {
			return nil, err
		}
		if _, dup := m.byID[cell.ID]; dup {
			return nil, invalid(fmt.Sprintf("cells[%d]", i), "duplicate cell id %q", cell.ID)
		}
		m.byID[cell.ID] = i
		m.Cells = append(m.Cells, cell)
		cellValues[i] = cell.Value
	}

	edgesRaw := []any{}
	if e, ok := raw["edges"]; ok {
		if edgesRaw, err = asList(e, "edges", MaxEdges); err != nil {
			return nil, err
		}
	}
	for i, e := range edgesRaw {
		edge, err := parseEdge(e, i)
		if err != nil {
			return nil, err
		}
		m.Edges = append(m.Edges, edge)
	}

	norm := copyObject(raw)
	norm["budgets"] = map[string]any{
		"maxSteps": float64(m.Budgets.MaxSteps), "maxAgentCalls": float64(m.Budgets.MaxAgentCalls),
		"maxWork": float64(m.Budgets.MaxWork), "maxContextBytes": float64(m.Budgets.MaxContextBytes),
		"maxOutputBytes": float64(m.Budgets.MaxOutputBytes), "maxDepth": float64(m.Budgets.MaxDepth),
	}
	norm["cells"] = cellValues
	norm["edges"] = edgesRaw
	if iv, ok := raw["interface"]; ok {
		iface, value, err := parseInterface(iv)
		if err != nil {
			return nil, err
		}
		m.Interface = iface
		norm["interface"] = value
	}
	m.Value = norm
	// The raw size is a close hint for the normalized size; one allocation.
	if m.Canonical, err = canon.AppendEncode(make([]byte, 0, size+size/16+1024), norm); err != nil {
		return nil, invalid("", "%v", err)
	}
	if len(m.Canonical) > MaxManifestBytes {
		return nil, limit("", "normalized manifest is %d canonical bytes, over the %d-byte bound", len(m.Canonical), MaxManifestBytes)
	}
	m.Digest = canon.DigestBytes(m.Canonical)
	return m, nil
}

func canonicalSize(v any) (int, error) {
	b, err := canon.Encode(v)
	if err != nil {
		return 0, invalid("", "%v", err)
	}
	return len(b), nil
}

func parseBudgets(v any) (Budgets, error) {
	b := DefaultBudgets()
	raw, err := asObject(v, "budgets")
	if err != nil {
		return b, err
	}
	err = parseInts(raw, "budgets", []intField{
		{"maxSteps", 1, 1024, &b.MaxSteps},
		{"maxAgentCalls", 0, 64, &b.MaxAgentCalls},
		{"maxWork", 1, 100_000_000, &b.MaxWork},
		{"maxContextBytes", 1, MaxValueBytes, &b.MaxContextBytes},
		{"maxOutputBytes", 1, MaxValueBytes, &b.MaxOutputBytes},
		{"maxDepth", 0, 8, &b.MaxDepth},
	})
	return b, err
}

func parseInterface(v any) (*Interface, map[string]any, error) {
	raw, err := asObject(v, "interface")
	if err != nil {
		return nil, nil, err
	}
	if err := onlyKeys(raw, "interface", "inputs", "outputs"); err != nil {
		return nil, nil, err
	}
	iface := &Interface{}
	norm := copyObject(raw)
	for _, side := range []string{"inputs", "outputs"} {
		loc := "interface." + side
		sv, ok := raw[side]
		if !ok {
			sv = map[string]any{}
			norm[side] = sv
		}
		sm, err := asObject(sv, loc)
		if err != nil {
			return nil, nil, err
		}
		if len(sm) > MaxInterfacePorts {
			return nil, nil, limit(loc, "%d ports exceed the bound of %d", len(sm), MaxInterfacePorts)
		}
		var ports []InterfacePort
		for _, name := range canon.SortedKeys(sm) {
			if err := nameID(name, loc); err != nil {
				return nil, nil, err
			}
			ploc := join(loc, name)
			t, err := asObject(sm[name], ploc)
			if err != nil {
				return nil, nil, err
			}
			if err := onlyKeys(t, ploc, "cell", "port"); err != nil {
				return nil, nil, err
			}
			cell, err := asID(t["cell"], ploc+".cell")
			if err != nil {
				return nil, nil, err
			}
			port, err := asID(t["port"], ploc+".port")
			if err != nil {
				return nil, nil, err
			}
			ports = append(ports, InterfacePort{Name: name, Cell: cell, Port: port})
		}
		if side == "inputs" {
			iface.Inputs = ports
		} else {
			iface.Outputs = ports
		}
	}
	return iface, norm, nil
}

func parseEdge(v any, i int) (*Edge, error) {
	loc := fmt.Sprintf("edges[%d]", i)
	raw, err := asObject(v, loc)
	if err != nil {
		return nil, err
	}
	if err := onlyKeys(raw, loc, "from", "to", "guard", "on"); err != nil {
		return nil, err
	}
	e := &Edge{Index: i, Value: raw}
	for _, end := range []string{"from", "to"} {
		eloc := loc + "." + end
		em, err := asObject(raw[end], eloc)
		if err != nil {
			return nil, err
		}
		if err := onlyKeys(em, eloc, "cell", "port"); err != nil {
			return nil, err
		}
		cell, err := asID(em["cell"], eloc+".cell")
		if err != nil {
			return nil, err
		}
		port, err := asID(em["port"], eloc+".port")
		if err != nil {
			return nil, err
		}
		if end == "from" {
			e.From = Endpoint{cell, port}
		} else {
			e.To = Endpoint{cell, port}
		}
	}
	if g, ok := raw["guard"]; ok {
		gloc := loc + ".guard"
		gm, err := asObject(g, gloc)
		if err != nil {
			return nil, err
		}
		if err := onlyKeys(gm, gloc, "equals", "field", "expr"); err != nil {
			return nil, err
		}
		guard := &Guard{Value: gm}
		if x, ok := gm["expr"]; ok {
			_, hasEq := gm["equals"]
			_, hasField := gm["field"]
			if hasEq || hasField {
				return nil, invalid(gloc, "expr cannot mix with equals/field")
			}
			p, err := parseProgram(x, gloc+".expr", []string{"value"})
			if err != nil {
				return nil, err
			}
			guard.Kind, guard.Expr = GuardExpr, &p
		} else {
			if guard.Equals, err = asText(gm["equals"], gloc+".equals", 64); err != nil {
				return nil, err
			}
			guard.Kind = GuardLabel
			if f, ok := gm["field"]; ok {
				if guard.Field, err = asID(f, gloc+".field"); err != nil {
					return nil, err
				}
				guard.Kind = GuardField
			}
		}
		e.Guard = guard
	}
	if on, ok := raw["on"]; ok {
		if on != "fail" {
			return nil, invalid(loc+".on", "unknown edge trigger (only \"fail\")")
		}
		if e.Guard != nil {
			return nil, invalid(loc, "a fail edge cannot have a guard")
		}
		e.OnFail = true
	}
	return e, nil
}

// parseProgram admits an {"contract":"algal.expr.v1","program":…} object
// and statically checks the program against the names it may read.
func parseProgram(v any, loc string, names []string) (Program, error) {
	m, err := asObject(v, loc)
	if err != nil {
		return Program{}, err
	}
	if err := onlyKeys(m, loc, "contract", "program"); err != nil {
		return Program{}, err
	}
	if m["contract"] != ExprContract {
		return Program{}, invalid(loc+".contract", "must be %s", ExprContract)
	}
	src, ok := m["program"]
	if !ok {
		return Program{}, invalid(loc+".program", "required program is missing")
	}
	compiled, err := compileExpr(src, names)
	if err != nil {
		return Program{}, invalid(loc+".program", "%s", err)
	}
	return Program{Source: src, Compiled: compiled, Value: m}, nil
}
