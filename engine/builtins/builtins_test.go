package builtins

import (
	"slices"
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/internal/jsontest"
	"github.com/algal-assay/assay/engine/manifest"
)

// registry.rs invoke: the FN_FAILED messages are receipt data, so they
// must match byte for byte.
func TestBuiltinFailureMessages(t *testing.T) {
	t.Parallel()
	fns := Funcs()
	cases := []struct {
		fn   string
		in   string
		want string
	}{
		{"coalesce.v1", `{}`, "coalesce.v1: all inputs empty"},
		{"coalesce.v1", `{"a":null,"c":null}`, "coalesce.v1: all inputs empty"},
		{"assert.v1", `{"value":1,"expect":{"b":2}}`, `assert.v1: value 1 != expect {"b":2}`},
		{"inc.v1", `{"value":"x"}`, "inc.v1: value must be a finite number"},
		{"double.v1", `{"value":"x"}`, "double.v1 requires a number"},
		{"double.v1", `{"value":1e308}`, "double.v1 overflow"},
		{"not.v1", `{"value":1}`, "not.v1 requires a boolean"},
		{"push.v1", `{"list":1,"item":2}`, "push.v1: list must be an array"},
		{"pick.v1", `{"record":[],"field":"a"}`, "pick.v1: record must be an object"},
	}
	for _, c := range cases {
		_, _, err := fns[c.fn](obj(t, c.in))
		f, ok := fault.As(err)
		if !ok || f.Code != fault.FnFailed || f.Message != c.want {
			t.Errorf("%s(%s): got %v, want FN_FAILED %q", c.fn, c.in, err, c.want)
		}
	}
	// assert truncates each side to 200 characters, not bytes.
	long := strings.Repeat("é", 300)
	_, _, err := fns["assert.v1"](map[string]any{"value": long, "expect": "x"})
	wantMsg := `assert.v1: value "` + strings.Repeat("é", 199) + ` != expect "x"`
	if err == nil || err.(*fault.Error).Message != wantMsg {
		t.Errorf("assert truncation: %v", err)
	}
}

func parseJSON(t testing.TB, s string) any { t.Helper(); return jsontest.Parse(t, s) }

func obj(t testing.TB, s string) map[string]any { t.Helper(); return jsontest.Object(t, s) }

func enc(v any) string { return jsontest.Text(v) }

func want(t testing.TB, what string, got any, w string) { t.Helper(); jsontest.Want(t, what, got, w) }

// The manifest package types every builtin (ports, cost) and this package
// implements them: a name on one side only is a fn cell that admits and
// cannot run, or a body no manifest can reach.
func TestNamesMatchManifestSignatures(t *testing.T) {
	t.Parallel()
	impl, sigs := Names(), manifest.BuiltinNames()
	if !slices.Equal(impl, sigs) {
		t.Fatalf("implemented builtins %v, manifest signatures %v", impl, sigs)
	}
	for _, n := range impl {
		if _, ok := manifest.Builtin(n); !ok {
			t.Errorf("manifest.Builtin(%q) is missing", n)
		}
	}
	if len(impl) != 16 {
		t.Errorf("%d builtins, want the 16 of the native registry", len(impl))
	}
}
