package expr

import (
	"testing"

	"github.com/google/cel-go/cel"

	"github.com/algal-assay/assay/engine/canon"
	aexpr "github.com/algal-assay/assay/engine/expr"
)

// workload is one program written twice: as an algal.expr.v1 program and
// as the equivalent CEL expression, evaluated against the same env.
type workload struct {
	name string
	expr string // algal program, JSON
	cel  string
	env  map[string]any
	// want is the expected result, canonical JSON, checked once for both
	// evaluators so the comparison is between equal computations.
	want string
}

func numbers(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = float64(i)
	}
	return out
}

func deepDoc() map[string]any {
	return map[string]any{"a": map[string]any{"b": map[string]any{"c": map[string]any{
		"d": map[string]any{"e": map[string]any{"f": []any{0.0, map[string]any{"g": "leaf"}}}}}}}}
}

var workloads = []workload{
	{
		name: "arithmetic",
		expr: `["sub",["add",["mul",["get","a"],3],["div",["get","b"],2]],["mod",["get","a"],4]]`,
		cel:  `a * 3.0 + b / 2.0 - double(int(a) % 4)`,
		env:  map[string]any{"a": 7.0, "b": 10.0},
		want: `23`,
	},
	{
		name: "string_concat",
		expr: `["sconcat",["get","first"]," ",["get","last"],"!"]`,
		cel:  `first + " " + last + "!"`,
		env:  map[string]any{"first": "Ada", "last": "Lovelace"},
		want: `"Ada Lovelace!"`,
	},
	{
		name: "map_filter_100",
		expr: `["map",["filter",["get","xs"],"x",["gt",["get","x"],49]],"y",["mul",["get","y"],2]]`,
		cel:  `xs.filter(x, x > 49.0).map(y, y * 2.0)`,
		env:  map[string]any{"xs": numbers(100)},
	},
	{
		name: "nested_let_if",
		expr: `["let","s",["add",["get","a"],["get","b"]],["let","d",["sub",["get","a"],["get","b"]],["if",["gt",["get","s"],10],["if",["lt",["get","d"],0],"neg-big","pos-big"],"small"]]]`,
		cel:  `cel.bind(s, a + b, cel.bind(d, a - b, s > 10.0 ? (d < 0.0 ? "neg-big" : "pos-big") : "small"))`,
		env:  map[string]any{"a": 3.0, "b": 9.0},
		want: `"neg-big"`,
	},
	{
		name: "deep_get",
		expr: `["get","doc","a","b","c","d","e","f",1,"g"]`,
		cel:  `doc.a.b.c.d.e.f[1].g`,
		env:  map[string]any{"doc": deepDoc()},
		want: `"leaf"`,
	},
}

func compileAlgal(b *testing.B, w workload) *aexpr.Program {
	b.Helper()
	prog, err := canon.Parse([]byte(w.expr), 0)
	if err != nil {
		b.Fatal(err)
	}
	names := make([]string, 0, len(w.env))
	for k := range w.env {
		names = append(names, k)
	}
	p, err := aexpr.Compile(prog, names)
	if err != nil {
		b.Fatal(err)
	}
	return p
}

func compileCEL(b *testing.B, w workload) cel.Program {
	b.Helper()
	var opts []cel.EnvOption
	opts = append(opts, cel.OptionalTypes())
	for k, v := range w.env {
		switch v.(type) {
		case float64:
			opts = append(opts, cel.Variable(k, cel.DoubleType))
		case string:
			opts = append(opts, cel.Variable(k, cel.StringType))
		case []any:
			opts = append(opts, cel.Variable(k, cel.ListType(cel.DoubleType)))
		default:
			opts = append(opts, cel.Variable(k, cel.MapType(cel.StringType, cel.DynType)))
		}
	}
	env, err := cel.NewEnv(append(opts, celBindings())...)
	if err != nil {
		b.Fatal(err)
	}
	ast, iss := env.Compile(w.cel)
	if iss.Err() != nil {
		b.Fatal(iss.Err())
	}
	p, err := env.Program(ast, cel.EvalOptions(cel.OptOptimize))
	if err != nil {
		b.Fatal(err)
	}
	return p
}

func expectedFor(w workload) string {
	if w.want != "" {
		return w.want
	}
	// map_filter_100: 50..99 doubled.
	out := make([]any, 0, 50)
	for i := 50; i < 100; i++ {
		out = append(out, float64(2*i))
	}
	b, _ := canon.Encode(out)
	return string(b)
}

func BenchmarkAlgal(b *testing.B) {
	for _, w := range workloads {
		p := compileAlgal(b, w)
		b.Run(w.name, func(b *testing.B) {
			v, _, err := p.Eval(w.env, aexpr.DefaultFuel)
			if err != nil {
				b.Fatal(err)
			}
			if got, _ := canon.Encode(v); string(got) != expectedFor(w) {
				b.Fatalf("algal result %s, want %s", got, expectedFor(w))
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, _, err := p.Eval(w.env, aexpr.DefaultFuel); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkAlgalAdmitted evaluates over an env admitted once (expr.Admit),
// the shape a scorer and its axes share for one case: the per-call env
// scan is excluded, the fuel meter, bounds and output checks are not.
func BenchmarkAlgalAdmitted(b *testing.B) {
	for _, w := range workloads {
		p := compileAlgal(b, w)
		env, err := aexpr.Admit(w.env)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(w.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, _, err := p.EvalEnv(env, aexpr.DefaultFuel); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkCEL(b *testing.B) {
	for _, w := range workloads {
		p := compileCEL(b, w)
		b.Run(w.name, func(b *testing.B) {
			out, _, err := p.Eval(w.env)
			if err != nil {
				b.Fatal(err)
			}
			native, err := out.ConvertToNative(anyType)
			if err != nil {
				b.Fatal(err)
			}
			if got, _ := canon.Encode(normalize(native)); string(got) != expectedFor(w) {
				b.Fatalf("cel result %s, want %s", got, expectedFor(w))
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, _, err := p.Eval(w.env); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
