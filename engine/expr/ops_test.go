package expr

import (
	"math"
	"strings"
	"testing"
)

// TestStringResultsWalked pins that split and join results go through the
// value-bytes walk like every other node result. Both can produce a value
// whose canonical size is larger than anything walked before: split adds
// two quotes per part, and join repeats a separator whose characters
// escape to six bytes each while counting one UTF-8 byte toward the
// string-bytes bound.
func TestStringResultsWalked(t *testing.T) {
	t.Parallel()
	// s: 43,500 U+0001 (6 canonical bytes each) then 1,023 commas, so
	// its canonical size is 2 + 261,000 + 1,023 = 262,025 (admitted), while
	// its 1,024 parts render as 2 + 261,002 + 1,023*2 + 1,023 = 264,073.
	s := strings.Repeat("\x01", 43_500) + strings.Repeat(",", 1_023)
	splitBurn := 2 + 4 + 1 + len(s) + 1_024 // split, get, ",", bytes, parts
	// 1,024 empty strings joined by 64 U+0001: 65,472 UTF-8 bytes (within
	// string-bytes) but 2 + 65,472*6 = 392,834 canonical bytes.
	empties := listOf(1_024, func(int) any { return "" })
	sep := strings.Repeat("\x01", 64)
	joinBurn := 2 + 4 + 4 + 1_023*64 // join, get, get, result bytes
	get := func(n string) any { return []any{"get", n} }
	runBoundCases(t, []boundCase{
		{name: "split result over value-bytes", program: []any{"len", []any{"split", get("s"), ","}},
			env: map[string]any{"s": s}, code: CodeBounds, what: "value-bytes", burn: 2 + splitBurn},
		{name: "split result at value-bytes", program: []any{"len", []any{"split", get("s"), ","}},
			env: map[string]any{"s": s[1_000:]}, value: 1_024.0, burn: 2 + splitBurn - 1_000},
		{name: "join result over value-bytes", program: []any{"slen", []any{"join", get("l"), get("sep")}},
			env: map[string]any{"l": empties, "sep": sep}, code: CodeBounds, what: "value-bytes", burn: 2 + joinBurn},
		{name: "join result under value-bytes", program: []any{"slen", []any{"join", get("l"), get("sep")}},
			env: map[string]any{"l": empties[:600], "sep": sep}, value: float64(599 * 64), burn: 2 + 2 + 4 + 4 + 599*64},
	})
}

// TestOpTableMatchesFacts pins every op's arity range, binder slots and base
// cost against the table in EXPR-FACTS sections 3 and 6.
func TestOpTableMatchesFacts(t *testing.T) {
	t.Parallel()
	type row struct {
		min, max int
		binders  []int
	}
	want := map[string]row{}
	set := func(names string, r row) {
		for _, n := range strings.Fields(names) {
			if _, dup := want[n]; dup {
				t.Fatalf("%s listed twice", n)
			}
			want[n] = r
		}
	}
	set("add mul min max and or concat sconcat merge get", row{1, variadic, nil})
	set("list", row{0, variadic, nil})
	set("sub div mod lt lte gt gte eq neq nth contains take drop split join scontains starts ends has", row{2, 2, nil})
	set("neg abs floor ceil round not len reverse flat unique sort slen upper lower trim keys values toText isText isNum isBool isList isMap isNull quote", row{1, 1, nil})
	set("if clamp", row{3, 3, nil})
	set("let", row{3, 3, []int{0}})
	set("map filter", row{3, 3, []int{1}})
	set("fold", row{5, 5, []int{2, 3}})
	cheap := map[string]bool{}
	for _, n := range strings.Fields("and or not if let quote list isText isNum isBool isList isMap isNull") {
		cheap[n] = true
	}
	if len(opTable) != len(want) {
		t.Fatalf("op table has %d ops, facts list %d", len(opTable), len(want))
	}
	for name, w := range want {
		spec, ok := opTable[name]
		if !ok {
			t.Errorf("%s missing", name)
			continue
		}
		if spec.min != w.min || spec.max != w.max || len(spec.binders) != len(w.binders) {
			t.Errorf("%s: arity %d..%d binders %v, want %d..%d binders %v", name, spec.min, spec.max, spec.binders, w.min, w.max, w.binders)
			continue
		}
		for i := range w.binders {
			if spec.binders[i] != w.binders[i] {
				t.Errorf("%s: binders %v, want %v", name, spec.binders, w.binders)
			}
		}
		if spec.cheap != cheap[name] {
			t.Errorf("%s: cheap=%v, want %v", name, spec.cheap, cheap[name])
		}
	}
}

// TestBaseCostByBudget checks each op's entry charge through the meter: a
// budget one below the base cost fails at the op node itself with
// {cost: base, left: base-1} and burn 0.
func TestBaseCostByBudget(t *testing.T) {
	t.Parallel()
	for _, op := range Ops() {
		spec := opTable[op]
		argc := spec.min
		if op == "get" {
			argc = 3
		}
		prog := []any{op}
		for i := 0; i < argc; i++ {
			prog = append(prog, "x")
		}
		if op == "get" {
			prog[1] = "e"
		}
		base := 2
		switch {
		case op == "get":
			base = 2 + argc
		case spec.cheap:
			base = 1
		}
		_, burn, err := Run(prog, map[string]any{"e": nil}, base-1)
		want := Canonical(errFuel(base, base-1))
		if Canonical(err) != want || burn != 0 {
			t.Errorf("%s: budget %d gave %v burn %d, want %s", op, base-1, err, burn, want)
		}
	}
}

// TestLiteralPathFastPath checks that literal get paths (compiled into
// pathSteps, and run without a machine at the root) agree exactly with the
// general step-by-step walk, at every budget: each literal step is swapped
// for ["quote", step], which costs the same 1 but is evaluated as a node.
func TestLiteralPathFastPath(t *testing.T) {
	t.Parallel()
	env := map[string]any{
		"doc": map[string]any{"a": map[string]any{"b": []any{0.0, map[string]any{"c": "leaf"}, nil}}},
		"n":   nil,
	}
	paths := [][]any{
		{"doc"},
		{"doc", "a", "b", 1.0, "c"},
		{"doc", "a", "b", 2.0, "x"},
		{"doc", "a", "b", 9.0, -1.0},
		{"doc", "a", "b", 1e300},
		{"doc", "a", "b", 4294967296.0},
		{"doc", "a", "b", -1.0, "c"},
		{"doc", "a", 0.5},
		nil, // -0 index, set below (a literal -0.0 constant is +0 in Go)
		{"doc", true},
		{"doc", nil, "a"},
		{"doc", "zz", true},
		{"n", "a"},
		{"n", 0.0},
		{"doc", "a", "b", 0.0, 1.0},
	}
	paths[8] = []any{"doc", "a", "b", math.Copysign(0, -1), "c"}
	for _, steps := range paths {
		lit := append([]any{"get"}, steps...)
		quoted := []any{"get", steps[0]}
		for _, s := range steps[1:] {
			quoted = append(quoted, []any{"quote", s})
		}
		nested := []any{"if", true, lit, nil}
		for budget := 0; budget <= 12; budget++ {
			v1, b1, e1 := Run(lit, env, budget)
			v2, b2, e2 := Run(quoted, env, budget)
			if r1, r2 := render(t, v1, e1), render(t, v2, e2); r1 != r2 || b1 != b2 {
				t.Fatalf("%v budget %d: literal %s/%d, quoted %s/%d", steps, budget, r1, b1, r2, b2)
			}
			v3, b3, e3 := Run(nested, env, budget+2)
			if r1, r3 := render(t, v1, e1), render(t, v3, e3); r1 != r3 || b1+2 != b3 {
				t.Fatalf("%v budget %d: root %s/%d, nested %s/%d", steps, budget, r1, b1, r3, b3)
			}
		}
	}
}

// TestReferenceCoversEveryOp: the reference lists each op of the table
// once, and every example runs to a value (an example that fails teaches
// nothing) with the arity and base cost the entry declares.
func TestReferenceCoversEveryOp(t *testing.T) {
	t.Parallel()
	ref, err := Reference()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, o := range ref {
		if seen[o.Name] {
			t.Errorf("%s listed twice", o.Name)
		}
		seen[o.Name] = true
		if strings.HasPrefix(o.Result, "error") || o.Summary == "" || o.Burn == 0 {
			t.Errorf("%s: example %s gave %s (burn %d), summary %q", o.Name, o.Example, o.Result, o.Burn, o.Summary)
		}
		d := opTable[o.Name]
		if o.MinArgs != d.min || o.MaxArgs != d.max || (o.BaseCost == 1) != d.cheap {
			t.Errorf("%s: reference says %s / base %d, the table %d..%d cheap=%v", o.Name, o.Arity, o.BaseCost, d.min, d.max, d.cheap)
		}
	}
	if len(seen) != len(Ops()) {
		t.Errorf("reference lists %d ops, the table has %d", len(seen), len(Ops()))
	}
}
