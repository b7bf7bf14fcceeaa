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
	raw, size, err := manifestObject(v)
	if err != nil {
		return nil, err
	}
	m := &Manifest{}
	if err := m.readHead(raw); err != nil {
		return nil, err
	}
	cellValues, err := m.readCells(raw)
	if err != nil {
		return nil, err
	}
	edgesRaw, err := m.readEdges(raw)
	if err != nil {
		return nil, err
	}
	norm := copyObject(raw)
	norm["budgets"] = m.Budgets.value()
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
	if err := m.seal(norm, size); err != nil {
		return nil, err
	}
	return m, nil
}

// manifestObject admits the manifest's outer object: its size, its keys
// and its contract. It returns the canonical size.
func manifestObject(v any) (map[string]any, int, error) {
	raw, ok := v.(map[string]any)
	if !ok {
		return nil, 0, invalid("", "manifest must be an object, got %s", describe(v))
	}
	size, err := canonicalSize(raw)
	if err != nil {
		return nil, 0, err
	}
	if size > MaxManifestBytes {
		return nil, 0, limit("", "manifest is %d canonical bytes, over the %d-byte bound", size, MaxManifestBytes)
	}
	if err := onlyKeys(raw, "", "contract", "key", "name", "note", "budgets", "interface", "cells", "edges"); err != nil {
		return nil, 0, err
	}
	if raw["contract"] != Contract {
		return nil, 0, invalid("contract", "expected %q", Contract)
	}
	return raw, size, nil
}

// readHead reads the manifest's key, name, note and budgets.
func (m *Manifest) readHead(raw map[string]any) error {
	key, err := asText(raw["key"], "key", 64)
	if err != nil {
		return err
	}
	suffix, ok := strings.CutPrefix(key, "organism:")
	if !ok || !canon.IsID(suffix) {
		return invalid("key", "%q is not organism:<kebab-id>", key)
	}
	m.Key = key
	if m.Name, err = asText(raw["name"], "name", MaxNameLen); err != nil {
		return err
	}
	if n, ok := raw["note"]; ok {
		if m.Note, err = asText(n, "note", MaxNoteLen); err != nil {
			return err
		}
		m.HasNote = true
	}
	m.Budgets = DefaultBudgets()
	if bv, ok := raw["budgets"]; ok {
		// A present null is not an absent field: both runtimes reject it.
		m.Budgets, err = parseBudgets(bv)
	}
	return err
}

// readCells reads the cells, each id once, and returns their normalized
// values.
func (m *Manifest) readCells(raw map[string]any) ([]any, error) {
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
	return cellValues, nil
}

// readEdges reads the edges (none when absent) and returns them as
// declared.
func (m *Manifest) readEdges(raw map[string]any) ([]any, error) {
	edgesRaw := []any{}
	if e, ok := raw["edges"]; ok {
		var err error
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
	return edgesRaw, nil
}

// value is the budgets' normalized object, every budget filled in.
func (b Budgets) value() map[string]any {
	return map[string]any{
		"maxSteps": float64(b.MaxSteps), "maxAgentCalls": float64(b.MaxAgentCalls),
		"maxWork": float64(b.MaxWork), "maxContextBytes": float64(b.MaxContextBytes),
		"maxOutputBytes": float64(b.MaxOutputBytes), "maxDepth": float64(b.MaxDepth),
	}
}

// seal encodes the normalized manifest, bounds it, and digests it.
func (m *Manifest) seal(norm map[string]any, size int) error {
	var err error
	// The raw size is a close hint for the normalized size; one allocation.
	if m.Canonical, err = canon.AppendEncode(make([]byte, 0, size+size/16+1024), norm); err != nil {
		return invalid("", "%v", err)
	}
	if len(m.Canonical) > MaxManifestBytes {
		return limit("", "normalized manifest is %d canonical bytes, over the %d-byte bound", len(m.Canonical), MaxManifestBytes)
	}
	m.Digest = canon.DigestBytes(m.Canonical)
	return nil
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
		sv, ok := raw[side]
		if !ok {
			sv = map[string]any{}
			norm[side] = sv
		}
		ports, err := parseInterfaceSide(sv, "interface."+side)
		if err != nil {
			return nil, nil, err
		}
		if side == "inputs" {
			iface.Inputs = ports
		} else {
			iface.Outputs = ports
		}
	}
	return iface, norm, nil
}

// parseInterfaceSide reads one side of the interface: names mapped to the
// cell ports they stand for, in canonical key order.
func parseInterfaceSide(sv any, loc string) ([]InterfacePort, error) {
	sm, err := asObject(sv, loc)
	if err != nil {
		return nil, err
	}
	if len(sm) > MaxInterfacePorts {
		return nil, limit(loc, "%d ports exceed the bound of %d", len(sm), MaxInterfacePorts)
	}
	var ports []InterfacePort
	for _, name := range canon.SortedKeys(sm) {
		if err := nameID(name, loc); err != nil {
			return nil, err
		}
		end, err := parseEndpoint(sm[name], join(loc, name))
		if err != nil {
			return nil, err
		}
		ports = append(ports, InterfacePort{Name: name, Cell: end.Cell, Port: end.Port})
	}
	return ports, nil
}

// parseEndpoint reads a {"cell","port"} object (an edge end, an interface
// port's target).
func parseEndpoint(v any, loc string) (Endpoint, error) {
	em, err := asObject(v, loc)
	if err != nil {
		return Endpoint{}, err
	}
	if err := onlyKeys(em, loc, "cell", "port"); err != nil {
		return Endpoint{}, err
	}
	cell, err := asID(em["cell"], loc+".cell")
	if err != nil {
		return Endpoint{}, err
	}
	port, err := asID(em["port"], loc+".port")
	if err != nil {
		return Endpoint{}, err
	}
	return Endpoint{cell, port}, nil
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
	if e.From, err = parseEndpoint(raw["from"], loc+".from"); err != nil {
		return nil, err
	}
	if e.To, err = parseEndpoint(raw["to"], loc+".to"); err != nil {
		return nil, err
	}
	if g, ok := raw["guard"]; ok {
		if e.Guard, err = parseGuard(g, loc+".guard"); err != nil {
			return nil, err
		}
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

// parseGuard reads an edge guard: an expression over the value, or a label
// (or json field) that must equal a text.
func parseGuard(g any, loc string) (*Guard, error) {
	gm, err := asObject(g, loc)
	if err != nil {
		return nil, err
	}
	if err := onlyKeys(gm, loc, "equals", "field", "expr"); err != nil {
		return nil, err
	}
	guard := &Guard{Value: gm}
	if x, ok := gm["expr"]; ok {
		return guard, guard.readExpr(x, gm, loc)
	}
	if guard.Equals, err = asText(gm["equals"], loc+".equals", 64); err != nil {
		return nil, err
	}
	guard.Kind = GuardLabel
	if f, ok := gm["field"]; ok {
		if guard.Field, err = asID(f, loc+".field"); err != nil {
			return nil, err
		}
		guard.Kind = GuardField
	}
	return guard, nil
}

// readExpr reads an expression guard, which stands alone.
func (guard *Guard) readExpr(x any, gm map[string]any, loc string) error {
	_, hasEq := gm["equals"]
	_, hasField := gm["field"]
	if hasEq || hasField {
		return invalid(loc, "expr cannot mix with equals/field")
	}
	p, err := parseProgram(x, loc+".expr", []string{"value"})
	if err != nil {
		return err
	}
	guard.Kind, guard.Expr = GuardExpr, &p
	return nil
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
