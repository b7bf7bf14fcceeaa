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

type opcode uint8

const (
	opLit opcode = iota // scalar literal
	opObj               // object literal
	opAdd
	opMul
	opSub
	opDiv
	opMod
	opNeg
	opMin
	opMax
	opAbs
	opFloor
	opCeil
	opRound
	opClamp
	opLt
	opLte
	opGt
	opGte
	opEq
	opNeq
	opAnd
	opOr
	opNot
	opIf
	opLet
	opGet
	opList
	opLen
	opNth
	opConcat
	opMap
	opFilter
	opFold
	opContains
	opReverse
	opTake
	opDrop
	opFlat
	opUnique
	opSort
	opSlen
	opSconcat
	opUpper
	opLower
	opTrim
	opSplit
	opJoin
	opScontains
	opStarts
	opEnds
	opHas
	opKeys
	opValues
	opMerge
	opToText
	opIsText
	opIsNum
	opIsBool
	opIsList
	opIsMap
	opIsNull
	opQuote
)

const variadic = -1

type opSpec struct {
	code     opcode
	min, max int   // arity; max == variadic for unbounded
	binders  []int // 0-based argument slots holding binder names
	cheap    bool  // base cost 1 instead of 2
}

var opTable = map[string]opSpec{
	"add": {code: opAdd, min: 1, max: variadic}, "mul": {code: opMul, min: 1, max: variadic},
	"min": {code: opMin, min: 1, max: variadic}, "max": {code: opMax, min: 1, max: variadic},
	"and": {code: opAnd, min: 1, max: variadic, cheap: true}, "or": {code: opOr, min: 1, max: variadic, cheap: true},
	"concat": {code: opConcat, min: 1, max: variadic}, "sconcat": {code: opSconcat, min: 1, max: variadic},
	"merge": {code: opMerge, min: 1, max: variadic}, "get": {code: opGet, min: 1, max: variadic},
	"list": {code: opList, min: 0, max: variadic, cheap: true},

	"sub": {code: opSub, min: 2, max: 2}, "div": {code: opDiv, min: 2, max: 2}, "mod": {code: opMod, min: 2, max: 2},
	"lt": {code: opLt, min: 2, max: 2}, "lte": {code: opLte, min: 2, max: 2},
	"gt": {code: opGt, min: 2, max: 2}, "gte": {code: opGte, min: 2, max: 2},
	"eq": {code: opEq, min: 2, max: 2}, "neq": {code: opNeq, min: 2, max: 2},
	"nth": {code: opNth, min: 2, max: 2}, "contains": {code: opContains, min: 2, max: 2},
	"take": {code: opTake, min: 2, max: 2}, "drop": {code: opDrop, min: 2, max: 2},
	"split": {code: opSplit, min: 2, max: 2}, "join": {code: opJoin, min: 2, max: 2},
	"scontains": {code: opScontains, min: 2, max: 2}, "starts": {code: opStarts, min: 2, max: 2},
	"ends": {code: opEnds, min: 2, max: 2}, "has": {code: opHas, min: 2, max: 2},

	"neg": {code: opNeg, min: 1, max: 1}, "abs": {code: opAbs, min: 1, max: 1},
	"floor": {code: opFloor, min: 1, max: 1}, "ceil": {code: opCeil, min: 1, max: 1},
	"round": {code: opRound, min: 1, max: 1}, "not": {code: opNot, min: 1, max: 1, cheap: true},
	"len": {code: opLen, min: 1, max: 1}, "reverse": {code: opReverse, min: 1, max: 1},
	"flat": {code: opFlat, min: 1, max: 1}, "unique": {code: opUnique, min: 1, max: 1},
	"sort": {code: opSort, min: 1, max: 1}, "slen": {code: opSlen, min: 1, max: 1},
	"upper": {code: opUpper, min: 1, max: 1}, "lower": {code: opLower, min: 1, max: 1},
	"trim": {code: opTrim, min: 1, max: 1}, "keys": {code: opKeys, min: 1, max: 1},
	"values": {code: opValues, min: 1, max: 1}, "toText": {code: opToText, min: 1, max: 1},
	"isText": {code: opIsText, min: 1, max: 1, cheap: true}, "isNum": {code: opIsNum, min: 1, max: 1, cheap: true},
	"isBool": {code: opIsBool, min: 1, max: 1, cheap: true}, "isList": {code: opIsList, min: 1, max: 1, cheap: true},
	"isMap": {code: opIsMap, min: 1, max: 1, cheap: true}, "isNull": {code: opIsNull, min: 1, max: 1, cheap: true},
	"quote": {code: opQuote, min: 1, max: 1, cheap: true},

	"if":     {code: opIf, min: 3, max: 3, cheap: true},
	"let":    {code: opLet, min: 3, max: 3, binders: []int{0}, cheap: true},
	"map":    {code: opMap, min: 3, max: 3, binders: []int{1}},
	"filter": {code: opFilter, min: 3, max: 3, binders: []int{1}},
	"clamp":  {code: opClamp, min: 3, max: 3},
	"fold":   {code: opFold, min: 5, max: 5, binders: []int{2, 3}},
}

// Ops lists every op name of the language, sorted.
func Ops() []string {
	names := make([]string, 0, len(opTable))
	for k := range opTable {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

// node is one compiled program node. Arguments that are binder names or a
// quote payload are not nodes: their data lives in name/name2/lit.
type node struct {
	op     opcode
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
		if st.op != opLit {
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
		n := &node{op: opObj, base: 1, scope: len(c.scope)}
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
	return &node{op: opLit, base: 1, lit: v}, nil
}

func (c *compiler) call(arr []any, depth int) (*node, *fault.Error) {
	var head string
	if len(arr) > 0 {
		head, _ = arr[0].(string)
	}
	if len(arr) == 0 || !isString(arr[0]) {
		return nil, newErr(CodeParse, "what", "op head must be a string")
	}
	spec, ok := opTable[head]
	if !ok {
		return nil, newErr(CodeOp, "op", head)
	}
	argc := len(arr) - 1
	if argc < spec.min || (spec.max != variadic && argc > spec.max) {
		want := strconv.Itoa(spec.min) + ".."
		if spec.max != variadic {
			want += strconv.Itoa(spec.max)
		}
		return nil, newErr(CodeArity, "op", head, "want", want, "got", argc)
	}
	n := &node{op: spec.code, opName: head, base: 2, scope: len(c.scope), slot: -1}
	if spec.cheap {
		n.base = 1
	}
	var names []string
	for _, slot := range spec.binders {
		s, ok := arr[1+slot].(string)
		if !ok || !isIdent(s) {
			return nil, newErr(CodeParse, "op", head,
				"what", fmt.Sprintf("binder arg %d must be an identifier <= %d chars", slot, MaxNameLen))
		}
		names = append(names, s)
	}
	switch spec.code {
	case opQuote:
		n.lit = deepCopy(arr[1])
		if err := (&walker{}).walk(n.lit, 0); err != nil {
			n.litErr = err
		}
		return n, nil
	case opGet:
		n.base = 2 + argc
		if name, ok := arr[1].(string); ok {
			n.litName = true
			n.name = name
			n.slot = c.lookup(name)
			if n.slot < 0 && !c.declared[name] {
				return nil, errUnbound(name)
			}
		}
	}
	if len(names) > 0 {
		n.name = names[0]
		n.slot = len(c.scope)
		if len(names) > 1 {
			n.name2 = names[1]
		}
	}
	last := len(arr) - 1
	for i := 1; i <= last; i++ {
		if slices.Contains(spec.binders, i-1) {
			continue // binder names are data, never evaluated
		}
		if i == last && len(names) > 0 {
			c.scope = append(c.scope, names...)
			c.maxSlots = max(c.maxSlots, len(c.scope))
		}
		a, err := c.compile(arr[i], depth+1)
		if i == last && len(names) > 0 {
			c.scope = c.scope[:len(c.scope)-len(names)]
		}
		if err != nil {
			return nil, err
		}
		n.args = append(n.args, a)
	}
	if spec.code == opGet && n.litName {
		n.path = literalPath(n.args[1:])
	}
	return n, nil
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

func deepCopy(v any) any {
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, c := range x {
			out[i] = deepCopy(c)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, c := range x {
			out[k] = deepCopy(c)
		}
		return out
	}
	return v
}
