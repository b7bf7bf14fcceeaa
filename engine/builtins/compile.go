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

func compilePlan(plan any) (map[string]any, *fault.Error) {
	steps, f := shapeList(plan, maxPlanSteps)
	if f != nil {
		return nil, f
	}
	if len(steps) == 0 {
		return nil, shapeInvalid("plan requires 1..4 steps")
	}
	src := map[string]any{"id": "src", "kind": "input", "outputs": map[string]any{"value": "json"}}
	cells := []any{src}
	edges := []any{}
	prevCell, prevPort, prevType := "src", "value", manifest.TypeJSON
	srcType := ""
	var names []string
	for index, step := range steps {
		text, f := shapeText(step, maxPlanStepLen)
		if f != nil {
			return nil, f
		}
		cellID := fmt.Sprintf("s%d", index)
		parts := strings.Split(text, ";")
		head, rest := parts[0], parts[1:]
		if encoded, ok := strings.CutPrefix(head, "const:"); ok {
			if len(rest) > 0 {
				return nil, shapeInvalid("const steps cannot carry bindings")
			}
			lit, ok := planLiteral(encoded)
			if !ok {
				return nil, shapeInvalid("const step requires a JSON-encoded literal")
			}
			n, f := canonLen(lit)
			if f != nil {
				return nil, f
			}
			if n > maxPlanLiteralLen {
				return nil, shapeLimit("const literal bytes")
			}
			ptype := manifest.TypeJSON
			if _, ok := lit.(string); ok {
				ptype = manifest.TypeText
			}
			cells = append(cells, map[string]any{"id": cellID, "kind": "const",
				"outputs": map[string]any{"value": map[string]any{"type": ptype, "value": lit}}})
			prevCell, prevPort, prevType = cellID, "value", ptype
			names = append(names, "const")
			continue
		}
		fname := strings.TrimPrefix(head, "fn:")
		sig, ok := manifest.Builtin(fname)
		if !ok {
			if !strings.ContainsAny(head, ":=") && !strings.HasPrefix(head, "fn") {
				continue
			}
			return nil, shapeInvalid("step %d requires fn:, const:, or a host fn name", index)
		}
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
		chain, f := chainPort(fname, &sig, bindings)
		if f != nil {
			return nil, f
		}
		for _, b := range bindings {
			if b.port == chain {
				continue
			}
			spec, _ := sig.Input(b.port)
			if spec.Many || spec.Type == manifest.TypeRef {
				return nil, shapeInvalid("cannot bind %s.%s", fname, b.port)
			}
			var lit, ctype any
			switch spec.Type {
			case manifest.TypeText:
				lit, ctype = b.text, manifest.TypeText
			case manifest.TypeChoice:
				if !containsString(spec.Labels, b.text) {
					return nil, shapeInvalid("%s is not a label of %s.%s", b.text, fname, b.port)
				}
				labels := make([]any, len(spec.Labels))
				for i, l := range spec.Labels {
					labels[i] = l
				}
				lit, ctype = b.text, map[string]any{"type": manifest.TypeChoice, "labels": labels}
			default:
				v, ok := planLiteral(b.text)
				if !ok {
					return nil, shapeInvalid("%s= must be JSON-encoded for %s", b.port, fname)
				}
				lit, ctype = v, manifest.TypeJSON
			}
			constID := cellID + "-" + b.port
			cells = append(cells, map[string]any{"id": constID, "kind": "const",
				"outputs": map[string]any{b.port: map[string]any{"type": ctype, "value": lit}}})
			edges = append(edges, planEdge(constID, b.port, cellID, b.port))
		}
		spec, _ := sig.Input(chain)
		if spec.Many || spec.Type == manifest.TypeRef {
			return nil, shapeInvalid("cannot chain into %s.%s", fname, chain)
		}
		if prevCell == "src" {
			srcType = spec.Type
		} else if !(spec.Type == manifest.TypeJSON || prevType == spec.Type ||
			prevType == manifest.TypeChoice && spec.Type == manifest.TypeText) {
			return nil, shapeInvalid("step %d: %s.%s expects %s, pipeline provides %s", index, fname, chain, spec.Type, prevType)
		}
		edges = append(edges, planEdge(prevCell, prevPort, cellID, chain))
		cells = append(cells, map[string]any{"id": cellID, "kind": "fn", "fn": fname})
		if len(sig.Outputs) == 0 {
			return nil, shapeInvalid("%s has no outputs", fname)
		}
		// Outputs are in byte order of port names, the native map order:
		// the first one carries the pipeline on.
		out := sig.Outputs[0]
		prevCell, prevPort, prevType = cellID, out.Name, out.Type
		names = append(names, fname)
	}
	if srcType == "" {
		srcType = manifest.TypeJSON
	}
	src["outputs"] = map[string]any{"value": srcType}
	d, f := canonDigest(plan)
	if f != nil {
		return nil, f
	}
	return map[string]any{
		"contract": manifest.Contract,
		"key":      "organism:plan-" + d[len("sha256:"):len("sha256:")+16],
		"name":     "Compiled " + strings.Join(names, "->"),
		"budgets":  map[string]any{"maxAgentCalls": 0.0, "maxSteps": 32.0, "maxWork": 10000.0},
		"cells":    cells,
		"edges":    edges,
		"interface": map[string]any{
			"inputs":  map[string]any{"value": map[string]any{"cell": "src", "port": "value"}},
			"outputs": map[string]any{"out": map[string]any{"cell": prevCell, "port": prevPort}},
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
