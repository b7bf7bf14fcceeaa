package expr

import (
	"testing"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
)

var knownCodes = map[string]bool{
	CodeParse: true, CodeOp: true, CodeArity: true, CodeType: true, CodePath: true,
	CodeArg: true, CodeNum: true, CodeDivZero: true, CodeBounds: true, CodeFuel: true,
}

// FuzzEval feeds arbitrary (program, env, fuel) triples to the evaluator:
// it must never panic, every failure must carry a code from the closed set,
// burn never exceeds the budget, a repeat run is identical, and the
// compile-once path agrees with the run pipeline.
func FuzzEval(f *testing.F) {
	seeds := []struct {
		p, env string
		fuel   uint32
	}{
		{`["add",1,2]`, `{}`, 10000},
		{`["fold",["get","xs"],0,"acc","it",["add",["get","acc"],["get","it"]]]`, `{"xs":[1,2,3]}`, 100},
		{`["map",["get","xs"],"x",["list",["get","x"],["toText",["get","x"]]]]`, `{"xs":[1,"a",null,{"k":[]}]}`, 500},
		{`["sort",["concat",["get","a"],["quote",[{"b":1},[2],"z",true]]]]`, `{"a":[3,1,null]}`, 1000},
		{`["get",["sconcat","a","b"],"k",0]`, `{"ab":{"k":[9]}}`, 50},
		{`{"x":["unique",["split","a,b,a",","]],"y":["merge",{"a":1},["get","m"]]}`, `{"m":{"b":2}}`, 300},
		{`["let","v",["quote",[[[[1]]]]],["flat",["get","v"]]]`, `{}`, 20},
		{`["if",["lt","😀","\uffff"],["round",2.5],["clamp",1,3,0]]`, `{}`, 30},
		{`["join",["map",["quote",[1,2]],"i",["upper",["toText",["get","i"]]]],"-"]`, `{}`, 200},
		{`["nth",["get","l"],["neg",0]]`, `{"l":[]}`, 10},
	}
	for _, s := range seeds {
		f.Add(s.p, s.env, s.fuel)
	}
	f.Fuzz(func(t *testing.T, progText, envText string, fuelIn uint32) {
		program, err := canon.Parse([]byte(progText), 1<<16)
		if err != nil {
			return
		}
		env := map[string]any{}
		if envText != "" {
			e, err := canon.Parse([]byte(envText), 1<<18)
			if err != nil {
				return
			}
			m, ok := e.(map[string]any)
			if !ok {
				return
			}
			env = m
		}
		fuel := int(fuelIn % 200_000)
		v1, b1, e1 := Run(program, env, fuel)
		v2, b2, e2 := Run(program, env, fuel)
		r1, r2 := render(t, v1, e1), render(t, v2, e2)
		if r1 != r2 || b1 != b2 {
			t.Fatalf("nondeterministic: %s/%d vs %s/%d", r1, b1, r2, b2)
		}
		if b1 < 0 || b1 > fuel {
			t.Fatalf("burn %d outside [0, %d]", b1, fuel)
		}
		if e1 != nil {
			e, ok := e1.(*fault.Error)
			if !ok || !knownCodes[e.Code] {
				t.Fatalf("error %v (%T) is not a closed-set *fault.Error", e1, e1)
			}
			if e.Code == CodeFuel && b1 > fuel {
				t.Fatalf("fuel error burned %d > %d", b1, fuel)
			}
		} else if _, err := canon.Encode(v1); err != nil {
			t.Fatalf("result has no canonical form: %v", err)
		}
		names := make([]string, 0, len(env))
		for k := range env {
			names = append(names, k)
		}
		if p, err := Compile(program, names); err == nil {
			v3, b3, e3 := p.Eval(env, fuel)
			if r3 := render(t, v3, e3); r3 != r1 || b3 != b1 {
				t.Fatalf("Eval %s/%d disagrees with Run %s/%d", r3, b3, r1, b1)
			}
		} else if e1 == nil || b1 != 0 {
			t.Fatalf("Compile failed (%v) but Run gave %s/%d", err, r1, b1)
		}
	})
}

func render(t *testing.T, v any, err error) string {
	if err != nil {
		return "error " + Canonical(err)
	}
	b, e := canon.Encode(v)
	if e != nil {
		t.Fatalf("encode result: %v", e)
	}
	return string(b)
}
