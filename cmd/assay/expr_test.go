package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runExpr(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func TestExprEval(t *testing.T) {
	dir := t.TempDir()
	prog := filepath.Join(dir, "p.json")
	env := filepath.Join(dir, "e.json")
	if err := os.WriteFile(prog, []byte(`["fold",["get","xs"],0,"acc","it",["add",["get","acc"],["get","it"]]]`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(env, []byte(`{"xs":[1,2,3]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		code int
		out  string
	}{
		{"inline value", []string{"expr", "eval", "--program", `["add",1,2]`}, 0, `{"burn":4,"value":3}`},
		{"files", []string{"expr", "eval", "--program", "@" + prog, "--env", "@" + env}, 0, `{"burn":40,"value":6}`},
		{"inline env", []string{"expr", "eval", "--program", `["get","x","k"]`, "--env", `{"x":{"k":"v"}}`}, 0, `{"burn":6,"value":"v"}`},
		{"eval error", []string{"expr", "eval", "--program", `["div",1,0]`}, 1,
			`{"burn":4,"error":{"code":"EXPR_DIV_ZERO","message":"{\"code\":\"EXPR_DIV_ZERO\",\"op\":\"div\"}"}}`},
		{"fuel exhausted", []string{"expr", "eval", "--program", `["add",1,2]`, "--fuel", "3"}, 1,
			`{"burn":3,"error":{"code":"EXPR_FUEL","message":"{\"code\":\"EXPR_FUEL\",\"cost\":1,\"left\":0}"}}`},
		{"fuel not integer", []string{"expr", "eval", "--program", `1`, "--fuel", "1e4"}, 1,
			`{"burn":0,"error":{"code":"EXPR_BOUNDS","message":"{\"code\":\"EXPR_BOUNDS\",\"max\":1000000,\"what\":\"fuel budget must be an integer in [0, 1000000]\"}"}}`},
		{"fuel over ceiling after static", []string{"expr", "eval", "--program", `["bogus"]`, "--fuel", "99999999999999999999"}, 1,
			`{"burn":0,"error":{"code":"EXPR_OP","message":"{\"code\":\"EXPR_OP\",\"op\":\"bogus\"}"}}`},
		{"static unbound", []string{"expr", "eval", "--program", `["get","y"]`, "--env", `{"x":1}`}, 1,
			`{"burn":0,"error":{"code":"EXPR_PATH","message":"{\"code\":\"EXPR_PATH\",\"op\":\"get\",\"what\":\"unbound name \\\"y\\\"\"}"}}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := runExpr(t, c.args...)
			if code != c.code || strings.TrimSpace(out) != c.out {
				t.Fatalf("exit %d out %s err %s\nwant exit %d out %s", code, out, errs, c.code, c.out)
			}
		})
	}
}

func TestExprEvalRejectsBadInput(t *testing.T) {
	code, out, _ := runExpr(t, "expr", "eval", "--program", `["add",1`)
	if code != 1 || !strings.Contains(out, `"code":"EXPR_PARSE"`) || !strings.Contains(out, `"burn":0`) {
		t.Fatalf("bad JSON: exit %d out %s", code, out)
	}
	code, out, _ = runExpr(t, "expr", "eval", "--program", `1`, "--env", `[1]`)
	if code != 1 || !strings.Contains(out, "--env must be a JSON object") {
		t.Fatalf("non-object env: exit %d out %s", code, out)
	}
	code, out, _ = runExpr(t, "expr", "eval", "--program", `@/nonexistent/p.json`)
	if code != 1 || !strings.Contains(out, `"code":"EXPR_PARSE"`) {
		t.Fatalf("missing file: exit %d out %s", code, out)
	}
	if code, _, _ := runExpr(t, "expr", "eval"); code != 2 {
		t.Fatalf("missing --program: exit %d, want 2", code)
	}
}

func TestExprCheck(t *testing.T) {
	dir := t.TempDir()
	names := filepath.Join(dir, "names.json")
	if err := os.WriteFile(names, []byte(`["a",7,"b"]`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		code int
		out  string
	}{
		{"ok with names", []string{"expr", "check", "--program", `["add",["get","a"],["get","b"]]`, "--names", "a,b"}, 0, `{"ok":true}`},
		{"names file", []string{"expr", "check", "--program", `["add",["get","a"],["get","b"]]`, "--names", "@" + names}, 0, `{"ok":true}`},
		{"unbound", []string{"expr", "check", "--program", `["get","c"]`, "--names", "a,b"}, 1,
			`{"error":{"code":"EXPR_PATH","message":"{\"code\":\"EXPR_PATH\",\"op\":\"get\",\"what\":\"unbound name \\\"c\\\"\"}"}}`},
		{"arity", []string{"expr", "check", "--program", `["if",true]`}, 1,
			`{"error":{"code":"EXPR_ARITY","message":"{\"code\":\"EXPR_ARITY\",\"got\":1,\"op\":\"if\",\"want\":\"3..3\"}"}}`},
		{"binder in scope", []string{"expr", "check", "--program", `["map",["quote",[1]],"x",["get","x"]]`}, 0, `{"ok":true}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := runExpr(t, c.args...)
			if code != c.code || strings.TrimSpace(out) != c.out {
				t.Fatalf("exit %d out %s err %s\nwant exit %d out %s", code, out, errs, c.code, c.out)
			}
		})
	}
}

func TestExprHelpNamesDefaultFuel(t *testing.T) {
	code, out, _ := runExpr(t, "expr", "eval", "--help")
	if code != 0 || !strings.Contains(out, "10000") || !strings.Contains(out, "1000000") {
		t.Fatalf("help: exit %d out %s", code, out)
	}
}
