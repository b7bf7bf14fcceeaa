package expr

import (
	"math"
	"slices"
	"strings"
	"sync"
	"unsafe"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
)

// machine is the state of one evaluation: the fuel meter, the env, the
// lexical slots and a scratch stack for variadic arguments.
type machine struct {
	left  int
	env   map[string]any
	vars  []any
	names []string
	stack []any
	// sizes remembers the canonical size of each long string measured in
	// this evaluation, by identity, so that a fold comparing or
	// collecting the same env strings over and over measures each once:
	// the burn of eq/lt/list does not grow with string length, so a scan
	// per use could cost 128 KiB of work per 9 fuel. An entry holds its
	// string, so its address cannot be reused while the entry lives. The
	// map is bounded by the evaluation: a long string is either admitted
	// input (env, program) or was made by an op that burned its length.
	sizes map[*byte]sizeEntry
	// pairs remembers the order of long string pairs compared in this
	// evaluation, by identity, for the same reason: eq, lt and contains
	// burn the same whatever the strings' length. At most maxPairs are
	// kept; more distinct long pairs means shorter strings on average.
	pairs map[pairKey]pairEntry
	// measured counts the bytes scanned for long strings (sizes and
	// comparisons), for the test that pins one scan per distinct use.
	measured int
}

type pairKey struct {
	a, b   *byte
	la, lb int
}

type pairEntry struct {
	a, b string // held so that the addresses stay theirs
	c    int
}

const maxPairs = 256

type sizeEntry struct {
	s string
	n int // canonical size, or -1 until asked
	u int // UTF-16 length, or -1 until asked
}

// longString is the length from which a string's size is remembered;
// shorter ones are measured in about the time a lookup takes.
const longString = 1024

// compareText is canon.CompareUTF16(x, y), remembered for long strings.
func (m *machine) compareText(x, y string) int {
	if len(x) < longString || len(y) < longString {
		return canon.CompareUTF16(x, y)
	}
	k := pairKey{unsafe.StringData(x), unsafe.StringData(y), len(x), len(y)}
	if k.a == k.b && k.la == k.lb {
		return 0
	}
	if e, ok := m.pairs[k]; ok {
		return e.c
	}
	c := canon.CompareUTF16(x, y)
	m.measured += min(len(x), len(y))
	if m.pairs == nil {
		m.pairs = make(map[pairKey]pairEntry)
	}
	if len(m.pairs) < maxPairs {
		m.pairs[k] = pairEntry{x, y, c}
	}
	return c
}

// sameText is x == y, remembered for long strings of equal length.
func (m *machine) sameText(x, y string) bool {
	if len(x) != len(y) {
		return false
	}
	if len(x) < longString {
		return x == y
	}
	return m.compareText(x, y) == 0
}

// longStrLen is strLen(s) for a string of at least longString bytes,
// remembered (callers test the length inline, so short strings cost no
// extra call).
func (m *machine) longStrLen(s string) int {
	e := m.sizeEntry(s)
	if e.n < 0 {
		e.n = strLen(s)
		m.measured += len(s)
		m.sizes[unsafe.StringData(s)] = e
	}
	return e.n
}

// longUTF16Len is canon.UTF16Len(s) for a long string, remembered the same
// way: slen burns 2 whatever the length.
func (m *machine) longUTF16Len(s string) int {
	e := m.sizeEntry(s)
	if e.u < 0 {
		e.u = canon.UTF16Len(s)
		m.measured += len(s)
		m.sizes[unsafe.StringData(s)] = e
	}
	return e.u
}

// sizeEntry returns the remembered entry of a long string, or a fresh one
// (n and u unknown) that the caller stores once it has filled it.
func (m *machine) sizeEntry(s string) sizeEntry {
	if e, ok := m.sizes[unsafe.StringData(s)]; ok && len(e.s) == len(s) {
		return e
	}
	if m.sizes == nil {
		m.sizes = make(map[*byte]sizeEntry)
	}
	return sizeEntry{s: s, n: -1, u: -1}
}

var machines = sync.Pool{New: func() any { return &machine{stack: make([]any, 0, 64)} }}

// Eval evaluates the program against env with a fuel budget in
// [0, MaxFuel]. It returns the value and the fuel burned, or an *fault.Error and
// the burn at the moment of failure. It performs the run pipeline's env
// admission (key count, env bytes, depth, value walk), the budget check and
// the output checks; the static check already happened in Compile.
func (p *Program) Eval(env map[string]any, fuel int) (any, int, error) {
	if err := admitEnv(env); err != nil {
		return nil, 0, err
	}
	return p.evalBudget(env, fuel)
}

// Env is an env record that already passed admission (key count, env
// bytes, depth and the per-value walk). Admitting once lets several
// programs (a scorer, its axes, guards) evaluate over one case without
// rescanning it. The map must not be modified after Admit.
type Env struct{ m map[string]any }

// Admit runs the env steps of the run pipeline (1-4) on env.
func Admit(env map[string]any) (*Env, error) {
	if err := admitEnv(env); err != nil {
		return nil, err
	}
	return &Env{m: env}, nil
}

// EvalEnv is Eval over an admitted env.
func (p *Program) EvalEnv(e *Env, fuel int) (any, int, error) {
	var env map[string]any
	if e != nil {
		env = e.m
	}
	return p.evalBudget(env, fuel)
}

func (p *Program) evalBudget(env map[string]any, fuel int) (any, int, error) {
	if fuel < 0 || fuel > MaxFuel {
		return nil, 0, errBounds(fuelWhat, MaxFuel)
	}
	v, burn, err := p.eval(env, fuel)
	if err != nil {
		return nil, burn, err
	}
	return v, burn, nil
}

// Run is upstream's run pipeline in its exact order: env admission, the
// static check with the env keys as declared names, the budget check,
// evaluation and the output checks. A failure before evaluation burns 0.
func Run(program any, env map[string]any, fuel int) (any, int, error) {
	if err := admitEnv(env); err != nil {
		return nil, 0, err
	}
	names := make([]string, 0, len(env))
	for k := range env {
		names = append(names, k)
	}
	p, err := Compile(program, names)
	if err != nil {
		return nil, 0, err
	}
	return p.evalBudget(env, fuel)
}

func (p *Program) eval(env map[string]any, fuel int) (any, int, *fault.Error) {
	if r := p.root; r.kind == kindGet && r.litName && r.slot < 0 && r.path != nil {
		// A program that is one literal env path (the common scorer and
		// guard shape) needs no machine: same charges, in the same order.
		left := fuel
		v, err := envPath(r, env, &left)
		return p.finish(v, fuel-left, err)
	}
	m := machines.Get().(*machine)
	m.left, m.env = fuel, env
	if cap(m.vars) < p.slots {
		m.vars = make([]any, p.slots)
		m.names = make([]string, p.slots)
	}
	m.vars, m.names = m.vars[:p.slots], m.names[:p.slots]
	v, err := m.eval(p.root)
	burn := fuel - m.left
	clear(m.vars)
	if m.measured != 0 { // entries exist only after a miss
		if len(m.sizes) > 64 || len(m.pairs) > 64 {
			// Let a rare large table go rather than pool it.
			m.sizes, m.pairs = nil, nil
		}
		clear(m.sizes)
		clear(m.pairs)
		m.measured = 0
	}
	// Every evalArgs push is popped (and cleared) by its caller, so only
	// a non-empty stack, which cannot happen, would need clearing here.
	clear(m.stack)
	m.stack, m.env = m.stack[:0], nil
	if cap(m.stack) <= 4096 {
		machines.Put(m)
	}
	return p.finish(v, burn, err)
}

// envPath evaluates a get node whose name and steps are literals and whose
// name is not a binder.
func envPath(n *node, env map[string]any, left *int) (any, *fault.Error) {
	if n.base > *left {
		return nil, errFuel(n.base, *left)
	}
	*left -= n.base
	if *left < 1 { // the literal name node
		return nil, errFuel(1, *left)
	}
	*left--
	cur, ok := env[n.name]
	if !ok {
		return nil, errUnbound(n.name)
	}
	return walkPath(cur, n.path, left)
}

// finish applies the output checks to an evaluation's result.
func (p *Program) finish(v any, burn int, err *fault.Error) (any, int, *fault.Error) {
	if err != nil {
		return nil, burn, err
	}
	// value_depth exceeds measure's deepest position by at most one (an
	// empty container counts 1 there), so the second walk is needed only
	// for results that come near the bound.
	if size, deep := measure(v); size > MaxOutputBytes {
		return nil, burn, errBounds("output-bytes", MaxOutputBytes)
	} else if deep+1 > MaxValueDepth && valueDepth(v) > MaxValueDepth {
		return nil, burn, errBounds("value-depth", MaxValueDepth)
	}
	return v, burn, nil
}

func (m *machine) charge(c int) *fault.Error {
	if c > m.left {
		return errFuel(c, m.left)
	}
	m.left -= c
	return nil
}

// evalArgs evaluates every argument of n onto the scratch stack, keeping
// upstream's running canonical-size total (2, plus each value and a comma)
// so that a collection that grows past MaxValueBytes fails before later
// arguments run. It returns the stack base; the caller truncates the stack
// back to it. deep is the deepest position below any argument.
func (m *machine) evalArgs(n *node) (base, deep int, err *fault.Error) {
	base = len(m.stack)
	// total is an upper bound of the exact running size: numbers count
	// their longest rendering (25 bytes) until the bound first passes the
	// limit, when the exact size is recomputed from the stack.
	total := 2
	for i, a := range n.args {
		v, err := m.eval(a)
		if err != nil {
			return base, 0, err
		}
		m.stack = append(m.stack, v)
		if i > 0 {
			total++
		}
		switch x := v.(type) {
		case float64:
			total += 25
		case string:
			if len(x) < longString {
				total += strLen(x)
			} else {
				total += m.longStrLen(x)
			}
		case []any, map[string]any:
			s, d := measure(x)
			total += s
			deep = max(deep, d)
		default:
			s, _ := measure(x)
			total += s
		}
		if total > MaxValueBytes {
			total = 1 + len(m.stack[base:])
			for _, w := range m.stack[base:] {
				s, _ := measure(w)
				total += s
			}
			if total > MaxValueBytes {
				return base, 0, errBounds("value-bytes", MaxValueBytes)
			}
		}
	}
	return base, deep, nil
}

func (m *machine) num(n *node, op string, arg int) (float64, *fault.Error) {
	v, err := m.eval(n)
	if err != nil {
		return 0, err
	}
	f, ok := v.(float64)
	if !ok {
		return 0, errType(op, arg, "number", kindOf(v))
	}
	return f, nil
}

func (m *machine) str(n *node, op string, arg int) (string, *fault.Error) {
	v, err := m.eval(n)
	if err != nil {
		return "", err
	}
	s, ok := v.(string)
	if !ok {
		return "", errType(op, arg, "string", kindOf(v))
	}
	return s, nil
}

func (m *machine) list(n *node, op string, arg int) ([]any, *fault.Error) {
	v, err := m.eval(n)
	if err != nil {
		return nil, err
	}
	l, ok := v.([]any)
	if !ok {
		return nil, errType(op, arg, "list", kindOf(v))
	}
	return l, nil
}

func (m *machine) obj(n *node, op string, arg int) (map[string]any, *fault.Error) {
	v, err := m.eval(n)
	if err != nil {
		return nil, err
	}
	o, ok := v.(map[string]any)
	if !ok {
		return nil, errType(op, arg, "map", kindOf(v))
	}
	return o, nil
}

func (m *machine) boolean(n *node, op string, arg int) (bool, *fault.Error) {
	v, err := m.eval(n)
	if err != nil {
		return false, err
	}
	b, ok := v.(bool)
	if !ok {
		return false, errType(op, arg, "bool", kindOf(v))
	}
	return b, nil
}

// nonnegInt reads a count or index: a number >= 0 with no fraction.
func (m *machine) nonnegInt(n *node, op string) (float64, *fault.Error) {
	v, err := m.eval(n)
	if err != nil {
		return 0, err
	}
	f, ok := v.(float64)
	if !ok || f < 0 || f != math.Trunc(f) {
		return 0, errType(op, 1, "nonneg integer", kindOf(v))
	}
	return f, nil
}

func finite(op string, f float64) (any, *fault.Error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, newErr(CodeNum, "op", op)
	}
	return box(f), nil
}

func (m *machine) eval(n *node) (any, *fault.Error) {
	if n.base > m.left {
		return nil, errFuel(n.base, m.left)
	}
	m.left -= n.base
	switch n.kind {
	case kindLit:
		return n.lit, nil
	case kindGet:
		return m.get(n)
	case kindObj:
		return m.object(n)
	case kindArgs:
		base, deep, err := m.evalArgs(n)
		var v any
		if err == nil {
			v, err = n.def.evalArgs(m, n, m.stack[base:], deep)
		}
		m.pop(base)
		return v, err
	case kindPair:
		a, b, err := m.eval2(n)
		if err != nil {
			return nil, err
		}
		return n.def.eval2(m, n, a, b)
	}
	return n.def.eval(m, n)
}

func (m *machine) pop(base int) {
	clear(m.stack[base:])
	m.stack = m.stack[:base]
}

func (m *machine) get(n *node) (any, *fault.Error) {
	name, err := m.getName(n)
	if err != nil {
		return nil, err
	}
	cur, err := m.binding(n, name)
	if err != nil {
		return nil, err
	}
	if n.path != nil {
		return walkPath(cur, n.path, &m.left)
	}
	for i, step := range n.args[1:] {
		k, err := m.stepKey(step)
		if err != nil {
			return nil, err
		}
		var found bool
		if cur, found, err = getStep(cur, k, i+1); err != nil || !found {
			return nil, err // a miss is null
		}
	}
	return cur, nil
}

// getName evaluates the name a get reads (a literal name costs 1).
func (m *machine) getName(n *node) (string, *fault.Error) {
	if n.litName {
		return n.name, m.charge(1) // the literal name node
	}
	v, err := m.eval(n.args[0])
	if err != nil {
		return "", err
	}
	s, ok := v.(string)
	if !ok {
		return "", errType("get", 0, "name string", kindOf(v))
	}
	return s, nil
}

// binding is the value of name: the innermost binder in scope (resolved
// at compile time for a literal name), else the environment.
func (m *machine) binding(n *node, name string) (any, *fault.Error) {
	if n.litName {
		if n.slot >= 0 {
			return m.vars[n.slot], nil
		}
	} else if i := lastIndex(m.names[:n.scope], name); i >= 0 {
		return m.vars[i], nil
	}
	if cur, found := m.env[name]; found {
		return cur, nil
	}
	return nil, errUnbound(name)
}

// lastIndex is the position of the last s in l, or -1.
func lastIndex(l []string, s string) int {
	for i := len(l) - 1; i >= 0; i-- {
		if l[i] == s {
			return i
		}
	}
	return -1
}

// stepKey evaluates one dynamic get step's key or index.
func (m *machine) stepKey(step *node) (any, *fault.Error) {
	if step.kind != kindLit {
		return m.eval(step)
	}
	// Inline the literal's own evaluation.
	if m.left < 1 {
		return nil, errFuel(1, m.left)
	}
	m.left--
	return step.lit, nil
}

// getStep reads key k (a string) or index k (a non-negative integer) of
// cur; found is false on a miss. at is the step's argument position.
func getStep(cur, k any, at int) (any, bool, *fault.Error) {
	switch x := k.(type) {
	case string:
		o, ok := cur.(map[string]any)
		if !ok {
			return nil, false, nil
		}
		v, ok := o[x]
		return v, ok, nil
	case float64:
		if x < 0 || x != math.Trunc(x) {
			return nil, false, errType("get", at, "nonneg integer index", "number")
		}
		l, ok := cur.([]any)
		if !ok || x >= float64(len(l)) {
			return nil, false, nil
		}
		return l[int(x)], true, nil
	}
	return nil, false, errType("get", at, "string key or nonneg integer index", kindOf(k))
}

// walkPath applies a literal get path to cur, charging each step's
// literal (1) as it is reached; a miss returns null and leaves the
// remaining steps unevaluated and uncharged.
func walkPath(cur any, path []pathStep, left *int) (any, *fault.Error) {
	for i := range path {
		st := &path[i]
		if *left < 1 {
			return nil, errFuel(1, *left)
		}
		*left--
		switch st.kind {
		case stepKey:
			o, ok := cur.(map[string]any)
			if !ok {
				return nil, nil
			}
			if cur, ok = o[st.key]; !ok {
				return nil, nil
			}
		case stepIndex:
			l, ok := cur.([]any)
			if !ok || st.idx >= len(l) {
				return nil, nil
			}
			cur = l[st.idx]
		case stepBadIndex:
			return nil, errType("get", i+1, "nonneg integer index", "number")
		default:
			return nil, errType("get", i+1, "string key or nonneg integer index", st.got)
		}
	}
	return cur, nil
}

func (m *machine) object(n *node) (any, *fault.Error) {
	if len(n.keys) > MaxObjectKeys {
		return nil, errBounds("object-keys", MaxObjectKeys)
	}
	out := make(map[string]any, len(n.keys))
	total := 2
	for i, a := range n.args {
		v, err := m.eval(a)
		if err != nil {
			return nil, err
		}
		// Choice: the key, colon and comma are counted once the value is
		// in hand, then the value is walked at depth 1.
		if i > 0 {
			total++
		}
		total += n.keyCost[i]
		if total, err = m.walkInto(total, v, 1); err != nil {
			return nil, err
		}
		out[n.keys[i]] = v
	}
	return out, nil
}

// walkInto adds v, walked at depth, to a collection builder's running
// total. The common case is settled by one measure; only a failing value
// is walked step by step to find which bound breaks first.
func (m *machine) walkInto(total int, v any, depth int) (int, *fault.Error) {
	switch x := v.(type) {
	case float64:
		total += numLen(x)
	case bool, nil:
		s, _ := measure(x)
		total += s
	case string:
		// Op-made strings are already within bounds.
		if len(x) < longString {
			total += strLen(x)
		} else {
			total += m.longStrLen(x)
		}
	default:
		s, d := measure(v)
		if depth+d <= MaxValueDepth && total+s <= MaxValueBytes {
			return total + s, nil
		}
		w := walker{total: total}
		if err := w.walk(v, depth); err != nil {
			return 0, err
		}
		return w.total, nil
	}
	if total > MaxValueBytes {
		return 0, errBounds("value-bytes", MaxValueBytes)
	}
	return total, nil
}

// sortValues returns a stably sorted copy of l under compareTotal; maps are
// rendered once each rather than per comparison.
func (m *machine) sortValues(l []any) []any {
	type entry struct {
		v   any
		txt []byte
	}
	es := make([]entry, len(l))
	for i, v := range l {
		es[i].v = v
		if o, ok := v.(map[string]any); ok {
			es[i].txt, _ = canon.Encode(o)
		}
	}
	slices.SortStableFunc(es, func(a, b entry) int {
		if a.txt != nil && b.txt != nil {
			return strings.Compare(string(a.txt), string(b.txt))
		}
		return m.compareTotal(a.v, b.v)
	})
	out := make([]any, len(es))
	for i, e := range es {
		out[i] = e.v
	}
	return out
}

// argBound is a cheap upper bound of v's canonical size for the evalArgs
// running total: exact for everything but numbers, which count their
// longest possible rendering.
func (m *machine) argBound(v any) (size, deep int) {
	switch x := v.(type) {
	case float64:
		return 25, 0
	case string:
		if len(x) < longString {
			return strLen(x), 0
		}
		return m.longStrLen(x), 0
	case bool:
		if x {
			return 4, 0
		}
		return 5, 0
	case nil:
		return 4, 0
	}
	return measure(v)
}

// eval2 is evalArgs for the two-argument ops, without the scratch stack.
func (m *machine) eval2(n *node) (a, b any, err *fault.Error) {
	if a, err = m.eval(n.args[0]); err != nil {
		return nil, nil, err
	}
	sa, _ := m.argBound(a)
	if 2+sa > MaxValueBytes {
		if sa, _ = measure(a); 2+sa > MaxValueBytes {
			return nil, nil, errBounds("value-bytes", MaxValueBytes)
		}
	}
	if b, err = m.eval(n.args[1]); err != nil {
		return nil, nil, err
	}
	sb, _ := m.argBound(b)
	if 3+sa+sb > MaxValueBytes {
		sa, _ = measure(a)
		if sb, _ = measure(b); 3+sa+sb > MaxValueBytes {
			return nil, nil, errBounds("value-bytes", MaxValueBytes)
		}
	}
	return a, b, nil
}

// smallInts holds boxed copies of the integers 0..1023 so the commonest
// numeric results (counts, indexes, small arithmetic) cost no allocation.
var smallInts = func() (t [1024]any) {
	for i := range t {
		t[i] = float64(i)
	}
	return t
}()

// box converts a number result to a value, reusing a shared box for small
// non-negative integers (never for -0, which must stay distinguishable
// from 0 until rendering).
func box(f float64) any {
	if f >= 0 && f < 1024 && f == math.Trunc(f) && !(f == 0 && math.Signbit(f)) {
		return smallInts[int(f)]
	}
	return f
}
