package expr

import (
	"maps"
	"slices"
	"strconv"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
)

// opDef is one op of the language, complete: its name, arity, binder
// slots and base cost (what the static check and the meter need), the
// words and example the reference prints (`assay expr ops`,
// docs/expr.md), and its implementation. Each op is one entry in one of
// the ops_*.go files, grouped by family; to change an op, change its entry.
//
// An implementation takes one of three shapes, whichever the op's
// argument discipline needs, and exactly one is set:
//   - eval evaluates its own arguments, for ops that evaluate lazily or in
//     a fixed order with type checks in between (if, and, sub, fold, ...);
//   - evalArgs receives every argument already evaluated on the scratch
//     stack with upstream's running value-bytes total applied (add, list,
//     concat, ...): deep is the deepest position below any argument;
//   - eval2 receives both arguments of a two-argument op evaluated with
//     the same total, without the stack (lt, eq, ...).
type opDef struct {
	name     string
	min, max int   // arity; max == variadic for unbounded
	binders  []int // 0-based argument slots holding binder names
	cheap    bool  // base cost 1 instead of 2
	perArg   bool  // base cost 2 + argc (get)

	// cost describes the charges beyond the base, in the order they occur
	// ("" for none); summary says what the op does; example is a program
	// whose value and burn the reference computes by running it.
	cost, summary, example string

	eval     func(m *machine, n *node) (any, *fault.Error)
	evalArgs func(m *machine, n *node, args []any, deep int) (any, *fault.Error)
	eval2    func(m *machine, n *node, a, b any) (any, *fault.Error)

	// compile, when set, runs on the node before its arguments are
	// compiled; it may claim the whole call (quote) by returning done.
	compile func(c *compiler, n *node, call []any) (done bool, err *fault.Error)
	// compiled, when set, runs once the arguments are compiled.
	compiled func(n *node)
}

const variadic = -1

// families lists every op, family by family, in the reference's order.
var families = []struct {
	name string
	ops  []*opDef
}{
	{"Numbers", numberOps},
	{"Comparison and logic", logicOps},
	{"Names and records", recordOps},
	{"Lists", listOps},
	{"Text", textOps},
	{"Kinds", kindOps},
}

// opTable indexes the op entries by name for the static check.
var opTable = func() map[string]*opDef {
	t := map[string]*opDef{}
	for _, f := range families {
		for _, d := range f.ops {
			if _, dup := t[d.name]; dup {
				panic("expr: op " + d.name + " defined twice")
			}
			impls := 0
			for _, set := range []bool{d.eval != nil, d.evalArgs != nil, d.eval2 != nil} {
				if set {
					impls++
				}
			}
			if impls != 1 {
				panic("expr: op " + d.name + " needs exactly one implementation")
			}
			t[d.name] = d
		}
	}
	return t
}()

// Ops lists every op name of the language, sorted.
func Ops() []string { return slices.Sorted(maps.Keys(opTable)) }

// OpInfo describes one op for a reference: name, family, arity, fuel and
// an example with the value and burn it produces.
type OpInfo struct {
	Name    string `json:"name"`
	Family  string `json:"family"`
	Arity   string `json:"arity"` // "2", "1..3" or "1.." (variadic)
	MinArgs int    `json:"minArgs"`
	MaxArgs int    `json:"maxArgs"` // -1 when variadic
	Binders []int  `json:"binders,omitempty"`
	// BaseCost is the fuel charged on entry; for get it is 2 + the number
	// of arguments, and BaseCost holds 2 with PerArgument set.
	BaseCost    int    `json:"baseCost"`
	PerArgument bool   `json:"perArgument,omitempty"`
	ExtraCost   string `json:"extraCost,omitempty"`
	Summary     string `json:"summary"`
	Example     string `json:"example"`
	Result      string `json:"result"` // the example's canonical value, or its error
	Burn        int    `json:"burn"`
}

// Reference returns every op in the reference's order (family by family,
// as the entries are written), each example run through Run with an empty
// env and the default budget, so the printed results cannot drift from
// the implementation.
func Reference() ([]OpInfo, error) {
	var out []OpInfo
	for _, f := range families {
		for _, d := range f.ops {
			info := OpInfo{
				Name: d.name, Family: f.name, Arity: arity(d), MinArgs: d.min, MaxArgs: d.max,
				Binders: d.binders, BaseCost: 2, PerArgument: d.perArg, ExtraCost: d.cost,
				Summary: d.summary, Example: d.example,
			}
			if d.cheap {
				info.BaseCost = 1
			}
			prog, err := parseExample(d.example)
			if err != nil {
				return nil, fault.New(CodeParse, "op %s: example %s: %v", d.name, d.example, err)
			}
			v, burn, err := Run(prog, map[string]any{}, DefaultFuel)
			info.Burn = burn
			if err != nil {
				info.Result = "error " + Canonical(err)
			} else if info.Result, err = encodeValue(v); err != nil {
				return nil, err
			}
			out = append(out, info)
		}
	}
	return out, nil
}

func arity(d *opDef) string {
	switch {
	case d.max == variadic:
		return strconv.Itoa(d.min) + ".."
	case d.min == d.max:
		return strconv.Itoa(d.min)
	}
	return strconv.Itoa(d.min) + ".." + strconv.Itoa(d.max)
}

func parseExample(s string) (any, error) { return canon.Parse([]byte(s), 0) }

func encodeValue(v any) (string, error) {
	b, err := canon.Encode(v)
	return string(b), err
}
