package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/expr"
	"github.com/algal-assay/assay/engine/golden"
	"github.com/algal-assay/assay/engine/manifest"
)

// exprCase is one expr command line and its exit code and whole stdout.
type exprCase struct {
	name string
	args []string
	code int
	out  string
}

func runExprCases(t *testing.T, cases []exprCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := runCLI(t, c.args...)
			if code != c.code || strings.TrimSpace(out) != c.out {
				t.Fatalf("exit %d out %s err %s\nwant exit %d out %s", code, out, errs, c.code, c.out)
			}
		})
	}
}

func TestExprEval(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	prog := filepath.Join(dir, "p.json")
	env := filepath.Join(dir, "e.json")
	if err := os.WriteFile(prog, []byte(`["fold",["get","xs"],0,"acc","it",["add",["get","acc"],["get","it"]]]`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(env, []byte(`{"xs":[1,2,3]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	runExprCases(t, []exprCase{
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
	})
}

func TestExprEvalRejectsBadInput(t *testing.T) {
	t.Parallel()
	code, out, _ := runCLI(t, "expr", "eval", "--program", `["add",1`)
	if code != 1 || !strings.Contains(out, `"code":"EXPR_PARSE"`) || !strings.Contains(out, `"burn":0`) {
		t.Fatalf("bad JSON: exit %d out %s", code, out)
	}
	code, out, _ = runCLI(t, "expr", "eval", "--program", `1`, "--env", `[1]`)
	if code != 1 || !strings.Contains(out, "--env must be a JSON object") {
		t.Fatalf("non-object env: exit %d out %s", code, out)
	}
	code, out, _ = runCLI(t, "expr", "eval", "--program", `@/nonexistent/p.json`)
	if code != 1 || !strings.Contains(out, `"code":"EXPR_PARSE"`) {
		t.Fatalf("missing file: exit %d out %s", code, out)
	}
	if code, _, _ := runCLI(t, "expr", "eval"); code != 2 {
		t.Fatalf("missing --program: exit %d, want 2", code)
	}
}

func TestExprCheck(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	names := putFile(t, dir, "names.json", `["a",7,"b"]`)
	runExprCases(t, []exprCase{
		{"ok with names", []string{"expr", "check", "--program", `["add",["get","a"],["get","b"]]`, "--names", "a,b"}, 0, `{"ok":true}`},
		{"names file", []string{"expr", "check", "--program", `["add",["get","a"],["get","b"]]`, "--names", "@" + names}, 0, `{"ok":true}`},
		{"unbound", []string{"expr", "check", "--program", `["get","c"]`, "--names", "a,b"}, 1,
			`{"error":{"code":"EXPR_PATH","message":"{\"code\":\"EXPR_PATH\",\"op\":\"get\",\"what\":\"unbound name \\\"c\\\"\"}"}}`},
		{"arity", []string{"expr", "check", "--program", `["if",true]`}, 1,
			`{"error":{"code":"EXPR_ARITY","message":"{\"code\":\"EXPR_ARITY\",\"got\":1,\"op\":\"if\",\"want\":\"3..3\"}"}}`},
		{"binder in scope", []string{"expr", "check", "--program", `["map",["quote",[1]],"x",["get","x"]]`}, 0, `{"ok":true}`},
	})
}

func TestExprHelpNamesDefaultFuel(t *testing.T) {
	t.Parallel()
	code, out, _ := runCLI(t, "expr", "eval", "--help")
	if code != 0 || !strings.Contains(out, "10000") || !strings.Contains(out, "1000000") {
		t.Fatalf("help: exit %d out %s", code, out)
	}
}

// TestExprArgumentsBoundedBeforeParsing: a --program over its raw-text
// bound is refused with the contract's program-bytes bound before any
// parsing (2 MiB of "[" would otherwise fail the parser's depth limit),
// and --env likewise with env-bytes; text under the bound whose canonical
// form is small still runs.
func TestExprArgumentsBoundedBeforeParsing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	huge := filepath.Join(dir, "huge.json")
	if err := os.WriteFile(huge, bytes.Repeat([]byte("["), 2<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	want := `{"burn":0,"error":{"code":"EXPR_BOUNDS","message":"{\"code\":\"EXPR_BOUNDS\",\"max\":16384,\"what\":\"program-bytes\"}"}}` + "\n"
	for _, args := range [][]string{
		{"expr", "eval", "--program", "@" + huge},
		{"expr", "eval", "--program", strings.Repeat("[", expr.ProgramText.Max+1)},
		{"expr", "check", "--program", "@" + huge},
	} {
		code, out, _ := runCLI(t, args...)
		if args[1] == "check" {
			want = strings.Replace(strings.TrimPrefix(want, `{"burn":0,`), `"error"`, `{"error"`, 1)
		}
		if code != 1 || out != want {
			t.Errorf("%s %s: exit %d, out %s; want exit 1, %s", args[1], args[3][:8], code, out, want)
		}
	}
	bigEnv := filepath.Join(dir, "env.json")
	if err := os.WriteFile(bigEnv, bytes.Repeat([]byte("{"), expr.EnvText.Max+1), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, _ := runCLI(t, "expr", "eval", "--program", "1", "--env", "@"+bigEnv); code != 1 ||
		!strings.Contains(out, `\"max\":262144,\"what\":\"env-bytes\"`) {
		t.Errorf("env over its bound: exit %d out %s", code, out)
	}
	padded := putFile(t, dir, "padded.json", strings.Repeat(" ", 100_000)+`["add",1,2]`)
	if code, out, _ := runCLI(t, "expr", "eval", "--program", "@"+padded); code != 0 || out != `{"burn":4,"value":3}`+"\n" {
		t.Errorf("padded program: exit %d out %s", code, out)
	}
}

// TestExprDocsInSync keeps docs/expr.md equal to what the op table
// generates; -update rewrites it.
func TestExprDocsInSync(t *testing.T) {
	t.Parallel()
	code, out, errOut := runCLI(t, "expr", "ops", "--markdown")
	if code != 0 {
		t.Fatalf("expr ops --markdown: exit %d: %s", code, errOut)
	}
	golden.Check(t, filepath.Join("..", "..", "docs", "expr.md"), []byte(out))
}

// TestExprOps: the table names every op with its arity, fuel and the
// example's result; --json is the same reference as canonical JSON.
func TestExprOps(t *testing.T) {
	t.Parallel()
	code, out, _ := runCLI(t, "expr", "ops")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{
		"Numbers\n  OP ", "WHAT IT DOES",
		`eq         2      2, + the node count of both values`,
		`["fold", ["list", 1, 2, 3], 0, "acc", "it", ["add", ["get", "acc"], ["get", "it"]]]  6 `,
	} {
		if !strings.Contains(strings.Join(strings.Fields(out), " "), strings.Join(strings.Fields(want), " ")) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "\n  "); n != 61+6 { // 61 ops and 6 family headers
		t.Errorf("table has %d op and header rows, want 67", n)
	}
	code, out, _ = runCLI(t, "--json", "expr", "ops")
	if code != 0 || !strings.HasPrefix(out, `[{"arity":"1..","baseCost":2,"burn":5,"example":"[\"add\", 1, 2, 3.5]","family":"Numbers"`) ||
		strings.Count(out, `"name":`) != 61 {
		t.Errorf("--json: exit %d, out %.200s", code, out)
	}
}

// TestManifestExprErrorsReadAsSentences: a manifest's expression error
// reaches the person on stderr as a sentence with a suggestion, while the
// manifest package keeps the canonical text (a spawned child's manifest
// error is recorded in its receipt).
func TestManifestExprErrorsReadAsSentences(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "m.json")
	doc := `{"contract":"algal.organism.v1","key":"organism:t","name":"T","cells":[{"id":"rate","kind":"expr",
	 "inputs":{"x":"json"},"expr":{"contract":"algal.expr.v1","program":["eqq",1,1]},"output":{"kind":"json","schema":{}}}]}`
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t, "check", path)
	want := `cells[0] \"rate\": expr.program: unknown op \"eqq\" (did you mean \"eq\"?)"},"ok":false}`
	if code != 2 || !strings.Contains(stderr, `{"error":{"code":"PARSE_FAILED"`) || !strings.HasSuffix(strings.TrimSpace(stderr), want) {
		t.Errorf("exit %d, stderr %s; want PARSE_FAILED ending %s", code, stderr, want)
	}
	_, err := manifest.Parse([]byte(doc))
	if err == nil || !strings.Contains(err.Error(), `{"code":"EXPR_OP","op":"eqq"}`) {
		t.Errorf("manifest error %v: the recorded text must stay canonical", err)
	}
}
