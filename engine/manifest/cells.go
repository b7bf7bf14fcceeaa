package manifest

import (
	"fmt"
	"slices"
)

// cellKinds are the kind names, for a did-you-mean.
var cellKinds = func() []string {
	var out []string
	for _, k := range Kinds() {
		out = append(out, string(k))
	}
	slices.Sort(out)
	return out
}()

func parseCell(v any, i int) (*Cell, error) {
	loc := fmt.Sprintf("cells[%d]", i)
	raw, err := asObject(v, loc)
	if err != nil {
		return nil, err
	}
	id, err := asID(raw["id"], loc+".id")
	if err != nil {
		return nil, err
	}
	loc = fmt.Sprintf("cells[%d] %q", i, id)
	spec, err := cellKindOf(raw, loc)
	if err != nil {
		return nil, err
	}
	c := &Cell{Index: i, ID: id, Kind: spec.Kind}
	norm := copyObject(raw)
	if spec.fill != nil {
		if err := within(loc, spec.fill(c, raw, norm)); err != nil {
			return nil, err
		}
	}
	if b, ok := raw["budget"]; ok {
		budget, err := parseBudget(b, spec.Kind)
		if err != nil {
			return nil, within(loc, err)
		}
		c.setBudget(budget)
	}
	c.Value = norm
	return c, nil
}

// cellKindOf reads a cell's kind and checks its keys against the kind's row.
func cellKindOf(raw map[string]any, loc string) (*KindSpec, error) {
	kindText, err := asText(raw["kind"], loc+": kind", 16)
	if err != nil {
		return nil, err
	}
	spec, ok := KindOf(Kind(kindText))
	if !ok {
		return nil, hinted(invalid(loc, "kind: unknown cell kind %q", kindText), kindText, cellKinds)
	}
	if err := onlyKeys(raw, loc, spec.Fields...); err != nil {
		return nil, err
	}
	return spec, nil
}

// setBudget files a declared effect budget with the kind's fields.
func (c *Cell) setBudget(budget Budget) {
	switch {
	case c.Agent != nil:
		c.Agent.Budget = budget
	case c.Decide != nil:
		c.Decide.Budget = budget
	case c.Recall != nil:
		c.Recall.Budget = budget
	case c.Tool != nil:
		c.Tool.Budget = budget
	}
}

// fillDeclared reads the outputs an input or const cell declares.
func fillDeclared(c *Cell, raw, norm map[string]any) error {
	ports, value, err := parsePorts(raw["outputs"], "outputs", true, c.Kind == KindConst)
	if err != nil {
		return err
	}
	c.Declared, norm["outputs"] = ports, value
	return nil
}

func fillFn(c *Cell, raw, _ map[string]any) error {
	var err error
	c.Fn, err = asText(raw["fn"], "fn", 64)
	return err
}

func fillTool(c *Cell, raw, _ map[string]any) error {
	name, err := asText(raw["tool"], "tool", 64)
	if err != nil {
		return err
	}
	c.Tool = &ToolCell{Name: name}
	return nil
}

func fillExpr(c *Cell, raw, norm map[string]any) error {
	if err := normalizeInputs(c, raw, norm, false); err != nil {
		return err
	}
	ex := &ExprCell{}
	var err error
	if ex.Program, err = parseProgram(raw["expr"], "expr", portNames(c.Declared)); err != nil {
		return err
	}
	if ex.Output, err = parseOutput(raw["output"], "output"); err != nil {
		return err
	}
	if ex.Output.HasOnMiss {
		return invalid("output.onMiss", "not allowed on expr cells: programs return exact values")
	}
	c.Expr = ex
	return nil
}

func fillSlot(c *Cell, raw, _ map[string]any) error {
	s := &SlotCell{}
	var err error
	if s.Name, err = asID(raw["name"], "name"); err != nil {
		return err
	}
	if raw["mode"] != "read" && raw["mode"] != "write" {
		return invalid("mode", "must be \"read\" or \"write\"")
	}
	s.Mode = raw["mode"].(string)
	if d, ok := raw["default"]; ok {
		if s.Mode == "write" {
			return invalid("default", "a write slot cannot have a default")
		}
		n, err := canonicalSize(d)
		if err != nil {
			return err
		}
		if n > MaxValueBytes {
			return limit("default", "%d canonical bytes exceed maxValueBytes %d", n, MaxValueBytes)
		}
		s.Default, s.HasDefault = d, true
	}
	c.Slot = s
	return nil
}

func portNames(ps []Port) []string {
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.Name
	}
	return names
}

// normalizeInputs parses a cell's "inputs" port map. The normalized form
// omits an empty map unless keepEmpty (recall always keeps it).
func normalizeInputs(c *Cell, raw, norm map[string]any, keepEmpty bool) error {
	in, ok := raw["inputs"]
	if !ok {
		in = map[string]any{}
	}
	ports, value, err := parsePorts(in, "inputs", false, false)
	if err != nil {
		return err
	}
	c.Declared = ports
	if len(ports) == 0 && !keepEmpty {
		delete(norm, "inputs")
	} else {
		norm["inputs"] = value
	}
	return nil
}

func parseRetry(v any) (int, error) {
	m, err := asObject(v, "retry")
	if err != nil {
		return 0, err
	}
	if err := onlyKeys(m, "retry", "attempts"); err != nil {
		return 0, err
	}
	return asInt(m["attempts"], "retry.attempts", 2, MaxRetryAttempts)
}

func parseBudget(v any, kind Kind) (Budget, error) {
	b := Budget{}
	m, err := asObject(v, "budget")
	if err != nil {
		return b, err
	}
	context := intField{"maxContextBytes", 1, MaxValueBytes, &b.MaxContextBytes}
	output := intField{"maxOutputBytes", 1, MaxValueBytes, &b.MaxOutputBytes}
	turns := intField{"maxTurns", 1, MaxTurns, &b.MaxTurns}
	effect := intField{"maxEffectMs", 1, MaxEffectMs, &b.MaxEffectMs}
	fields := []intField{context, output, turns, effect}
	switch kind {
	case KindTool:
		fields = []intField{effect}
	case KindDecide, KindRecall:
		fields = []intField{context, output, effect}
	}
	err = parseInts(m, "budget", fields)
	return b, err
}

// optionalRetry reads a cell's "retry" when present (0 attempts when not).
func optionalRetry(raw map[string]any) (int, error) {
	r, ok := raw["retry"]
	if !ok {
		return 0, nil
	}
	return parseRetry(r)
}

// nameList is the shape of a declared list of names (agent tools, labels,
// view inputs and ports): its bound, how one entry is read, and the
// messages for an empty list and for a repeated entry ("" allows either).
type nameList struct {
	max       int
	read      func(v any, loc string) (string, error)
	empty     string
	duplicate string
}

var (
	toolList      = nameList{max: MaxTools, read: textOf(64), empty: "must not be empty", duplicate: "duplicate tool %q"}
	labelList     = nameList{max: MaxLabels, read: textOf(MaxLabelLen), empty: "labels must not be empty", duplicate: "duplicate label %q"}
	viewInputList = nameList{max: MaxPorts, read: asID}
	viewPortList  = nameList{max: MaxPorts, read: asID, empty: "must not be empty", duplicate: "duplicate view port %q"}
)

// textOf reads a text of at most max UTF-16 code units.
func textOf(max int) func(v any, loc string) (string, error) {
	return func(v any, loc string) (string, error) { return asText(v, loc, max) }
}

// parse reads the list at loc, entries located loc[i].
func (nl nameList) parse(v any, loc string) ([]string, error) {
	l, err := asList(v, loc, nl.max)
	if err != nil {
		return nil, err
	}
	if len(l) == 0 && nl.empty != "" {
		return nil, invalid(loc, "%s", nl.empty)
	}
	names := make([]string, 0, len(l))
	for i, x := range l {
		s, err := nl.read(x, fmt.Sprintf("%s[%d]", loc, i))
		if err != nil {
			return nil, err
		}
		if nl.duplicate != "" && contains(names, s) {
			return nil, invalid(loc, nl.duplicate, s)
		}
		names = append(names, s)
	}
	return names, nil
}
