package expr

import "testing"

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
