package manifest

import (
	"slices"

	"github.com/algal-assay/assay/engine/canon"
)

// portTypes are the port types of algal.organism.v1.
var portTypes = []string{TypeText, TypeJSON, TypeChoice, TypeRef, TypeCap}

var (
	portKeys      = []string{"type", "optional", "many", "labels", "schema", "schemaVersion", "capability"}
	constPortKeys = append(slices.Clip(portKeys), "value")
)

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
		d, err := portDeclOf(name, m[name], loc, producer, constant)
		if err != nil {
			return nil, nil, err
		}
		p, err := parsePort(d)
		if err != nil {
			return nil, nil, err
		}
		ports = append(ports, p)
		norm[name] = d.pm
	}
	return ports, norm, nil
}

// portDecl is one port declaration under check.
type portDecl struct {
	name               string
	pm                 map[string]any
	loc                string
	producer, constant bool
}

// portDeclOf reads the port name of map loc declares: an object of known
// keys, or (outside const cells) a bare type name.
func portDeclOf(name string, pv any, loc string, producer, constant bool) (portDecl, error) {
	if err := nameID(name, loc); err != nil {
		return portDecl{}, err
	}
	ploc := join(loc, name)
	if s, isText := pv.(string); isText && !constant {
		pv = map[string]any{"type": s}
	}
	pm, err := asObject(pv, ploc)
	if err != nil {
		return portDecl{}, err
	}
	allowed := portKeys
	if constant {
		allowed = constPortKeys
	}
	if err := onlyKeys(pm, ploc, allowed...); err != nil {
		return portDecl{}, err
	}
	return portDecl{name: name, pm: pm, loc: ploc, producer: producer, constant: constant}, nil
}

// portSteps read a port declaration, in the order its first fault is
// reported.
var portSteps = []func(portDecl, *Port) error{
	readPortType, readPortFlags, readPortLabels, readPortSchema, readPortCapability, readPortValue,
}

func parsePort(d portDecl) (Port, error) {
	p := Port{Name: d.name}
	for _, step := range portSteps {
		if err := step(d, &p); err != nil {
			return p, err
		}
	}
	return p, nil
}

func readPortType(d portDecl, p *Port) error {
	t, err := asText(d.pm["type"], d.loc+".type", 16)
	if err != nil {
		return err
	}
	if !contains(portTypes, t) {
		return hinted(invalid(d.loc+".type", "unknown port type %q", t), t, portTypes)
	}
	p.Type = t
	return nil
}

func readPortFlags(d portDecl, p *Port) error {
	var err error
	if p.Optional, err = d.flag("optional"); err != nil {
		return err
	}
	if p.Many, err = d.flag("many"); err != nil {
		return err
	}
	if d.producer && p.Many {
		return invalid(d.loc+".many", "many is only valid on input ports")
	}
	return nil
}

// flag reads an optional boolean key (false when absent).
func (d portDecl) flag(key string) (bool, error) {
	f, ok := d.pm[key]
	if !ok {
		return false, nil
	}
	return asBool(f, d.loc+"."+key)
}

func readPortLabels(d portDecl, p *Port) error {
	ls, ok := d.pm["labels"]
	if !ok {
		return nil
	}
	if p.Type != TypeChoice {
		return invalid(d.loc+".labels", "labels require type choice")
	}
	var err error
	p.Labels, err = parseLabels(ls, d.loc+".labels")
	return err
}

func readPortSchema(d portDecl, p *Port) error {
	var err error
	if p.SchemaVersion, err = schemaVersionOf(d.pm, d.loc); err != nil {
		return err
	}
	s, ok := d.pm["schema"]
	if !ok {
		return nil
	}
	if p.Type != TypeJSON {
		return invalid(d.loc+".schema", "schema requires type json")
	}
	if err := checkSchema(s, p.SchemaVersion, d.loc+".schema"); err != nil {
		return err
	}
	p.Schema = s
	return nil
}

func readPortCapability(d portDecl, p *Port) error {
	c, ok := d.pm["capability"]
	if p.Type != TypeCap {
		if ok {
			return invalid(d.loc+".capability", "capability requires type cap")
		}
		return nil
	}
	if !ok {
		return invalid(d.loc+".capability", "cap ports require a capability class")
	}
	var err error
	if p.Capability, err = asID(c, d.loc+".capability"); err != nil {
		return err
	}
	if d.constant {
		return invalid(d.loc, "const cells cannot mint capability handles")
	}
	return nil
}

func readPortValue(d portDecl, p *Port) error {
	if !d.constant {
		return nil
	}
	val, ok := d.pm["value"]
	if !ok {
		return invalid(d.loc+".value", "const ports require a value")
	}
	p.Value, p.HasValue = val, true
	return nil
}

func parseLabels(v any, loc string) ([]string, error) { return labelList.parse(v, loc) }

// outputKinds read the rest of an output contract of each kind.
var outputKinds = map[string]func(o *Output, m map[string]any, loc string) error{
	"text":   func(_ *Output, m map[string]any, loc string) error { return onlyKeys(m, loc, "kind") },
	"json":   readJSONOutput,
	"choice": readChoiceOutput,
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
	read, ok := outputKinds[k]
	if !ok {
		return o, hinted(invalid(loc+".kind", "unknown output kind %q", k), k, []string{"text", "json", "choice"})
	}
	err = read(&o, m, loc)
	return o, err
}

func readJSONOutput(o *Output, m map[string]any, loc string) error {
	if err := onlyKeys(m, loc, "kind", "schema", "schemaVersion"); err != nil {
		return err
	}
	var err error
	if o.SchemaVersion, err = schemaVersionOf(m, loc); err != nil {
		return err
	}
	o.Schema = m["schema"]
	return checkSchema(m["schema"], o.SchemaVersion, loc+".schema")
}

func readChoiceOutput(o *Output, m map[string]any, loc string) error {
	if err := onlyKeys(m, loc, "kind", "labels", "onMiss"); err != nil {
		return err
	}
	var err error
	if o.Labels, err = parseLabels(m["labels"], loc+".labels"); err != nil {
		return err
	}
	miss, ok := m["onMiss"]
	if !ok {
		return nil
	}
	s, isText := miss.(string)
	if !isText || !contains(o.Labels, s) {
		return invalid(loc+".onMiss", "must be one of the declared labels")
	}
	o.OnMiss, o.HasOnMiss = s, true
	return nil
}
