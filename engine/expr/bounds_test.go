package expr

import (
	"fmt"
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
)

func nest(n int, inner any, wrap func(any) any) any {
	v := inner
	for i := 0; i < n; i++ {
		v = wrap(v)
	}
	return v
}

func listOf(n int, f func(int) any) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = f(i)
	}
	return out
}

func objOf(n int, prefix string) map[string]any {
	m := make(map[string]any, n)
	for i := 0; i < n; i++ {
		m[fmt.Sprintf("%s%04d", prefix, i)] = float64(i)
	}
	return m
}

func wrapList(v any) any { return []any{v} }

type boundCase struct {
	name    string
	program any
	env     map[string]any
	fuel    int
	value   any    // expected value when code == ""
	code    string // expected error code
	what    string // expected "what" detail for EXPR_BOUNDS
	burn    int
}

func runBoundCases(t *testing.T, cases []boundCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fuel := c.fuel
			if fuel == 0 {
				fuel = MaxFuel
			}
			v, burn, err := Run(c.program, c.env, fuel)
			if c.code == "" {
				if err != nil {
					t.Fatalf("error %v, want value", err)
				}
				if got, want := mustEncode(t, v), mustEncode(t, c.value); got != want {
					t.Fatalf("value %.80s, want %.80s", got, want)
				}
			} else {
				e, ok := err.(*fault.Error)
				if !ok {
					t.Fatalf("got %v (%v), want %s", err, v, c.code)
				}
				if e.Code != c.code || (c.what != "" && e.Details["what"] != c.what) {
					t.Fatalf("error %s, want %s %s", e.Message, c.code, c.what)
				}
				if c.code == CodeBounds {
					if _, ok := e.Details["max"].(float64); !ok {
						t.Fatalf("bounds error without max: %s", e.Message)
					}
				}
			}
			if burn != c.burn {
				t.Fatalf("burn %d, want %d", burn, c.burn)
			}
		})
	}
}

func TestProgramBounds(t *testing.T) {
	t.Parallel()
	// A string literal's canonical size is its length + 2 quotes.
	atBytes := strings.Repeat("a", MaxProgramBytes-2)
	listArgs := func(n int) any {
		return append([]any{"list"}, listOf(n, func(i int) any { return float64(i % 10) })...)
	}
	not := func(v any) any { return []any{"not", v} }
	runBoundCases(t, []boundCase{
		{name: "program-bytes at max", program: atBytes, value: atBytes, burn: 1},
		{name: "program-bytes over", program: atBytes + "a", code: CodeBounds, what: "program-bytes"},
		{name: "program-nodes at max", program: listArgs(510), value: listOf(510, func(i int) any { return float64(i % 10) }), burn: 511},
		{name: "program-nodes over", program: listArgs(511), code: CodeBounds, what: "program-nodes"},
		{name: "program-depth at max", program: nest(15, true, not), value: false, burn: 16},
		{name: "program-depth over", program: nest(16, true, not), code: CodeBounds, what: "program-depth"},
		{name: "quote payload has no program depth", program: []any{"quote", nest(20, 1.0, wrapList)}, value: nest(20, 1.0, wrapList), burn: 1},
		{name: "bytes checked before nodes", program: append([]any{"list"}, listOf(600, func(int) any { return "abcdefghijklmnopqrstuvwxyz" })...), code: CodeBounds, what: "program-bytes"},
		{name: "nodes checked before depth", program: append([]any{"list", nest(20, 1.0, not)}, listOf(520, func(int) any { return 1.0 })...), code: CodeBounds, what: "program-nodes"},
	})
}

func TestEnvBounds(t *testing.T) {
	t.Parallel()
	// {"l":[s1,...,sk]} has canonical size 2 + 4 + (2 + k-1) + sum(len+2).
	strs := func(total int) []any {
		var out []any
		for total > 0 {
			n := min(total, MaxStringBytes)
			out = append(out, strings.Repeat("x", n))
			total -= n
		}
		return out
	}
	envOfSize := func(size int) map[string]any {
		for k := 1; ; k++ {
			payload := size - 6 - (2 + k - 1) - 2*k
			if payload <= k*MaxStringBytes {
				l := strs(payload)
				if len(l) == k {
					return map[string]any{"l": l}
				}
			}
		}
	}
	for _, size := range []int{MaxEnvBytes, MaxEnvBytes + 1} {
		if got := len(mustEncode(t, envOfSize(size))); got != size {
			t.Fatalf("env builder made %d bytes, want %d", got, size)
		}
	}
	lenL := []any{"len", []any{"get", "l"}}
	isList := []any{"isList", []any{"get", "l"}}
	deep31 := nest(30, []any{}, wrapList) // value_depth 31
	runBoundCases(t, []boundCase{
		{name: "env-bytes at max", program: isList, env: envOfSize(MaxEnvBytes), value: true, burn: 5},
		{name: "env-bytes over", program: isList, env: envOfSize(MaxEnvBytes + 1), code: CodeBounds, what: "env-bytes"},
		{name: "env keys at max", program: 1.0, env: objOf(256, "k"), value: 1.0, burn: 1},
		{name: "env keys over", program: 1.0, env: objOf(257, "k"), code: CodeBounds, what: "object-keys"},
		{name: "env depth at max", program: 1.0, env: map[string]any{"d": deep31}, value: 1.0, burn: 1},
		{name: "env depth over", program: 1.0, env: map[string]any{"d": wrapList(deep31)}, code: CodeBounds, what: "value-depth"},
		{name: "env list at max", program: lenL, env: map[string]any{"l": listOf(1024, func(int) any { return 1.0 })}, value: 1024.0, burn: 6},
		{name: "env list over", program: lenL, env: map[string]any{"l": listOf(1025, func(int) any { return 1.0 })}, code: CodeBounds, what: "list-len"},
		{name: "env nested object over", program: 1.0, env: map[string]any{"o": objOf(257, "k")}, code: CodeBounds, what: "object-keys"},
		{name: "env string at max", program: 1.0, env: map[string]any{"s": strings.Repeat("x", MaxStringBytes)}, value: 1.0, burn: 1},
		{name: "env string over", program: 1.0, env: map[string]any{"s": strings.Repeat("x", MaxStringBytes+1)}, code: CodeBounds, what: "string-bytes"},
		{name: "env walk in key byte order", program: 1.0, env: map[string]any{
			"b": strings.Repeat("x", MaxStringBytes+1), "a": listOf(1025, func(int) any { return nil })}, code: CodeBounds, what: "list-len"},
		{name: "env checked before static", program: []any{"bogus"}, env: objOf(257, "k"), code: CodeBounds, what: "object-keys"},
		{name: "static before budget", program: []any{"bogus"}, fuel: MaxFuel + 1, code: CodeOp},
	})
}

func TestEvalBounds(t *testing.T) {
	t.Parallel()
	s65536 := strings.Repeat("s", MaxStringBytes)
	l1024 := listOf(1024, func(int) any { return 1.0 })
	get := func(n string) any { return []any{"get", n} }
	quoteList := func(v any) any { return []any{"quote", v} }
	commas := func(n int) string { return strings.Repeat(",", n) }
	deepD := nest(31, 1.0, wrapList) // scalar at position 31
	runBoundCases(t, []boundCase{
		{name: "object literal 257 keys burns 1", program: objOf(257, "k"), code: CodeBounds, what: "object-keys", burn: 1},
		{name: "object literal 256 keys", program: []any{"len", []any{"keys", objOf(256, "k")}}, value: 256.0, burn: 2 + 2 + 1 + 256},
		{name: "concat at max", program: []any{"len", []any{"concat", get("l"), quoteList([]any{})}}, env: map[string]any{"l": l1024}, value: 1024.0, burn: 2 + 2 + 4 + 1 + 1024},
		{name: "concat over charges first", program: []any{"concat", get("l"), quoteList([]any{1.0})}, env: map[string]any{"l": l1024}, code: CodeBounds, what: "list-len", burn: 2 + 4 + 1 + 1025},
		{name: "flat over charges first", program: []any{"flat", get("ll")}, env: map[string]any{"ll": []any{l1024, []any{1.0}}}, code: CodeBounds, what: "list-len", burn: 2 + 4 + 1025},
		{name: "split at max parts", program: []any{"len", []any{"split", commas(1023), ","}}, value: 1024.0, burn: 2 + 2 + 1 + 1 + 1023 + 1024},
		{name: "split over parts", program: []any{"split", commas(1024), ","}, code: CodeBounds, what: "list-len", burn: 2 + 1 + 1 + 1024},
		{name: "merge over keys", program: []any{"merge", get("a"), get("b")}, env: map[string]any{"a": objOf(200, "a"), "b": objOf(57, "b")}, code: CodeBounds, what: "object-keys", burn: 2 + 4 + 4 + 200 + 57},
		{name: "merge at max keys", program: []any{"len", []any{"keys", []any{"merge", get("a"), get("b")}}}, env: map[string]any{"a": objOf(200, "a"), "b": objOf(56, "b")}, value: 256.0, burn: 2 + 2 + 2 + 4 + 4 + 256},
		{name: "sconcat at max", program: []any{"slen", []any{"sconcat", get("s")}}, env: map[string]any{"s": s65536}, value: 65536.0, burn: 2 + 2 + 4 + 65536},
		{name: "sconcat over before charge", program: []any{"sconcat", get("s"), "x"}, env: map[string]any{"s": s65536}, code: CodeBounds, what: "string-bytes", burn: 2 + 4 + 1},
		{name: "join over before charge", program: []any{"join", get("l"), "x"}, env: map[string]any{"l": []any{s65536, ""}}, code: CodeBounds, what: "string-bytes", burn: 2 + 4 + 1},
		{name: "toText at max", program: []any{"slen", []any{"toText", get("s")}}, env: map[string]any{"s": s65536[:65534]}, value: 65536.0, burn: 2 + 2 + 4 + 65536},
		{name: "toText over after charge", program: []any{"toText", get("s")}, env: map[string]any{"s": s65536[:65535]}, code: CodeBounds, what: "string-bytes", burn: 2 + 4 + 65537},
		{name: "upper charges bytes", program: []any{"slen", []any{"upper", get("s")}}, env: map[string]any{"s": s65536}, value: 65536.0, burn: 2 + 2 + 4 + 65536},
		{name: "eval_args value-bytes", program: []any{"list", get("s"), get("s"), get("s"), get("s")}, env: map[string]any{"s": s65536}, code: CodeBounds, what: "value-bytes", burn: 1 + 16},
		{name: "eval_args under value-bytes", program: []any{"len", []any{"list", get("s"), get("s"), get("s")}}, env: map[string]any{"s": s65536}, value: 3.0, burn: 2 + 1 + 12},
		{name: "eval_args stops before later args", program: []any{"add", get("s"), get("s"), get("s"), get("s"), []any{"div", 1.0, 0.0}}, env: map[string]any{"s": s65536}, code: CodeBounds, what: "value-bytes", burn: 2 + 16},
		{name: "object literal value-bytes", program: map[string]any{"a": get("s"), "b": get("s"), "c": get("s"), "d": get("s")}, env: map[string]any{"s": s65536}, code: CodeBounds, what: "value-bytes", burn: 1 + 16},
		{name: "map value-bytes", program: []any{"map", quoteList([]any{1.0, 2.0, 3.0, 4.0}), "x", get("s")}, env: map[string]any{"s": s65536}, code: CodeBounds, what: "value-bytes", burn: 2 + 1 + 4*5},
		{name: "quote depth at max", program: quoteList(nest(32, 1.0, wrapList)), value: nest(32, 1.0, wrapList), burn: 1},
		{name: "quote depth over", program: quoteList(nest(33, 1.0, wrapList)), code: CodeBounds, what: "value-depth", burn: 1},
		{name: "output depth over, walk passes", program: quoteList(nest(33, []any{}, wrapList)), code: CodeBounds, what: "value-depth", burn: 1},
		{name: "list shifts depth ok", program: []any{"list", get("d")}, env: map[string]any{"d": deepD}, value: wrapList(deepD), burn: 5},
		{name: "list shifts depth over", program: []any{"list", []any{"list", get("d")}}, env: map[string]any{"d": deepD}, code: CodeBounds, what: "value-depth", burn: 6},
		{name: "object literal depth over", program: map[string]any{"a": map[string]any{"b": get("d")}}, env: map[string]any{"d": deepD}, code: CodeBounds, what: "value-depth", burn: 6},
		{name: "map depth over", program: []any{"map", quoteList([]any{1.0}), "x", []any{"list", get("d")}}, env: map[string]any{"d": deepD}, code: CodeBounds, what: "value-depth", burn: 2 + 1 + 1 + 5},
		{name: "output bytes at max", program: []any{"sconcat", get("s")}, env: map[string]any{"s": s65536[:65534]}, value: s65536[:65534], burn: 2 + 4 + 65534},
		{name: "output bytes over keeps burn", program: []any{"sconcat", get("s")}, env: map[string]any{"s": s65536[:65535]}, code: CodeBounds, what: "output-bytes", burn: 2 + 4 + 65535},
	})
}

func TestFoldDoublingBurn(t *testing.T) {
	t.Parallel()
	// sconcat of acc with itself doubles a 10-byte string: 10, 20, ...
	// 10*2^13 = 81920 > 65536 fails string-bytes on the 13th step. Each
	// step burns 1 + sconcat(2 + 4 + 4 + bytes) until the failing one,
	// which burns 1 + 2 + 4 + 4 and no byte charge.
	burn := 2 + 1 + 1 // fold, quote, init literal
	size := 10
	for step := 1; ; step++ {
		burn += 1 + 2 + 4 + 4
		if 2*size > MaxStringBytes {
			break
		}
		size *= 2
		burn += size
	}
	prog := []any{"fold", []any{"quote", listOf(20, func(int) any { return 0.0 })}, "abcdefghij", "acc", "it",
		[]any{"sconcat", []any{"get", "acc"}, []any{"get", "acc"}}}
	_, got, err := Run(prog, nil, MaxFuel)
	if e, ok := err.(*fault.Error); !ok || e.Details["what"] != "string-bytes" || got != burn {
		t.Fatalf("got burn %d err %v, want string-bytes burn %d", got, err, burn)
	}
}

// TestListDoublingValueBytes makes fold double a list accumulator
// (["list",acc,acc]) so value-bytes, not output, stops it.
func TestListDoublingValueBytes(t *testing.T) {
	t.Parallel()
	prog := []any{"fold", []any{"quote", listOf(30, func(int) any { return 0.0 })}, []any{"get", "s"}, "acc", "it",
		[]any{"concat", []any{"list", []any{"get", "acc"}}, []any{"list", []any{"get", "acc"}}}}
	_, _, err := Run(prog, map[string]any{"s": strings.Repeat("y", 60000)}, MaxFuel)
	if e, ok := err.(*fault.Error); !ok || e.Details["what"] != "value-bytes" {
		t.Fatalf("got %v, want value-bytes", err)
	}
}

func TestNonJSONInputs(t *testing.T) {
	t.Parallel()
	cyc := []any{nil}
	cyc[0] = cyc
	for name, c := range map[string]struct {
		program any
		env     map[string]any
	}{
		"program int":        {program: 1},
		"program NaN":        {program: nanValue()},
		"program bad utf8":   {program: "\xff"},
		"program cycle":      {program: cyc},
		"env map[string]int": {program: 1.0, env: map[string]any{"x": map[string]int{}}},
		"env cycle":          {program: 1.0, env: map[string]any{"x": cyc}},
	} {
		_, burn, err := Run(c.program, c.env, 100)
		e, ok := err.(*fault.Error)
		if !ok || burn != 0 || (e.Code != CodeParse && e.Code != CodeBounds) {
			t.Errorf("%s: got %v burn %d", name, err, burn)
		}
	}
}

func nanValue() any { z := 0.0; return z / z }

func TestErrorRendering(t *testing.T) {
	t.Parallel()
	_, _, err := Run([]any{"add", 1.0, "x"}, nil, 100)
	const want = `{"arg":1,"code":"EXPR_TYPE","got":"text","op":"add","want":"number"}`
	if Canonical(err) != want || err.Error() != want {
		t.Fatalf("canonical %q, want %q", Canonical(err), want)
	}
	if fault.CodeOf(err) != CodeType {
		t.Fatalf("ErrorCode missing: %v", err)
	}
	if b, _ := canon.Encode(ErrorJSON(err.(*fault.Error))); string(b) != want {
		t.Fatalf("JSON() renders %s", b)
	}
}

func TestOpsListed(t *testing.T) {
	t.Parallel()
	ops := Ops()
	if len(ops) != 61 {
		t.Fatalf("%d ops, want 61: %v", len(ops), ops)
	}
	for _, op := range ops {
		// Every op compiles at its minimum arity with literal args.
		spec := opTable[op]
		prog := []any{op}
		for i := 0; i < spec.min; i++ {
			prog = append(prog, "x")
		}
		err := Check(prog, []string{"x"})
		if e, ok := err.(*fault.Error); ok && e.Code != CodeParse {
			t.Errorf("%s: %v", op, err)
		}
	}
}

func TestAdmitThenEvalEnv(t *testing.T) {
	t.Parallel()
	p, err := Compile([]any{"get", "x", "k"}, []string{"x"})
	if err != nil {
		t.Fatal(err)
	}
	env, err := Admit(map[string]any{"x": map[string]any{"k": "v"}})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ { // an admitted env serves many evaluations
		v, burn, err := p.EvalEnv(env, 100)
		if err != nil || v != "v" || burn != 6 {
			t.Fatalf("EvalEnv = %v, %d, %v", v, burn, err)
		}
	}
	if _, err := Admit(map[string]any{"l": listOf(1025, func(int) any { return nil })}); Canonical(err) != `{"code":"EXPR_BOUNDS","max":1024,"what":"list-len"}` {
		t.Fatalf("Admit over-long list: %v", err)
	}
	// A declared name missing from the env fails at run time, not compile time.
	_, burn, err := p.EvalEnv(nil, 100)
	if Canonical(err) != `{"code":"EXPR_PATH","op":"get","what":"unbound name \"x\""}` || burn != 5 {
		t.Fatalf("missing declared name: %v burn %d", err, burn)
	}
	if _, _, err := p.EvalEnv(env, MaxFuel+1); Canonical(err) != `{"code":"EXPR_BOUNDS","max":1000000,"what":"fuel budget must be an integer in [0, 1000000]"}` {
		t.Fatalf("budget: %v", err)
	}
}

func TestBinaryArgsValueBytes(t *testing.T) {
	t.Parallel()
	// Two copies of a ~200 KB list overflow eq's running argument total
	// before eq charges its node counts.
	big := listOf(1000, func(int) any { return strings.Repeat("z", 190) })
	_, burn, err := Run([]any{"eq", []any{"get", "l"}, []any{"get", "l"}}, map[string]any{"l": big}, MaxFuel)
	if Canonical(err) != `{"code":"EXPR_BOUNDS","max":262144,"what":"value-bytes"}` || burn != 2+4+4 {
		t.Fatalf("got %v burn %d", err, burn)
	}
}
