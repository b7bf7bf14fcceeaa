package expr

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestEvalArgumentsReadsEveryForm(t *testing.T) {
	t.Parallel()
	env := filepath.Join(t.TempDir(), "env.json")
	if err := os.WriteFile(env, []byte(`{"x":41}`), 0o644); err != nil {
		t.Fatal(err)
	}
	v, burn, err := EvalArguments(`@-`, "@"+env, "100", strings.NewReader(`["add",["get","x"],1]`))
	if err != nil || v != 42.0 || burn == 0 {
		t.Fatalf("eval: %v, %d, %v", v, burn, err)
	}
	got := ResultValue(v, burn, nil)
	if want := map[string]any{"burn": float64(burn), "value": 42.0}; !reflect.DeepEqual(got, want) {
		t.Errorf("result %v, want %v", got, want)
	}
}

// A non-object env and a budget that is no unsigned integer fail at
// once, with burn 0.
func TestEvalArgumentsRefusesBadArguments(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ env, fuel, code string }{
		{`[1]`, "10", CodeParse},
		{``, "-1", CodeBounds},
		{``, "ten", CodeBounds},
	} {
		_, burn, err := EvalArguments(`["add",1,2]`, c.env, c.fuel, nil)
		if ErrorCode(err) != c.code || burn != 0 {
			t.Errorf("env %q fuel %q: %v (burn %d), want %s", c.env, c.fuel, err, burn, c.code)
		}
		if e := ResultValue(nil, burn, err)["error"].(map[string]any); e["code"] != c.code {
			t.Errorf("error object %v", e)
		}
	}
}

func TestErrorValueCarriesTheHint(t *testing.T) {
	t.Parallel()
	err := Check([]any{"eqq", 1.0, 1.0}, nil)
	got := ErrorValue(err)
	if got["code"] == nil || got["message"] != Canonical(err) || !strings.HasPrefix(got["hint"].(string), "did you mean") {
		t.Errorf("error object %v", got)
	}
}
