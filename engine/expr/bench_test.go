package expr

import (
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/fault"
)

// BenchmarkEvalOps measures evaluation only (compile excluded) for one
// program per op family, with env admission included as Eval does it.
func BenchmarkEvalOps(b *testing.B) {
	xs := listOf(100, func(i int) any { return float64(i) })
	env := map[string]any{"xs": xs, "s": "Hello, World", "o": objOf(20, "k")}
	for _, c := range []struct {
		name string
		prog any
	}{
		{"arith", []any{"add", []any{"mul", 3.0, 4.0}, []any{"div", 10.0, 4.0}}},
		{"fold100", []any{"fold", []any{"get", "xs"}, 0.0, "a", "x", []any{"add", []any{"get", "a"}, []any{"get", "x"}}}},
		{"text", []any{"upper", []any{"sconcat", []any{"get", "s"}, "!"}}},
		{"sort100", []any{"sort", []any{"reverse", []any{"get", "xs"}}}},
		{"keys", []any{"len", []any{"keys", []any{"get", "o"}}}},
	} {
		p, err := Compile(c.prog, []string{"xs", "s", "o"})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, _, err := p.Eval(env, DefaultFuel); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkStringCompareFold is the worst program per fuel unit found so
// far (issue 15): eq/lt of two 64 KiB env strings inside nested folds,
// run until the 1,000,000 fuel budget is spent. Each comparison burns 11
// fuel (fold step 1, op 2, two gets of 4; eq adds its node charge of 2)
// while its operands hold 128 KiB of text, so the cost per fuel unit is
// the figure to watch; "add" is the same fold with a cheap body.
func BenchmarkStringCompareFold(b *testing.B) {
	s := strings.Repeat("abcdefgh", MaxStringBytes/8)
	t := s[:len(s)-1] + "i" // a separate copy that differs in the last byte
	env := map[string]any{"s": s, "t": t, "xs": listOf(MaxListLen, func(int) any { return 0.0 })}
	get := func(n string) any { return []any{"get", n} }
	for _, c := range []struct {
		name string
		body any
	}{
		{"eq", []any{"eq", get("s"), get("t")}},
		{"lt", []any{"lt", get("s"), get("t")}},
		{"slen", []any{"slen", get("s")}},
		{"add", []any{"add", get("a"), 1.0}},
	} {
		inner := []any{"fold", get("xs"), 0.0, "a", "x", c.body}
		prog := []any{"fold", get("xs"), 0.0, "b", "y", inner}
		p, err := Compile(prog, []string{"s", "t", "xs"})
		if err != nil {
			b.Fatal(err)
		}
		ad, err := Admit(env)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			burned := 0
			for i := 0; i < b.N; i++ {
				_, burn, err := p.EvalEnv(ad, MaxFuel)
				if fault.CodeOf(err) != CodeFuel {
					b.Fatalf("want EXPR_FUEL, got %v", err)
				}
				burned += burn
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(burned), "ns/fuel")
		})
	}
}
