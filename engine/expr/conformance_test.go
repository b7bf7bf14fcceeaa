package expr

import (
	"os"
	"testing"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
)

// conformanceCase is one row of testdata/cases.json. Without "names" the
// case runs through the run pipeline (Run) with env (default {}) and fuel
// (default DefaultFuel) and expects value or error plus the exact burn;
// with "names" it runs only the static check and expects {"ok":true}-style
// success (value true) or the static error.
type conformanceCase struct {
	Name    string
	Program any
	Env     map[string]any
	Fuel    *float64
	Names   []any
	Value   any
	Error   map[string]any
	Burn    *float64
	hasVal  bool
	hasName bool
}

func loadCases(t *testing.T) []conformanceCase {
	t.Helper()
	doc, err := canon.ReadFile("testdata/cases.json", 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []conformanceCase
	for i, raw := range doc.([]any) {
		m := raw.(map[string]any)
		c := conformanceCase{Name: m["name"].(string), Program: m["program"]}
		if c.Name == "" {
			t.Fatalf("case %d has no name", i)
		}
		if e, ok := m["env"]; ok {
			c.Env = e.(map[string]any)
		}
		if f, ok := m["fuel"].(float64); ok {
			c.Fuel = &f
		}
		if n, ok := m["names"]; ok {
			c.Names, c.hasName = n.([]any), true
		}
		c.Value, c.hasVal = m["value"]
		if e, ok := m["error"]; ok {
			c.Error = e.(map[string]any)
		}
		if b, ok := m["burn"].(float64); ok {
			c.Burn = &b
		}
		if c.hasVal == (c.Error != nil) {
			t.Fatalf("case %q needs exactly one of value and error", c.Name)
		}
		if !c.hasName && c.Burn == nil {
			t.Fatalf("case %q needs a burn", c.Name)
		}
		out = append(out, c)
	}
	return out
}

func mustEncode(t *testing.T, v any) string {
	t.Helper()
	b, err := canon.Encode(v)
	if err != nil {
		t.Fatalf("encode %#v: %v", v, err)
	}
	return string(b)
}

// errorJSON renders an error as its canonical {code, ...details} text, or
// fails the test when err is not an *fault.Error.
func errorJSON(t *testing.T, err error) string {
	t.Helper()
	e, ok := err.(*fault.Error)
	if !ok {
		t.Fatalf("error %v (%T) is not *expr.Error", err, err)
	}
	return mustEncode(t, ErrorJSON(e))
}

func TestConformance(t *testing.T) {
	t.Parallel()
	cases := loadCases(t)
	if len(cases) < 150 {
		t.Fatalf("only %d conformance cases loaded", len(cases))
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			if c.hasName {
				var names []string
				for _, n := range c.Names {
					if s, ok := n.(string); ok {
						names = append(names, s)
					}
				}
				err := Check(c.Program, names)
				switch {
				case c.Error != nil && err == nil:
					t.Fatalf("check passed, want %s", mustEncode(t, c.Error))
				case c.Error != nil:
					if got, want := errorJSON(t, err), mustEncode(t, c.Error); got != want {
						t.Fatalf("check error %s, want %s", got, want)
					}
				case err != nil:
					t.Fatalf("check failed: %v", err)
				}
				return
			}
			fuel := DefaultFuel
			if c.Fuel != nil {
				fuel = int(*c.Fuel)
			}
			v, burn, err := Run(c.Program, c.Env, fuel)
			assertOutcome(t, "Run", c, v, burn, err)

			// The compile-once path must agree whenever the static check
			// passes with the env keys as declared names.
			names := make([]string, 0, len(c.Env))
			for k := range c.Env {
				names = append(names, k)
			}
			p, cerr := Compile(c.Program, names)
			if cerr != nil {
				if err == nil || burn != 0 || errorJSON(t, cerr) != errorJSON(t, err) {
					t.Fatalf("Compile error %v disagrees with Run (%v, burn %d)", cerr, err, burn)
				}
				return
			}
			v2, burn2, err2 := p.Eval(c.Env, fuel)
			assertOutcome(t, "Eval", c, v2, burn2, err2)
		})
	}
}

func assertOutcome(t *testing.T, lane string, c conformanceCase, v any, burn int, err error) {
	t.Helper()
	if c.Error != nil {
		if err == nil {
			t.Fatalf("%s: value %s, want error %s", lane, mustEncode(t, v), mustEncode(t, c.Error))
		}
		if got, want := errorJSON(t, err), mustEncode(t, c.Error); got != want {
			t.Fatalf("%s: error %s, want %s", lane, got, want)
		}
	} else {
		if err != nil {
			t.Fatalf("%s: error %v, want %s", lane, err, mustEncode(t, c.Value))
		}
		if got, want := mustEncode(t, v), mustEncode(t, c.Value); got != want {
			t.Fatalf("%s: value %s, want %s", lane, got, want)
		}
	}
	if burn != int(*c.Burn) {
		t.Fatalf("%s: burn %d, want %d", lane, burn, int(*c.Burn))
	}
}

// TestFuelSweep checks upstream's sweep property on every successful
// conformance case: a budget one below the burn fails EXPR_FUEL with the
// whole budget burned (or 0), and any larger budget gives the same answer.
func TestFuelSweep(t *testing.T) {
	t.Parallel()
	for _, c := range loadCases(t) {
		if c.hasName || c.Error != nil || c.Fuel != nil {
			continue
		}
		need := int(*c.Burn)
		want := mustEncode(t, c.Value)
		for _, budget := range []int{need, need + 1, need * 3, MaxFuel} {
			v, burn, err := Run(c.Program, c.Env, budget)
			if err != nil || burn != need || mustEncode(t, v) != want {
				t.Fatalf("%s: budget %d gave %v/%d/%v", c.Name, budget, v, burn, err)
			}
		}
		_, burn, err := Run(c.Program, c.Env, need-1)
		if e, ok := err.(*fault.Error); !ok || e.Code != CodeFuel || burn > need-1 {
			t.Fatalf("%s: budget %d gave burn %d err %v, want EXPR_FUEL", c.Name, need-1, burn, err)
		}
	}
}

func TestCasesFileIsCanonicalData(t *testing.T) {
	t.Parallel()
	// The cases file must stay parseable by the strict parser (no
	// duplicate keys, valid UTF-8): a silent last-wins key would hide a case.
	data, err := os.ReadFile("testdata/cases.json")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := canon.Parse(data, 0); err != nil {
		t.Fatal(err)
	}
}
