package manifest

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/algal-assay/assay/engine/canon"
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
	kindText, err := asText(raw["kind"], loc+": kind", 16)
	if err != nil {
		return nil, err
	}
	kind := Kind(kindText)
	spec, ok := KindOf(kind)
	if !ok {
		return nil, hinted(invalid(loc, "kind: unknown cell kind %q", kindText), kindText, cellKinds)
	}
	if err := onlyKeys(raw, loc, spec.Fields...); err != nil {
		return nil, err
	}
	c := &Cell{Index: i, ID: id, Kind: kind}
	norm := copyObject(raw)
	if spec.fill != nil {
		if err := within(loc, spec.fill(c, raw, norm)); err != nil {
			return nil, err
		}
	}
	if b, ok := raw["budget"]; ok {
		budget, err := parseBudget(b, kind)
		if err != nil {
			return nil, within(loc, err)
		}
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
	c.Value = norm
	return c, nil
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

// parsePorts admits a port map. producer forbids "many"; constant requires
// the object form with a value and forbids capabilities.
func parsePorts(v any, loc string, producer, constant bool) ([]Port, map[string]any, error) {
	m, err := asObject(v, loc)
	if err != nil {
		return nil, nil, err
	}
	if len(m) > MaxPorts {
		return nil, nil, limit(loc, "%d ports exceed the bound of %d", len(m), MaxPorts)
	}
	norm := make(map[string]any, len(m))
	ports := make([]Port, 0, len(m))
	for _, name := range canon.SortedKeys(m) {
		if err := nameID(name, loc); err != nil {
			return nil, nil, err
		}
		ploc := join(loc, name)
		pv := m[name]
		if s, isText := pv.(string); isText && !constant {
			pv = map[string]any{"type": s}
		}
		pm, err := asObject(pv, ploc)
		if err != nil {
			return nil, nil, err
		}
		allowed := []string{"type", "optional", "many", "labels", "schema", "schemaVersion", "capability"}
		if constant {
			allowed = append(allowed, "value")
		}
		if err := onlyKeys(pm, ploc, allowed...); err != nil {
			return nil, nil, err
		}
		p, err := parsePort(name, pm, ploc, producer, constant)
		if err != nil {
			return nil, nil, err
		}
		ports = append(ports, p)
		norm[name] = pm
	}
	return ports, norm, nil
}

func parsePort(name string, pm map[string]any, loc string, producer, constant bool) (Port, error) {
	p := Port{Name: name}
	t, err := asText(pm["type"], loc+".type", 16)
	if err != nil {
		return p, err
	}
	switch t {
	case TypeText, TypeJSON, TypeChoice, TypeRef, TypeCap:
	default:
		return p, hinted(invalid(loc+".type", "unknown port type %q", t), t, []string{TypeText, TypeJSON, TypeChoice, TypeRef, TypeCap})
	}
	p.Type = t
	for _, flag := range []string{"optional", "many"} {
		if f, ok := pm[flag]; ok {
			b, err := asBool(f, loc+"."+flag)
			if err != nil {
				return p, err
			}
			if flag == "optional" {
				p.Optional = b
			} else {
				p.Many = b
			}
		}
	}
	if producer && p.Many {
		return p, invalid(loc+".many", "many is only valid on input ports")
	}
	if ls, ok := pm["labels"]; ok {
		if t != TypeChoice {
			return p, invalid(loc+".labels", "labels require type choice")
		}
		if p.Labels, err = parseLabels(ls, loc+".labels"); err != nil {
			return p, err
		}
	}
	if p.SchemaVersion, err = schemaVersionOf(pm, loc); err != nil {
		return p, err
	}
	if s, ok := pm["schema"]; ok {
		if t != TypeJSON {
			return p, invalid(loc+".schema", "schema requires type json")
		}
		if err := checkSchema(s, p.SchemaVersion, loc+".schema"); err != nil {
			return p, err
		}
		p.Schema = s
	}
	if t == TypeCap {
		c, ok := pm["capability"]
		if !ok {
			return p, invalid(loc+".capability", "cap ports require a capability class")
		}
		if p.Capability, err = asID(c, loc+".capability"); err != nil {
			return p, err
		}
		if constant {
			return p, invalid(loc, "const cells cannot mint capability handles")
		}
	} else if _, ok := pm["capability"]; ok {
		return p, invalid(loc+".capability", "capability requires type cap")
	}
	if constant {
		val, ok := pm["value"]
		if !ok {
			return p, invalid(loc+".value", "const ports require a value")
		}
		p.Value, p.HasValue = val, true
	}
	return p, nil
}

func parseLabels(v any, loc string) ([]string, error) {
	l, err := asList(v, loc, MaxLabels)
	if err != nil {
		return nil, err
	}
	if len(l) == 0 {
		return nil, invalid(loc, "labels must not be empty")
	}
	labels := make([]string, 0, len(l))
	for i, x := range l {
		s, err := asText(x, fmt.Sprintf("%s[%d]", loc, i), MaxLabelLen)
		if err != nil {
			return nil, err
		}
		if contains(labels, s) {
			return nil, invalid(loc, "duplicate label %q", s)
		}
		labels = append(labels, s)
	}
	return labels, nil
}

// parseOutput admits an output contract.
func parseOutput(v any, loc string) (Output, error) {
	o := Output{}
	m, err := asObject(v, loc)
	if err != nil {
		return o, err
	}
	o.Value = m
	k, err := asText(m["kind"], loc+".kind", 16)
	if err != nil {
		return o, err
	}
	o.Kind = k
	switch k {
	case "text":
		return o, onlyKeys(m, loc, "kind")
	case "json":
		if err := onlyKeys(m, loc, "kind", "schema", "schemaVersion"); err != nil {
			return o, err
		}
		if o.SchemaVersion, err = schemaVersionOf(m, loc); err != nil {
			return o, err
		}
		o.Schema = m["schema"]
		return o, checkSchema(m["schema"], o.SchemaVersion, loc+".schema")
	case "choice":
		if err := onlyKeys(m, loc, "kind", "labels", "onMiss"); err != nil {
			return o, err
		}
		if o.Labels, err = parseLabels(m["labels"], loc+".labels"); err != nil {
			return o, err
		}
		if miss, ok := m["onMiss"]; ok {
			s, isText := miss.(string)
			if !isText || !contains(o.Labels, s) {
				return o, invalid(loc+".onMiss", "must be one of the declared labels")
			}
			o.OnMiss, o.HasOnMiss = s, true
		}
		return o, nil
	}
	return o, hinted(invalid(loc+".kind", "unknown output kind %q", k), k, []string{"text", "json", "choice"})
}

// parseViewRoute reads what an effect request of an agent-style or decide
// cell is built from: its view (normalized into norm) and optional route.
func parseViewRoute(raw, norm map[string]any) (View, *Route, error) {
	rv, hasView := raw["view"]
	view, viewValue, err := parseView(rv, hasView)
	if err != nil {
		return view, nil, err
	}
	norm["view"] = viewValue
	var route *Route
	if r, ok := raw["route"]; ok {
		if route, err = parseRoute(r, "route"); err != nil {
			return view, nil, err
		}
	}
	return view, route, nil
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
	for _, k := range slices.Sorted(maps.Keys(m)) {
		s, err := asText(m[k], loc+"."+k, 64)
		if err != nil {
			return nil, err
		}
		switch k {
		case "provider":
			r.Provider = s
		case "model":
			r.Model = s
		case "preset":
			r.Preset = s
		}
	}
	return r, nil
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

// parseView normalizes an agent-style view: inputs defaults to "*", cell
// entries become {"cell", "ports"?} objects.
func parseView(v any, present bool) (View, map[string]any, error) {
	view := View{}
	m := map[string]any{}
	if present {
		// "view": null is malformed, not absent.
		raw, err := asObject(v, "view")
		if err != nil {
			return view, nil, err
		}
		m = copyObject(raw)
	}
	if err := onlyKeys(m, "view", "inputs", "cells", "graph", "note"); err != nil {
		return view, nil, err
	}
	if _, ok := m["inputs"]; !ok {
		m["inputs"] = "*"
	}
	if m["inputs"] == "*" {
		view.AllInputs = true
	} else {
		l, err := asList(m["inputs"], "view.inputs", MaxPorts)
		if err != nil {
			return view, nil, err
		}
		view.Inputs = []string{}
		for i, x := range l {
			s, err := asID(x, fmt.Sprintf("view.inputs[%d]", i))
			if err != nil {
				return view, nil, err
			}
			view.Inputs = append(view.Inputs, s)
		}
	}
	if cv, ok := m["cells"]; ok {
		l, err := asList(cv, "view.cells", MaxViewCells)
		if err != nil {
			return view, nil, err
		}
		if len(l) == 0 {
			return view, nil, invalid("view.cells", "must not be empty")
		}
		items := make([]any, 0, len(l))
		for i, x := range l {
			iloc := fmt.Sprintf("view.cells[%d]", i)
			var item map[string]any
			if s, isText := x.(string); isText {
				item = map[string]any{"cell": s}
			} else if item, err = asObject(x, iloc); err != nil {
				return view, nil, err
			}
			if err := onlyKeys(item, iloc, "cell", "ports"); err != nil {
				return view, nil, err
			}
			name, err := asID(item["cell"], iloc+".cell")
			if err != nil {
				return view, nil, err
			}
			for _, prev := range view.Cells {
				if prev.Cell == name {
					return view, nil, invalid(iloc, "duplicate view cell %q", name)
				}
			}
			vc := ViewCell{Cell: name}
			if pv, ok := item["ports"]; ok {
				pl, err := asList(pv, iloc+".ports", MaxPorts)
				if err != nil {
					return view, nil, err
				}
				if len(pl) == 0 {
					return view, nil, invalid(iloc+".ports", "must not be empty")
				}
				vc.Ports = []string{}
				for j, p := range pl {
					s, err := asID(p, fmt.Sprintf("%s.ports[%d]", iloc, j))
					if err != nil {
						return view, nil, err
					}
					if contains(vc.Ports, s) {
						return view, nil, invalid(iloc+".ports", "duplicate view port %q", s)
					}
					vc.Ports = append(vc.Ports, s)
				}
			}
			view.Cells = append(view.Cells, vc)
			items = append(items, item)
		}
		m["cells"] = items
	}
	if g, ok := m["graph"]; ok {
		b, err := asBool(g, "view.graph")
		if err != nil {
			return view, nil, err
		}
		view.Graph = b
	}
	if n, ok := m["note"]; ok {
		s, err := asText(n, "view.note", MaxNoteLen)
		if err != nil {
			return view, nil, err
		}
		view.Note, view.HasNote = s, true
	}
	view.Value = m
	return view, m, nil
}

func fillAgent(c *Cell, raw, norm map[string]any) error {
	if err := normalizeInputs(c, raw, norm, false); err != nil {
		return err
	}
	a := &AgentCell{}
	var err error
	if a.Prompt, err = asText(raw["prompt"], "prompt", MaxPromptLen); err != nil {
		return err
	}
	if a.Output, err = parseOutput(raw["output"], "output"); err != nil {
		return err
	}
	if c.Kind != KindAgent && a.Output.Kind != "choice" {
		return invalid("output.kind", "%s cells require a choice output", c.Kind)
	}
	if a.View, a.Route, err = parseViewRoute(raw, norm); err != nil {
		return err
	}
	if t, ok := raw["tools"]; ok {
		if c.Kind == KindGate {
			return invalid("tools", "gate cells cannot use tools")
		}
		l, err := asList(t, "tools", MaxTools)
		if err != nil {
			return err
		}
		if len(l) == 0 {
			return invalid("tools", "must not be empty")
		}
		for i, x := range l {
			s, err := asText(x, fmt.Sprintf("tools[%d]", i), 64)
			if err != nil {
				return err
			}
			if contains(a.Tools, s) {
				return invalid("tools", "duplicate tool %q", s)
			}
			a.Tools = append(a.Tools, s)
		}
	}
	if cv, ok := raw["compact"]; ok {
		if c.Kind != KindAgent {
			return invalid("compact", "compact is agent-only")
		}
		cm, err := asObject(cv, "compact")
		if err != nil {
			return err
		}
		if err := onlyKeys(cm, "compact", "maxLogBytes", "keepRecent", "route", "mode"); err != nil {
			return err
		}
		cp := &Compact{}
		if mode, ok := cm["mode"]; ok {
			if mode != "elide" {
				return invalid("compact.mode", "must be \"elide\"")
			}
			if _, ok := cm["route"]; ok {
				return invalid("compact.route", "not used by elide mode")
			}
			cp.Mode = "elide"
		}
		if cp.MaxLogBytes, err = asInt(cm["maxLogBytes"], "compact.maxLogBytes", 1, MaxValueBytes); err != nil {
			return err
		}
		if kr, ok := cm["keepRecent"]; ok {
			if cp.KeepRecent, err = asInt(kr, "compact.keepRecent", 0, 8); err != nil {
				return err
			}
			cp.HasKeepRecent = true
		}
		if r, ok := cm["route"]; ok {
			if cp.Route, err = parseRoute(r, "compact.route"); err != nil {
				return err
			}
		}
		if a.Tools == nil {
			return invalid("compact", "compact needs tools: no tool log ever accumulates")
		}
		a.Compact = cp
	}
	if sv, ok := raw["shadow"]; ok {
		sm, err := asObject(sv, "shadow")
		if err != nil {
			return err
		}
		if err := onlyKeys(sm, "shadow", "take"); err != nil {
			return err
		}
		if c.Kind != KindClassifier {
			return invalid("shadow", "shadow is classifier-only")
		}
		take, isText := sm["take"].(string)
		if !isText || !contains(a.Output.Labels, take) {
			return invalid("shadow.take", "must be a declared label")
		}
		a.Shadow, a.HasShadow = take, true
	}
	if r, ok := raw["retry"]; ok {
		if a.Retry, err = parseRetry(r); err != nil {
			return err
		}
	}
	c.Agent = a
	return nil
}

func fillDecide(c *Cell, raw, norm map[string]any) error {
	if err := normalizeInputs(c, raw, norm, false); err != nil {
		return err
	}
	d := &DecideCell{}
	var err error
	if p, ok := raw["prompt"]; ok {
		if d.Prompt, err = asText(p, "prompt", MaxPromptLen); err != nil {
			return err
		}
		d.HasPrompt = true
	}
	if d.Questions, d.QuestionsValue, err = parseQuestions(raw["questions"], "questions"); err != nil {
		return err
	}
	if d.View, d.Route, err = parseViewRoute(raw, norm); err != nil {
		return err
	}
	if r, ok := raw["retry"]; ok {
		if d.Retry, err = parseRetry(r); err != nil {
			return err
		}
	}
	c.Decide = d
	return nil
}

// parseQuestions admits a decide question map.
func parseQuestions(v any, loc string) ([]Question, map[string]any, error) {
	m, err := asObject(v, loc)
	if err != nil {
		return nil, nil, err
	}
	if len(m) == 0 || len(m) > MaxQuestions {
		return nil, nil, invalid(loc, "requires 1..%d questions, got %d", MaxQuestions, len(m))
	}
	qs := make([]Question, 0, len(m))
	for _, name := range canon.SortedKeys(m) {
		qloc := fmt.Sprintf("%s[%q]", loc, name)
		if canon.UTF16Len(name) > MaxQuestionName {
			return nil, nil, invalid(qloc, "question name exceeds %d units", MaxQuestionName)
		}
		qm, err := asObject(m[name], qloc)
		if err != nil {
			return nil, nil, err
		}
		if err := onlyKeys(qm, qloc, "type", "instructions", "criteria"); err != nil {
			return nil, nil, err
		}
		q := Question{Name: name}
		if q.Type, err = asText(qm["type"], qloc+".type", 16); err != nil {
			return nil, nil, err
		}
		if q.Instructions, err = asText(qm["instructions"], qloc+".instructions", MaxInstructions); err != nil {
			return nil, nil, err
		}
		if q.Instructions == "" {
			return nil, nil, invalid(qloc+".instructions", "must not be empty")
		}
		crit, hasCrit := qm["criteria"]
		cloc := qloc + ".criteria"
		switch q.Type {
		case "noul":
			if hasCrit {
				cm, err := asObject(crit, cloc)
				if err != nil {
					return nil, nil, err
				}
				if err := onlyKeys(cm, cloc, "true", "false"); err != nil {
					return nil, nil, err
				}
				for _, k := range slices.Sorted(maps.Keys(cm)) {
					if _, err := asText(cm[k], cloc+"."+k, MaxCriterionLen); err != nil {
						return nil, nil, err
					}
				}
			}
		case "choice":
			cm, err := asObject(crit, cloc)
			if err != nil {
				return nil, nil, err
			}
			if len(cm) == 0 || len(cm) > MaxCriteria {
				return nil, nil, invalid(cloc, "requires 1..%d entries", MaxCriteria)
			}
			for _, k := range slices.Sorted(maps.Keys(cm)) {
				if canon.UTF16Len(k) > MaxQuestionName {
					return nil, nil, invalid(cloc, "criterion key exceeds %d units", MaxQuestionName)
				}
				if cm[k] != nil {
					if _, err := asText(cm[k], fmt.Sprintf("%s[%q]", cloc, k), MaxCriterionLen); err != nil {
						return nil, nil, err
					}
				}
			}
		case "score":
			l, isList := crit.([]any)
			if !isList {
				return nil, nil, invalid(cloc, "must be a list of 1..%d criteria", MaxCriteria)
			}
			// Both runtimes reject an over-long score scale as a malformed
			// declaration (PARSE_FAILED), not as a count budget.
			if len(l) == 0 || len(l) > MaxCriteria {
				return nil, nil, invalid(cloc, "requires 1..%d entries", MaxCriteria)
			}
			for i, x := range l {
				if _, err := asText(x, fmt.Sprintf("%s[%d]", cloc, i), MaxCriterionLen); err != nil {
					return nil, nil, err
				}
			}
		default:
			return nil, nil, invalid(qloc+".type", "must be noul, choice, or score")
		}
		if hasCrit {
			q.Criteria = crit
		}
		qs = append(qs, q)
	}
	return qs, m, nil
}

func fillRecall(c *Cell, raw, norm map[string]any) error {
	if err := normalizeInputs(c, raw, norm, true); err != nil {
		return err
	}
	r := &RecallCell{}
	var err error
	q, ok := raw["query"]
	if !ok {
		return invalid("query", "recall cells require a query program")
	}
	if r.Query, err = parseProgram(q, "query", portNames(c.Declared)); err != nil {
		return err
	}
	if k, ok := raw["k"]; ok {
		if r.K, err = asInt(k, "k", 1, MaxRecallK); err != nil {
			return err
		}
	}
	if e, ok := raw["embedder"]; ok {
		if r.Embedder, err = asText(e, "embedder", 64); err != nil {
			return err
		}
		model, isGateway := strings.CutPrefix(r.Embedder, "gateway:")
		if !(r.Embedder == "local" || r.Embedder == "gateway" || isGateway && model != "") {
			return invalid("embedder", "must be local, gateway or gateway:<model>, got %q", r.Embedder)
		}
	}
	if rv, ok := raw["route"]; ok {
		if r.Route, err = parseRoute(rv, "route"); err != nil {
			return err
		}
	}
	if rv, ok := raw["rerank"]; ok {
		rm, err := asObject(rv, "rerank")
		if err != nil {
			return err
		}
		if err := onlyKeys(rm, "rerank", "route", "take"); err != nil {
			return err
		}
		rr := &Rerank{}
		if _, ok := rm["route"]; !ok {
			return invalid("rerank.route", "recall rerank requires a route")
		}
		route, err := parseRoute(rm["route"], "rerank.route")
		if err != nil {
			return err
		}
		if route.Provider == "" && route.Preset == "" {
			if _, p := route.Value["provider"]; !p {
				if _, s := route.Value["preset"]; !s {
					return invalid("rerank.route", "requires provider or preset")
				}
			}
		}
		rr.Route = *route
		if t, ok := rm["take"]; ok {
			if rr.Take, err = asInt(t, "rerank.take", 1, r.EffectiveK()); err != nil {
				return err
			}
		}
		r.Rerank = rr
	}
	if rv, ok := raw["retry"]; ok {
		if r.Retry, err = parseRetry(rv); err != nil {
			return err
		}
	}
	c.Recall = r
	return nil
}

func fillEmbed(c *Cell, raw, _ map[string]any) error {
	e := &EmbedCell{}
	d, err := asText(raw["manifest"], "manifest", 71)
	if err != nil {
		return err
	}
	if !canon.IsDigest(d) {
		return invalid("manifest", "%q is not a sha256: digest", d)
	}
	e.Manifest = d
	if v, ok := raw["via"]; ok {
		if e.Via, err = asID(v, "via"); err != nil {
			return err
		}
	}
	switch c.Kind {
	case KindRepeat:
		if e.MaxRounds, err = asInt(raw["maxRounds"], "maxRounds", 1, MaxRounds); err != nil {
			return err
		}
		if cv, ok := raw["carry"]; ok {
			cm, err := asObject(cv, "carry")
			if err != nil {
				return err
			}
			if len(cm) > MaxCarry {
				return limit("carry", "%d entries exceed the bound of %d", len(cm), MaxCarry)
			}
			e.Carry = []Carry{}
			for _, out := range canon.SortedKeys(cm) {
				if err := nameID(out, "carry"); err != nil {
					return err
				}
				in, err := asID(cm[out], "carry."+out)
				if err != nil {
					return err
				}
				e.Carry = append(e.Carry, Carry{Output: out, Input: in})
			}
		}
		if uv, ok := raw["until"]; ok {
			um, err := asObject(uv, "until")
			if err != nil {
				return err
			}
			if err := onlyKeys(um, "until", "output", "equals", "field"); err != nil {
				return err
			}
			u := &Until{}
			if u.Output, err = asID(um["output"], "until.output"); err != nil {
				return err
			}
			if u.Equals, err = asText(um["equals"], "until.equals", 64); err != nil {
				return err
			}
			if f, ok := um["field"]; ok {
				if u.Field, err = asID(f, "until.field"); err != nil {
					return err
				}
			}
			e.Until = u
		}
	case KindEach:
		if e.MaxItems, err = asInt(raw["maxItems"], "maxItems", 1, MaxEachItems); err != nil {
			return err
		}
		if e.Over, err = asID(raw["over"], "over"); err != nil {
			return err
		}
	}
	c.Embed = e
	return nil
}
