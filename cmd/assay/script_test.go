package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/rogpeppe/go-internal/testscript"
)

// TestScripts runs cmd/assay/testdata/script/*.txtar (TestMain, in
// concurrent_runs_test.go, makes this test binary the scripts' `assay`): upstream's documented
// commands, verbatim, against $ASSAY_UPSTREAM_DIR/examples (from a
// repository-root layout and from another directory), and the README's
// own promises. Scripts needing the corpus skip, saying so, without it.
func TestScripts(t *testing.T) {
	upstream := os.Getenv("ASSAY_UPSTREAM_DIR")
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			env.Setenv("UPSTREAM", upstream)
			if upstream != "" {
				env.Setenv("EXAMPLES", upstream+"/examples")
			}
			return nil
		},
		Condition: func(cond string) (bool, error) {
			if cond == "upstream" {
				return upstream != "", nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Cmds: map[string]func(*testscript.TestScript, bool, []string){
			"status":  cmdStatus,
			"json":    cmdJSON,
			"jsonall": cmdJSONAll,
			"outfile": cmdOutFile,
			"capture": cmdCapture,
		},
	})
}

// status N ARGS...: run assay ARGS and require exit status N; stdout and
// stderr are kept for the commands that follow.
func cmdStatus(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 {
		ts.Fatalf("usage: status N [args...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("status: %v", err)
	}
	got := 0
	if err := ts.Exec("assay", args[1:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("status: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("assay %s: exit %d, want %d", strings.Join(args[1:], " "), got, want)
	}
}

// lookup follows a dotted path: object keys, array indexes, and @len for the
// length of an array or object.
func lookup(ts *testscript.TestScript, v any, path string) any {
	if path == "." {
		return v
	}
	for _, k := range strings.Split(path, ".") {
		switch x := v.(type) {
		case []any:
			if k == "@len" {
				v = float64(len(x))
				continue
			}
			i, err := strconv.Atoi(k)
			if err != nil || i < 0 || i >= len(x) {
				ts.Fatalf("path %s: no element %q", path, k)
			}
			v = x[i]
		case map[string]any:
			if k == "@len" {
				v = float64(len(x))
				continue
			}
			var ok bool
			if v, ok = x[k]; !ok {
				ts.Fatalf("path %s: no key %q", path, k)
			}
		default:
			ts.Fatalf("path %s: %q of a %T", path, k, v)
		}
	}
	return v
}

func readDoc(ts *testscript.TestScript, file string) any {
	text := ts.ReadFile(file)
	v, err := canon.Parse([]byte(strings.TrimSpace(text)), 0)
	if err != nil {
		ts.Fatalf("%s is not JSON: %v\n%s", file, err, text)
	}
	return v
}

func encoded(ts *testscript.TestScript, v any) string {
	b, err := canon.Encode(v)
	if err != nil {
		ts.Fatalf("%v", err)
	}
	return string(b)
}

// json FILE PATH WANT: the value at PATH of the JSON document FILE
// (stdout, stderr or a file) is, canonically encoded, WANT.
func cmdJSON(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 3 {
		ts.Fatalf("usage: json FILE PATH WANT")
	}
	got := encoded(ts, lookup(ts, readDoc(ts, args[0]), args[1]))
	if (got == args[2]) == neg {
		ts.Fatalf("%s %s = %s, want %s%s", args[0], args[1], got, map[bool]string{true: "not "}[neg], args[2])
	}
}

// jsonall FILE PATH KEY WANT: every element of the array at PATH has KEY
// equal to WANT.
func cmdJSONAll(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 4 {
		ts.Fatalf("usage: jsonall FILE PATH KEY WANT")
	}
	list, ok := lookup(ts, readDoc(ts, args[0]), args[1]).([]any)
	if !ok || len(list) == 0 {
		ts.Fatalf("%s %s is not a non-empty array", args[0], args[1])
	}
	for i, e := range list {
		if got := encoded(ts, lookup(ts, e, args[2])); got != args[3] {
			ts.Fatalf("%s %s.%d.%s = %s, want %s\n%s", args[0], args[1], i, args[2], got, args[3], encoded(ts, e))
		}
	}
}

// outfile FILE: FILE holds exactly stdout's bytes without its final
// newline: what upstream writes with --out.
func cmdOutFile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: outfile FILE")
	}
	got, want := ts.ReadFile(args[0]), strings.TrimSuffix(ts.ReadFile("stdout"), "\n")
	if got != want {
		ts.Fatalf("%s (%d bytes) is not stdout without its newline (%d bytes)", args[0], len(got), len(want))
	}
}

// capture VAR FILE REGEXP: set VAR to the first submatch of REGEXP in FILE.
func cmdCapture(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: capture VAR FILE REGEXP")
	}
	m := regexp.MustCompile(args[2]).FindStringSubmatch(ts.ReadFile(args[1]))
	if len(m) < 2 {
		ts.Fatalf("%s: no match for %s", args[1], args[2])
	}
	ts.Setenv(args[0], m[1])
}
