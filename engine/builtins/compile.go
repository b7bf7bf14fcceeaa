package builtins

import (
	"fmt"
	"strings"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/manifest"
)

// manifest.compile.v1 turns a flat plan into an organism manifest. A plan
// is a list of 1..4 step strings: "fn:NAME" (or a bare builtin name) with
// optional ";PORT=VALUE" bindings, or "const:JSON". The steps form a
// pipeline from an input cell "src"; the last step's first output port
// becomes the interface output "out". A bare token that names no builtin
// and looks like no step (no ':', no '=', no "fn" prefix) is dropped as
// noise; anything else that does not compile rejects the plan.
//
// The result is only a value: it is not admitted here, so a plan can
// compile to a manifest that admission later rejects (e.g. two bindings of
// one port give two const cells with one id), exactly as natively.

const (
	maxPlanSteps      = 4
	maxPlanStepLen    = 4096 // UTF-16 code units per step
	maxPlanLiteralLen = 4096 // bytes: canonical const literal, raw binding text
)

func fnManifestCompile(in map[string]any) (map[string]any, int, error) {
	m, f := compilePlan(in["plan"])
	if f != nil {
		return nil, 0, f
	}
	return map[string]any{"manifest": m}, 0, nil
}

// planLiteral parses a JSON literal written inside a plan step.
func planLiteral(s string) (any, bool) {
	v, err := canon.Parse([]byte(s), 0)
	return v, err == nil
}

type planBinding struct{ port, text string }

// planBuilder assembles the manifest of a plan step by step: the cells
// and edges so far, the port the pipeline value leaves from, the type the
// first step wants from src, and the step names for the manifest's name.
type planBuilder struct {
	src                          map[string]any
	cells, edges                 []any
	prevCell, prevPort, prevType string
	srcType                      string
	names                        []string
}

func compilePlan(plan any) (map[string]any, *fault.Error) {
	steps, f := shapeList(plan, maxPlanSteps)
	if f != nil {
		return nil, f
	}
	if len(steps) == 0 {
		return nil, shapeInvalid("plan requires 1..4 steps")
	}
	src := map[string]any{"id": "src", "kind": "input", "outputs": map[string]any{"value": "json"}}
	b := &planBuilder{src: src, cells: []any{src}, edges: []any{}, prevCell: "src", prevPort: "value", prevType: manifest.TypeJSON}
	for index, step := range steps {
		text, f := shapeText(step, maxPlanStepLen)
		if f != nil {
			return nil, f
		}
		if f := b.addStep(index, text); f != nil {
			return nil, f
		}
	}
	return b.manifest(plan)
}

// addStep compiles step index: a const step, a fn step, or noise.
func (b *planBuilder) addStep(index int, text string) *fault.Error {
	cellID := fmt.Sprintf("s%d", index)
	parts := strings.Split(text, ";")
	head, rest := parts[0], parts[1:]
	if encoded, ok := strings.CutPrefix(head, "const:"); ok {
		return b.addConst(cellID, encoded, rest)
	}
	fname := strings.TrimPrefix(head, "fn:")
	sig, ok := manifest.Builtin(fname)
	if ok {
		return b.addFn(index, cellID, fname, &sig, rest)
	}
	if !strings.ContainsAny(head, ":=") && !strings.HasPrefix(head, "fn") {
		return nil // noise: dropped
	}
	return shapeInvalid("step %d requires fn:, const:, or a host fn name", index)
}

// addConst adds a const step: the literal becomes the pipeline value
// (text when it is a string).
func (b *planBuilder) addConst(cellID, encoded string, rest []string) *fault.Error {
	if len(rest) > 0 {
		return shapeInvalid("const steps cannot carry bindings")
	}
	lit, ok := planLiteral(encoded)
	if !ok {
		return shapeInvalid("const step requires a JSON-encoded literal")
	}
	n, f := canonLen(lit)
	if f != nil {
		return f
	}
	if n > maxPlanLiteralLen {
		return shapeLimit("const literal bytes")
	}
	ptype := manifest.TypeJSON
	if _, ok := lit.(string); ok {
		ptype = manifest.TypeText
	}
	b.cells = append(b.cells, constCell(cellID, "value", ptype, lit))
	b.prevCell, b.prevPort, b.prevType = cellID, "value", ptype
	b.names = append(b.names, "const")
	return nil
}

func constCell(id, port string, ptype, lit any) map[string]any {
	return map[string]any{"id": id, "kind": "const",
		"outputs": map[string]any{port: map[string]any{"type": ptype, "value": lit}}}
}

// addFn adds a fn step: a const cell per bound input, the pipeline value
// into its chain port, and its first output carrying the pipeline on.
func (b *planBuilder) addFn(index int, cellID, fname string, sig *manifest.Signature, rest []string) *fault.Error {
	bindings, f := planBindings(sig, rest)
	if f != nil {
		return f
	}
	chain, f := chainPort(fname, sig, bindings)
	if f != nil {
		return f
	}
	for _, pb := range bindings {
		if pb.port == chain {
			continue
		}
		if f := b.bindConst(cellID, fname, sig, pb); f != nil {
			return f
		}
	}
	if f := b.chainInto(index, fname, sig, chain); f != nil {
		return f
	}
	b.edges = append(b.edges, planEdge(b.prevCell, b.prevPort, cellID, chain))
	b.cells = append(b.cells, map[string]any{"id": cellID, "kind": "fn", "fn": fname})
	if len(sig.Outputs) == 0 {
		return shapeInvalid("%s has no outputs", fname)
	}
	// Outputs are in byte order of port names, the native map order:
	// the first one carries the pipeline on.
	out := sig.Outputs[0]
	b.prevCell, b.prevPort, b.prevType = cellID, out.Name, out.Type
	b.names = append(b.names, fname)
	return nil
}

// planBindings reads a fn step's PORT=VALUE bindings, keeping those that
// name an input of the fn.
func planBindings(sig *manifest.Signature, rest []string) ([]planBinding, *fault.Error) {
	var bindings []planBinding
	for _, part := range rest {
		port, encoded, ok := strings.Cut(part, "=")
		if !ok {
			return nil, shapeInvalid("binding requires PORT=VALUE")
		}
		if _, f := shapeID(port); f != nil {
			return nil, f
		}
		if len(encoded) > maxPlanLiteralLen {
			return nil, shapeLimit("binding literal bytes")
		}
		if _, ok := sig.Input(port); ok {
			bindings = append(bindings, planBinding{port, encoded})
		}
	}
	return bindings, nil
}

// bindConst feeds a bound input of the fn step from a const cell.
func (b *planBuilder) bindConst(cellID, fname string, sig *manifest.Signature, pb planBinding) *fault.Error {
	spec, _ := sig.Input(pb.port)
	if spec.Many || spec.Type == manifest.TypeRef {
		return shapeInvalid("cannot bind %s.%s", fname, pb.port)
	}
	lit, ctype, f := bindingLiteral(fname, spec, pb)
	if f != nil {
		return f
	}
	constID := cellID + "-" + pb.port
	b.cells = append(b.cells, constCell(constID, pb.port, ctype, lit))
	b.edges = append(b.edges, planEdge(constID, pb.port, cellID, pb.port))
	return nil
}

// bindingLiteral reads a binding's value for the input port spec: text as
// written, a declared label, or a JSON literal.
func bindingLiteral(fname string, spec manifest.Port, pb planBinding) (any, any, *fault.Error) {
	switch spec.Type {
	case manifest.TypeText:
		return pb.text, manifest.TypeText, nil
	case manifest.TypeChoice:
		if !containsString(spec.Labels, pb.text) {
			return nil, nil, shapeInvalid("%s is not a label of %s.%s", pb.text, fname, pb.port)
		}
		labels := make([]any, len(spec.Labels))
		for i, l := range spec.Labels {
			labels[i] = l
		}
		return pb.text, map[string]any{"type": manifest.TypeChoice, "labels": labels}, nil
	}
	v, ok := planLiteral(pb.text)
	if !ok {
		return nil, nil, shapeInvalid("%s= must be JSON-encoded for %s", pb.port, fname)
	}
	return v, manifest.TypeJSON, nil
}

// chainInto checks that the pipeline value may flow into the chain port;
// the first fn step decides the type src declares.
func (b *planBuilder) chainInto(index int, fname string, sig *manifest.Signature, chain string) *fault.Error {
	spec, _ := sig.Input(chain)
	if spec.Many || spec.Type == manifest.TypeRef {
		return shapeInvalid("cannot chain into %s.%s", fname, chain)
	}
	if b.prevCell == "src" {
		b.srcType = spec.Type
		return nil
	}
	if !(spec.Type == manifest.TypeJSON || b.prevType == spec.Type ||
		b.prevType == manifest.TypeChoice && spec.Type == manifest.TypeText) {
		return shapeInvalid("step %d: %s.%s expects %s, pipeline provides %s", index, fname, chain, spec.Type, b.prevType)
	}
	return nil
}

// manifest is the compiled organism, keyed by the plan's digest.
func (b *planBuilder) manifest(plan any) (map[string]any, *fault.Error) {
	srcType := b.srcType
	if srcType == "" {
		srcType = manifest.TypeJSON
	}
	b.src["outputs"] = map[string]any{"value": srcType}
	d, f := canonDigest(plan)
	if f != nil {
		return nil, f
	}
	return map[string]any{
		"contract": manifest.Contract,
		"key":      "organism:plan-" + d[len("sha256:"):len("sha256:")+16],
		"name":     "Compiled " + strings.Join(b.names, "->"),
		"budgets":  map[string]any{"maxAgentCalls": 0.0, "maxSteps": 32.0, "maxWork": 10000.0},
		"cells":    b.cells,
		"edges":    b.edges,
		"interface": map[string]any{
			"inputs":  map[string]any{"value": map[string]any{"cell": "src", "port": "value"}},
			"outputs": map[string]any{"out": map[string]any{"cell": b.prevCell, "port": b.prevPort}},
		},
	}, nil
}

// chainPort picks the input the pipeline value flows into: "value" when
// the fn has one, else its only required input left unbound.
func chainPort(fname string, sig *manifest.Signature, bindings []planBinding) (string, *fault.Error) {
	if _, ok := sig.Input("value"); ok {
		return "value", nil
	}
	var unbound []string
	for _, p := range sig.Inputs {
		bound := false
		for _, b := range bindings {
			if b.port == p.Name {
				bound = true
				break
			}
		}
		if !bound && !p.Optional {
			unbound = append(unbound, p.Name)
		}
	}
	if len(unbound) != 1 {
		return "", shapeInvalid("%s has no single chain port", fname)
	}
	return unbound[0], nil
}

func planEdge(from, fport, to, tport string) map[string]any {
	return map[string]any{"from": map[string]any{"cell": from, "port": fport},
		"to": map[string]any{"cell": to, "port": tport}}
}

func containsString(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}
