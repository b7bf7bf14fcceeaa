package manifest

import (
	"fmt"
	"maps"
	"slices"
	"sort"
)

// Signature types a registry function or host tool: its ports, its work
// cost per call and, for host tools, the effect class and output bound.
type Signature struct {
	Name    string
	Inputs  []Port // canonical key order
	Outputs []Port
	Cost    int
	// Effect is "read" or "write" for host tools ("" for pure builtins).
	Effect string
	// MaxOutputBytes bounds a host tool's output (0: none declared).
	MaxOutputBytes int
}

// Input returns the input port with the given name.
func (s *Signature) Input(name string) (Port, bool) { return findPort(s.Inputs, name) }

// Output returns the output port with the given name.
func (s *Signature) Output(name string) (Port, bool) { return findPort(s.Outputs, name) }

func findPort(ps []Port, name string) (Port, bool) {
	for _, p := range ps {
		if p.Name == name {
			return p, true
		}
	}
	return Port{}, false
}

func ports(ps ...Port) []Port {
	sort.Slice(ps, func(i, j int) bool { return ps[i].Name < ps[j].Name })
	return ps
}

func jsonPort(name string) Port { return Port{Name: name, Type: TypeJSON} }
func textPort(name string) Port { return Port{Name: name, Type: TypeText} }
func optional(p Port) Port      { p.Optional = true; return p }

// builtins is the builtin fn registry: every name a fn cell (or an agent's
// tools list) may use without a host registry, with its ports and cost.
// The run engine implements the behaviour; admission only needs the types.
// It is read through Builtin and BuiltinNames so no caller can change what
// every later admission sees.
var builtins = map[string]Signature{
	"echo.v1":     {Inputs: ports(jsonPort("value")), Outputs: ports(jsonPort("value")), Cost: 10},
	"coalesce.v1": {Inputs: ports(optional(jsonPort("a")), optional(jsonPort("b")), optional(jsonPort("c"))), Outputs: ports(jsonPort("value")), Cost: 10},
	"format.v1":   {Inputs: ports(textPort("prefix"), jsonPort("value")), Outputs: ports(textPort("value")), Cost: 10},
	"tag.v1":      {Inputs: ports(textPort("tag"), jsonPort("value")), Outputs: ports(textPort("value")), Cost: 10},
	"pick.v1":     {Inputs: ports(jsonPort("record"), textPort("field")), Outputs: ports(jsonPort("value")), Cost: 10},
	"join.v1": {Inputs: ports(Port{Name: "items", Type: TypeText, Many: true}, optional(textPort("sep"))),
		Outputs: ports(textPort("value")), Cost: 10},
	"assert.v1":    {Inputs: ports(jsonPort("value"), jsonPort("expect")), Outputs: ports(jsonPort("value")), Cost: 10},
	"inc.v1":       {Inputs: ports(jsonPort("value")), Outputs: ports(jsonPort("value")), Cost: 5},
	"double.v1":    {Inputs: ports(jsonPort("value")), Outputs: ports(jsonPort("value")), Cost: 5},
	"not.v1":       {Inputs: ports(jsonPort("value")), Outputs: ports(jsonPort("value")), Cost: 5},
	"uppercase.v1": {Inputs: ports(textPort("value")), Outputs: ports(textPort("value")), Cost: 5},
	"label.v1": {Inputs: ports(textPort("value")),
		Outputs: ports(Port{Name: "value", Type: TypeChoice, Labels: []string{"a", "b"}}), Cost: 10},
	"push.v1":             {Inputs: ports(jsonPort("list"), jsonPort("item")), Outputs: ports(jsonPort("value")), Cost: 5},
	"memory.query.v1":     {Inputs: ports(jsonPort("snapshot"), jsonPort("program")), Outputs: ports(jsonPort("result")), Cost: 10},
	"context.compact.v1":  {Inputs: ports(jsonPort("source"), jsonPort("policy")), Outputs: ports(jsonPort("view"), jsonPort("archive")), Cost: 10},
	"manifest.compile.v1": {Inputs: ports(jsonPort("plan")), Outputs: ports(jsonPort("manifest")), Cost: 50},
}

// reservedTools are host tools the contract names: the mailbox drivers
// over capability handles and the agent-local context reader. A host that
// admits them supplies their behaviour; Options.NoReservedTools controls
// whether admission treats them as known. Read through ReservedTool.
var reservedTools = map[string]Signature{
	"mailbox.send.v1": {Inputs: ports(Port{Name: "mailbox", Type: TypeCap, Capability: "mailbox-send"}, jsonPort("message")),
		Outputs: ports(textPort("id")), Cost: 100, Effect: "write", MaxOutputBytes: 256},
	"mailbox.receive.v1": {Inputs: ports(Port{Name: "mailbox", Type: TypeCap, Capability: "mailbox-receive"}),
		Outputs: ports(textPort("id"), jsonPort("message")), Cost: 100, Effect: "write", MaxOutputBytes: MaxValueBytes},
	"agent.context.local.v1": {Inputs: ports(jsonPort("query")), Outputs: ports(jsonPort("result")), Cost: 100, MaxOutputBytes: 65_536},
}

// Builtin returns the signature of builtin fn name. The Port slices are
// shared: callers read them and never write.
func Builtin(name string) (Signature, bool) {
	s, ok := builtins[name]
	return s, ok
}

// BuiltinNames lists the builtin fns in byte order.
func BuiltinNames() []string { return slices.Sorted(maps.Keys(builtins)) }

// ReservedTool returns the signature of the reserved host tool name.
func ReservedTool(name string) (Signature, bool) {
	s, ok := reservedTools[name]
	return s, ok
}

func init() {
	for _, table := range []map[string]Signature{builtins, reservedTools} {
		for name, s := range table {
			s.Name = name
			table[name] = s
		}
	}
}

// ParseSignature admits a host tool signature as a tools file declares it:
// {"inputs":{ports},"outputs":{ports},"effect":"read"|"write",
// "cost":0..100000000,"maxOutputBytes":1..262144}.
func ParseSignature(name string, v any) (Signature, error) {
	loc := fmt.Sprintf("tools[%q].signature", name)
	s := Signature{Name: name}
	m, err := asObject(v, loc)
	if err != nil {
		return s, err
	}
	if err := onlyKeys(m, loc, "inputs", "outputs", "effect", "cost", "maxOutputBytes"); err != nil {
		return s, err
	}
	if s.Inputs, _, err = parsePorts(m["inputs"], loc+".inputs", false, false); err != nil {
		return s, err
	}
	if s.Outputs, _, err = parsePorts(m["outputs"], loc+".outputs", true, false); err != nil {
		return s, err
	}
	if m["effect"] != "read" && m["effect"] != "write" {
		return s, invalid(loc+".effect", "must be \"read\" or \"write\"")
	}
	s.Effect = m["effect"].(string)
	if s.Cost, err = asInt(m["cost"], loc+".cost", 0, 100_000_000); err != nil {
		return s, err
	}
	if s.MaxOutputBytes, err = asInt(m["maxOutputBytes"], loc+".maxOutputBytes", 1, MaxValueBytes); err != nil {
		return s, err
	}
	return s, nil
}
