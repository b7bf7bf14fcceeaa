package expr

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/algal-assay/assay/engine/fault"
)

// Bounds of algal.expr.v1 (all inclusive maxima).
const (
	MaxProgramBytes = 16_384
	MaxProgramNodes = 512
	MaxProgramDepth = 16
	MaxEnvBytes     = 262_144
	MaxValueDepth   = 32
	MaxListLen      = 1_024
	MaxObjectKeys   = 256
	MaxStringBytes  = 65_536
	MaxValueBytes   = 262_144
	MaxOutputBytes  = 65_536
	MaxNameLen      = 64
	MaxFuel         = 1_000_000
	// DefaultFuel is the budget upstream's boundary uses when none is given.
	DefaultFuel = 10_000
)

// fuelWhat is the "what" detail of an out-of-range budget.
const fuelWhat = "fuel budget must be an integer in [0, 1000000]"

// nodeKind says how a node is evaluated: the structural kinds and get
// (the commonest op) are dispatched inline, every other op through its
// entry's implementation in the shape it declares.
type nodeKind uint8

const (
	kindLit  nodeKind = iota // scalar literal
	kindObj                  // object literal
	kindGet                  // get, the fast path of the commonest op
	kindCall                 // def.eval
	kindArgs                 // evalArgs, then def.evalArgs
	kindPair                 // eval2, then def.eval2
)

// node is one compiled program node. Arguments that are binder names or a
// quote payload are not nodes: their data lives in name/name2/lit.
type node struct {
	kind   nodeKind
	def    *opDef // nil for literals
	opName string
	base   int          // base fuel charged on entry
	lit    any          // scalar literal or quote payload
	litErr *fault.Error // the value-bytes walk failure of a quote payload
	args   []*node      // evaluated arguments (binders excluded)
	// Object literals: keys in UTF-8 byte order, matching args, and their
	// canonical key cost (quoted bytes + colon).
	keys    []string
	keyCost []int
	// Binders: names and the lexical slot of the first one (fold uses
	// slot and slot+1). get with a literal name: slot >= 0 names a binder
	// slot, -1 the env.
	name, name2 string
	slot        int
	// scope is the number of lexical slots visible at this node, used by a
	// get whose name is computed at run time.
	scope   int
	litName bool // get: first argument is a literal string
	// path holds a get's steps when every step is a scalar literal, so
	// the path walk needs no node evaluation or type switch per step.
	path []pathStep
}

type stepKind uint8

const (
	stepKey      stepKind = iota // string key
	stepIndex                    // nonnegative integral index
	stepBadIndex                 // negative or fractional number
	stepBadKind                  // null or bool
)

// pathStep is a literal get step resolved at compile time. Its run-time
// semantics (fuel, miss, errors) are exactly those of evaluating the
// literal and then applying it.
type pathStep struct {
	kind stepKind
	key  string
	idx  int    // stepIndex; indexes past any list length saturate
	got  string // stepBadKind: the literal's kind
}

func literalPath(steps []*node) []pathStep {
	path := make([]pathStep, len(steps))
	for i, st := range steps {
		if st.kind != kindLit {
			return nil
		}
		switch x := st.lit.(type) {
		case string:
			path[i] = pathStep{kind: stepKey, key: x}
		case float64:
			switch {
			case x < 0 || x != math.Trunc(x):
				path[i] = pathStep{kind: stepBadIndex}
			case x >= math.MaxInt32:
				path[i] = pathStep{kind: stepIndex, idx: math.MaxInt}
			default:
				path[i] = pathStep{kind: stepIndex, idx: int(x)}
			}
		default:
			path[i] = pathStep{kind: stepBadKind, got: kindOf(x)}
		}
	}
	return path
}

// Program is a statically checked, compiled expression, safe for
// concurrent use by many evaluations.
type Program struct {
	root  *node
	slots int // lexical slots needed
}

// Compile statically checks program against declaredNames (the names a
// literal `get` may read besides enclosing binders) and compiles it.
//
// declaredNames is the complete set of env names the program may name
// literally; a nil or empty slice declares none, so every literal get must
// name an enclosing binder. EXPR-FACTS has no "unchecked" mode, so none is
// offered: callers that learn names only at run time should use Run.
func Compile(program any, declaredNames []string) (*Program, error) {
	if err := checkProgramSize(program); err != nil {
		return nil, err
	}
	c := compiler{declared: make(map[string]bool, len(declaredNames))}
	for _, n := range declaredNames {
		c.declared[n] = true
	}
	root, err := c.compile(program, 1)
	if err != nil {
		return nil, err
	}
	return &Program{root: root, slots: c.maxSlots}, nil
}

// Check runs only the static check (the upstream "check" boundary).
func Check(program any, names []string) error {
	_, err := Compile(program, names)
	return err
}

func checkProgramSize(program any) *fault.Error {
	size, ok := admit(program, MaxProgramBytes)
	if !ok {
		return newErr(CodeParse, "what", "program is not a JSON value")
	}
	if size > MaxProgramBytes {
		return errBounds("program-bytes", MaxProgramBytes)
	}
	if countNodes(program) > MaxProgramNodes {
		return errBounds("program-nodes", MaxProgramNodes)
	}
	return nil
}

type compiler struct {
	declared map[string]bool
	scope    []string // enclosing binder names, outermost first; index = slot
	maxSlots int
}

func isIdent(s string) bool {
	if len(s) == 0 || len(s) > MaxNameLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alpha := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
		if !alpha && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}

func (c *compiler) compile(v any, depth int) (*node, *fault.Error) {
	if depth > MaxProgramDepth {
		return nil, errBounds("program-depth", MaxProgramDepth)
	}
	switch x := v.(type) {
	case []any:
		return c.call(x, depth)
	case map[string]any:
		n := &node{kind: kindObj, base: 1, scope: len(c.scope)}
		n.keys = byteKeys(x)
		for _, k := range n.keys {
			a, err := c.compile(x[k], depth+1)
			if err != nil {
				return nil, err
			}
			n.args = append(n.args, a)
			n.keyCost = append(n.keyCost, strLen(k)+1)
		}
		return n, nil
	}
	return &node{kind: kindLit, base: 1, lit: v}, nil
}

func (c *compiler) call(arr []any, depth int) (*node, *fault.Error) {
	head, spec, err := callHead(arr)
	if err != nil {
		return nil, err
	}
	n := newCallNode(spec, head, len(arr)-1, len(c.scope))
	names, err := binderNames(spec, head, arr)
	if err != nil {
		return nil, err
	}
	if spec.compile != nil {
		done, err := spec.compile(c, n, arr)
		if err != nil {
			return nil, err
		}
		if done {
			return n, nil
		}
	}
	if len(names) > 0 {
		n.name = names[0]
		n.slot = len(c.scope)
		if len(names) > 1 {
			n.name2 = names[1]
		}
	}
	if err := c.callArgs(n, spec, arr, names, depth); err != nil {
		return nil, err
	}
	if spec.compiled != nil {
		spec.compiled(n)
	}
	return n, nil
}

// callHead reads a call's op name and finds the op, checking its arity.
func callHead(arr []any) (string, *opDef, *fault.Error) {
	if len(arr) == 0 || !isString(arr[0]) {
		return "", nil, newErr(CodeParse, "what", "op head must be a string")
	}
	head := arr[0].(string)
	spec, ok := opTable[head]
	if !ok {
		return "", nil, newErr(CodeOp, "op", head)
	}
	argc := len(arr) - 1
	if argc < spec.min || (spec.max != variadic && argc > spec.max) {
		return "", nil, newErr(CodeArity, "op", head, "want", spec.arity(), "got", argc)
	}
	return head, spec, nil
}

// arity is the op's arity as the arity error words it: "min..max", or
// "min.." when variadic.
func (spec *opDef) arity() string {
	want := strconv.Itoa(spec.min) + ".."
	if spec.max != variadic {
		want += strconv.Itoa(spec.max)
	}
	return want
}

// newCallNode is the node of a call of spec with argc arguments: its
// evaluation shape and its base cost.
func newCallNode(spec *opDef, head string, argc, scope int) *node {
	n := &node{kind: kindCall, def: spec, opName: head, base: 2, scope: scope, slot: -1}
	switch {
	case spec.evalArgs != nil:
		n.kind = kindArgs
	case spec.eval2 != nil:
		n.kind = kindPair
	case head == "get":
		n.kind = kindGet
	}
	switch {
	case spec.cheap:
		n.base = 1
	case spec.perArg:
		n.base = 2 + argc
	}
	return n
}

// binderNames reads the identifiers in the op's binder slots.
func binderNames(spec *opDef, head string, arr []any) ([]string, *fault.Error) {
	var names []string
	for _, slot := range spec.binders {
		s, ok := arr[1+slot].(string)
		if !ok || !isIdent(s) {
			return nil, newErr(CodeParse, "op", head,
				"what", fmt.Sprintf("binder arg %d must be an identifier <= %d chars", slot, MaxNameLen))
		}
		names = append(names, s)
	}
	return names, nil
}

// callArgs compiles the arguments that are not binder names; the binders
// are in scope for the last argument alone.
func (c *compiler) callArgs(n *node, spec *opDef, arr []any, names []string, depth int) *fault.Error {
	last := len(arr) - 1
	for i := 1; i <= last; i++ {
		if slices.Contains(spec.binders, i-1) {
			continue // binder names are data, never evaluated
		}
		a, err := c.compileArg(arr[i], depth, names, i == last)
		if err != nil {
			return err
		}
		n.args = append(n.args, a)
	}
	return nil
}

// compileArg compiles one argument, with names in scope when bound.
func (c *compiler) compileArg(v any, depth int, names []string, bound bool) (*node, *fault.Error) {
	if !bound || len(names) == 0 {
		return c.compile(v, depth+1)
	}
	c.scope = append(c.scope, names...)
	c.maxSlots = max(c.maxSlots, len(c.scope))
	a, err := c.compile(v, depth+1)
	c.scope = c.scope[:len(c.scope)-len(names)]
	return a, err
}

func isString(v any) bool { _, ok := v.(string); return ok }

// lookup returns the innermost slot binding name, or -1.
func (c *compiler) lookup(name string) int {
	for i := len(c.scope) - 1; i >= 0; i-- {
		if c.scope[i] == name {
			return i
		}
	}
	return -1
}
