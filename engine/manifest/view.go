package manifest

import (
	"fmt"
	"maps"
	"slices"
)

// parseViewRoute reads what an effect request of an agent-style or decide
// cell is built from: its view (normalized into norm) and optional route.
func parseViewRoute(raw, norm map[string]any) (View, *Route, error) {
	rv, hasView := raw["view"]
	view, viewValue, err := parseView(rv, hasView)
	if err != nil {
		return view, nil, err
	}
	norm["view"] = viewValue
	route, err := optionalRoute(raw, "route")
	return view, route, err
}

// optionalRoute reads the route at key of raw when present (nil when not).
func optionalRoute(raw map[string]any, key string) (*Route, error) {
	r, ok := raw[key]
	if !ok {
		return nil, nil
	}
	return parseRoute(r, key)
}

func parseRoute(v any, loc string) (*Route, error) {
	m, err := asObject(v, loc)
	if err != nil {
		return nil, err
	}
	if err := onlyKeys(m, loc, "provider", "model", "preset"); err != nil {
		return nil, err
	}
	r := &Route{Value: m}
	fields := map[string]*string{"provider": &r.Provider, "model": &r.Model, "preset": &r.Preset}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if *fields[k], err = asText(m[k], loc+"."+k, 64); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// viewSteps read the parts of a view, in the order their first fault is
// reported.
var viewSteps = []func(*View, map[string]any) error{readViewInputs, readViewCells, readViewGraph, readViewNote}

// parseView normalizes an agent-style view: inputs defaults to "*", cell
// entries become {"cell", "ports"?} objects.
func parseView(v any, present bool) (View, map[string]any, error) {
	view := View{}
	m, err := viewObject(v, present)
	if err != nil {
		return view, nil, err
	}
	for _, step := range viewSteps {
		if err := step(&view, m); err != nil {
			return view, nil, err
		}
	}
	view.Value = m
	return view, m, nil
}

// viewObject copies the declared view (an empty one when absent) with
// inputs defaulted to "*".
func viewObject(v any, present bool) (map[string]any, error) {
	m := map[string]any{}
	if present {
		// "view": null is malformed, not absent.
		raw, err := asObject(v, "view")
		if err != nil {
			return nil, err
		}
		m = copyObject(raw)
	}
	if err := onlyKeys(m, "view", "inputs", "cells", "graph", "note"); err != nil {
		return nil, err
	}
	if _, ok := m["inputs"]; !ok {
		m["inputs"] = "*"
	}
	return m, nil
}

func readViewInputs(view *View, m map[string]any) error {
	if m["inputs"] == "*" {
		view.AllInputs = true
		return nil
	}
	var err error
	view.Inputs, err = viewInputList.parse(m["inputs"], "view.inputs")
	return err
}

// readViewCells reads the ancestor cells a view shows, normalizing each
// entry to an object in m.
func readViewCells(view *View, m map[string]any) error {
	cv, ok := m["cells"]
	if !ok {
		return nil
	}
	l, err := asList(cv, "view.cells", MaxViewCells)
	if err != nil {
		return err
	}
	if len(l) == 0 {
		return invalid("view.cells", "must not be empty")
	}
	items := make([]any, 0, len(l))
	for i, x := range l {
		item, err := view.readCell(x, fmt.Sprintf("view.cells[%d]", i))
		if err != nil {
			return err
		}
		items = append(items, item)
	}
	m["cells"] = items
	return nil
}

// readCell reads one view cell entry (a name or a {"cell","ports"}
// object) and returns its object form.
func (view *View) readCell(x any, loc string) (map[string]any, error) {
	item, err := viewCellObject(x, loc)
	if err != nil {
		return nil, err
	}
	name, err := asID(item["cell"], loc+".cell")
	if err != nil {
		return nil, err
	}
	if slices.ContainsFunc(view.Cells, func(prev ViewCell) bool { return prev.Cell == name }) {
		return nil, invalid(loc, "duplicate view cell %q", name)
	}
	vc := ViewCell{Cell: name}
	if pv, ok := item["ports"]; ok {
		if vc.Ports, err = viewPortList.parse(pv, loc+".ports"); err != nil {
			return nil, err
		}
	}
	view.Cells = append(view.Cells, vc)
	return item, nil
}

// viewCellObject reads a view cell entry as an object: a bare name
// stands for {"cell": name}.
func viewCellObject(x any, loc string) (map[string]any, error) {
	if s, isText := x.(string); isText {
		return map[string]any{"cell": s}, nil
	}
	item, err := asObject(x, loc)
	if err != nil {
		return nil, err
	}
	return item, onlyKeys(item, loc, "cell", "ports")
}

func readViewGraph(view *View, m map[string]any) error {
	g, ok := m["graph"]
	if !ok {
		return nil
	}
	var err error
	view.Graph, err = asBool(g, "view.graph")
	return err
}

func readViewNote(view *View, m map[string]any) error {
	n, ok := m["note"]
	if !ok {
		return nil
	}
	var err error
	view.Note, err = asText(n, "view.note", MaxNoteLen)
	view.HasNote = err == nil
	return err
}
