package workload

import (
	"fmt"
	"slices"

	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/manifest"
	"github.com/algal-assay/assay/engine/vm"
	"github.com/algal-assay/assay/internal/suggest"
	"gopkg.in/yaml.v3"
)

// checkCaseArgs checks a case's args against every contender's interface
// as it is read: each arg names an interface input and its value fits the
// port behind it, and every input whose port is not optional has a value.
// Without this a wrong type (ticket: 42 for a text input) or a missing
// input passes load, and the run blames the scripted answers or skips the
// cells it feeds. The first problem is kept for checkManifests, which
// reports it after the workload's structural mistakes.
func (w *Workload) checkCaseArgs(d *decoder, n *yaml.Node, args map[string]any, at string) {
	l := w.loading
	if l == nil || l.contendersErr != nil || l.argsErr != nil {
		return
	}
	l.argsErr = w.argsProblem(d, l.contenders, n, args, at)
}

func (w *Workload) argsProblem(d *decoder, cs []contender, n *yaml.Node, args map[string]any, at string) error {
	nodes := map[string][2]*yaml.Node{}
	if n != nil && n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			nodes[n.Content[i].Value] = [2]*yaml.Node{n.Content[i], n.Content[i+1]}
		}
	}
	for _, ct := range cs {
		if ct.manifest == nil || ct.manifest.Interface == nil || ct.label == "the generator" {
			continue
		}
		var names []string
		for _, ip := range ct.manifest.Interface.Inputs {
			names = append(names, ip.Name)
		}
		for name := range args {
			if slices.Contains(names, name) {
				continue
			}
			key := n
			if kn, ok := nodes[name]; ok {
				key = kn[0]
			}
			return d.fail(key, join(at, name), "%s has no interface input %q%s (its inputs are %s)", ct.label, name, suggest.DidYouMean(name, names), quoteList(names))
		}
		for _, ip := range ct.manifest.Interface.Inputs {
			port, ok := interfacePort(ct.manifest, ip)
			if !ok {
				continue
			}
			v, given := args[ip.Name]
			if !given {
				if port.Optional {
					continue
				}
				return d.fail(n, at, "lacks %q, an input %s needs (%s port %q of cell %q in %s); without it the cells it feeds are skipped", ip.Name, ct.label, port.Type, ip.Port, ip.Cell, ct.file)
			}
			if err := vm.CheckValue(port, v); err != nil {
				vn := n
				if kn, ok := nodes[ip.Name]; ok {
					vn = kn[1]
				}
				fix := ""
				if _, isText := v.(string); port.Type == manifest.TypeText && !isText {
					fix = " (quote it to make it text)"
				}
				return d.fail(vn, join(at, ip.Name), "%s is not a value %s takes for input %q (%s port %q of cell %q in %s): %s%s", describeArg(v), ct.label, ip.Name, port.Type, ip.Port, ip.Cell, ct.file, fault.MessageOf(err), fix)
			}
		}
	}
	return nil
}

// interfacePort is the port an interface input delivers to.
func interfacePort(m *manifest.Manifest, ip manifest.InterfacePort) (manifest.Port, bool) {
	cell, ok := m.Cell(ip.Cell)
	if !ok {
		return manifest.Port{}, false
	}
	for _, p := range cell.Declared {
		if p.Name == ip.Port {
			return p, true
		}
	}
	return manifest.Port{}, false
}

// describeArg names a value's JSON type for a message ("the number 42").
func describeArg(v any) string {
	switch x := v.(type) {
	case string:
		return fmt.Sprintf("the text %q", x)
	case float64:
		return fmt.Sprintf("the number %v", x)
	case bool:
		return fmt.Sprintf("the boolean %v", x)
	case nil:
		return "null"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%v", v)
}
