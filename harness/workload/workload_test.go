package workload

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/bench"
	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/foundry"
)

// writeWorkload puts a workload and a tiny manifest in a temp dir.
func writeWorkload(t *testing.T, name, body string) string {
	t.Helper()
	dir := t.TempDir()
	m, err := os.ReadFile(filepath.Join("..", "..", "fixtures", "triage", "triage-single.algal.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "single.algal.json"), m, 0o644); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const goodBench = `name: tiny
revision: 2
systems:
  - id: one
    manifest: single.algal.json
    executors: { cheap: cases }
cases:
  - id: a
    args: { ticket: "x" }
    expect: { queue: billing }
    responses:
      cheap: { route: billing }
`

// A number too large for a float64 is refused (TestYAMLErrorsPointAtTheNode);
// quoted, the same digits are a string, and 1e-400 is a number (zero), as
// a JSON reader takes it.
func TestLargeNumbersAreQuotedOrRefused(t *testing.T) {
	t.Parallel()
	body := strings.Replace(goodBench, `args: { ticket: "x" }`, `args: { ticket: "1e400" }`, 1)
	body = strings.Replace(body, `expect: { queue: billing }`, `expect: { queue: billing, n: 1e-400 }`, 1)
	w, err := Load(writeWorkload(t, "tiny.bench.yaml", body))
	if err != nil {
		t.Fatal(err)
	}
	if args, expect := w.Cases[0].Args(), w.Cases[0].Expect(); args["ticket"] != "1e400" || expect["n"] != 0.0 {
		t.Fatalf("args %#v, expect %#v", args, expect)
	}
}

func TestYAMLErrorsPointAtTheNode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body string
		line, col  int
		path, msg  string
	}{
		{"unknown top-level key", goodBench + "colour: blue\n", 13, 1, "colour", `unknown key "colour"`},
		{"wrong type for revision", strings.Replace(goodBench, "revision: 2", "revision: two", 1), 2, 11, "revision", "must be an integer"},
		{"unknown system key", strings.Replace(goodBench, "    manifest:", "    manifets: x\n    manifest:", 1), 5, 5, "systems[0].manifets", `unknown key "manifets"`},
		{"missing manifest file", strings.Replace(goodBench, "single.algal.json", "nope.algal.json", 1), 5, 15, "systems[0].manifest", "does not exist"},
		{"bad executor spec", strings.Replace(goodBench, "cheap: cases }", "cheap: gpt }", 1), 6, 25, "systems[0].executors.cheap", "unknown executor spec"},
		{"case args not a mapping", strings.Replace(goodBench, `args: { ticket: "x" }`, "args: [x]", 1), 9, 11, "cases[0].args", "must be a mapping"},
		{"responses for undeclared executor", strings.Replace(goodBench, "cheap: { route: billing }", "frontier: { route: billing }", 1), 12, 7, "cases[a].responses.frontier", `no executor named "frontier"`},
		{"gate names unknown system", goodBench + "gate:\n  min-passed: { two: 1 }\n", 14, 17, "gate.min-passed", `system "two"`},
		{"gate rule for the other kind", goodBench + "gate:\n  promoted: organism:x\n", 14, 3, "gate.promoted", `unknown key "promoted"`},
		{"queue tag on a scalar", strings.Replace(goodBench, "route: billing }", "route: !queue billing }", 1), 12, 23, "cases[0].responses.cheap.route", "needs a non-empty list"},
		{"duplicate key", strings.Replace(goodBench, "revision: 2", "revision: 2\nrevision: 3", 1), 3, 1, "revision", "appears twice"},
		// In a value, every key is checked before any value is converted.
		{"duplicate key in a value, after a bad value", strings.Replace(goodBench, `args: { ticket: "x" }`, `args: { n: !!binary aGk=, ticket: "x", ticket: "y" }`, 1), 9, 44, "cases[0].args.ticket", "appears twice"},
		{"merge key in a value", strings.Replace(goodBench, `args: { ticket: "x" }`, `args: { n: !!binary aGk=, <<: { ticket: "x" } }`, 1), 9, 31, "cases[0].args", "merge keys"},
		{"list key in a value", strings.Replace(goodBench, `args: { ticket: "x" }`, `args: { n: !!binary aGk=, [k]: "x" }`, 1), 9, 31, "cases[0].args", "plain strings"},
		{"number too large for a float64", strings.Replace(goodBench, `args: { ticket: "x" }`, `args: { ticket: "x", n: 1e400 }`, 1), 9, 29, "cases[0].args.n", "outside the range of a JSON number"},
		{"bad value in a value", strings.Replace(goodBench, `args: { ticket: "x" }`, `args: { ticket: "x", n: !!binary aGk= }`, 1), 9, 29, "cases[0].args.n", "not supported"},
		{"engine rejection mapped back: bad case id", strings.Replace(goodBench, "- id: a", "- id: A", 1), 8, 9, "cases[0].id", "must be an id"},
		{"engine rejection mapped back: expect misses output", strings.Replace(goodBench, "expect: { queue: billing }", "expect: { lane: billing }", 1), 10, 13, "cases[a].expect", "expected output"},
		{"syntax error: tab indentation", goodBench + "gate:\n\tmin-passed: {}\n", 14, 1, "", "a tab indents this line; YAML indents with spaces only"},
		{"syntax error: a line indented to no block", strings.Replace(goodBench, "    executors:", "   executors:", 1), 6, 4, "", "indented 3 spaces, which lines up with no block around it (they are indented 0, 2, 4)"},
		{"empty case list", strings.Replace(goodBench, goodBench[strings.Index(goodBench, "cases:"):], "cases: []\n", 1), 7, 1, "cases", "the workload has no cases"},
		{"case arg of the wrong type", strings.Replace(goodBench, `args: { ticket: "x" }`, `args: { ticket: 42 }`, 1), 9, 21, "cases[0].args.ticket", `the number 42 is not a value system "one" takes for input "ticket" (text port "ticket" of cell "inbox" in single.algal.json): expected text, got number (quote it to make it text)`},
		{"case arg missing", strings.Replace(goodBench, `args: { ticket: "x" }`, `args: {}`, 1), 9, 11, "cases[0].args", `lacks "ticket", an input system "one" needs`},
		{"case arg unknown", strings.Replace(goodBench, `args: { ticket: "x" }`, `args: { ticket: "x", tikcet: "y" }`, 1), 9, 26, "cases[0].args.tikcet", `system "one" has no interface input "tikcet" (did you mean "ticket"?)`},
		{"price for no model", goodBench + "usage:\n  cheap:\n    route: { model: small-1, tokensIn: 1, tokensOut: 1 }\nprices:\n  small-1: { input: 1, output: 1 }\n  smal-2: { input: 1, output: 1 }\n", 18, 3, "prices.smal-2", `no usage entry reports model "smal-2", so this price is never applied`},
		{"model with no price", goodBench + "usage:\n  cheap:\n    route: { model: small-2, tokensIn: 1, tokensOut: 1 }\nprices:\n  small-1: { input: 1, output: 1 }\n", 15, 21, "usage.cheap.route.model", `model "small-2" has no price in prices: (did you mean "small-1"?)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := writeWorkload(t, "tiny.bench.yaml", tc.body)
			w, err := Load(p)
			if err == nil {
				_, err = Compile(w, t.TempDir(), foundry.AdmitOptions{})
			}
			var we *fault.Error
			if !errors.As(err, &we) {
				t.Fatalf("want a positioned *fault.Error, got %v", err)
			}
			if we.File != p || we.Line != tc.line || we.Column != tc.col {
				t.Errorf("at %s:%d:%d, want line %d column %d (%v)", we.File, we.Line, we.Column, tc.line, tc.col, we)
			}
			if tc.path != "" && we.Path != tc.path {
				t.Errorf("path %q, want %q", we.Path, tc.path)
			}
			if !strings.Contains(we.Message, tc.msg) {
				t.Errorf("message %q lacks %q", we.Message, tc.msg)
			}
			if we.ErrorCode() != CodeWorkload || !strings.HasPrefix(we.Error(), p+":") {
				t.Errorf("error %q code %s", we.Error(), we.ErrorCode())
			}
		})
	}
}

func TestJSONLCaseErrorsCarryTheirLine(t *testing.T) {
	t.Parallel()
	body := strings.Replace(goodBench, "cases:\n", "cases:\n  - file: more.jsonl\n", 1)
	p := writeWorkload(t, "tiny.bench.yaml", body)
	jsonl := `{"id":"b","args":{"ticket":"y"},"expect":{"queue":"billing"}}` + "\n\n" +
		`{"id":"c","args":{"ticket":"z"},"expect":{"queue":"billing"},"respones":{}}` + "\n"
	if err := os.WriteFile(filepath.Join(filepath.Dir(p), "more.jsonl"), []byte(jsonl), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(p)
	var we *fault.Error
	if !errors.As(err, &we) || we.Line != 3 || we.Column != 62 || !strings.Contains(we.Message, `unknown key "respones"`) {
		t.Fatalf("got %v", err)
	}
}

func TestCompileFixtures(t *testing.T) {
	t.Parallel()
	wants := map[string]struct {
		contract string
		files    []string
	}{
		"ticket-triage.bench.yaml":      {bench.ConfigContract, []string{"scripted-cheap.json", "scripted-frontier.json"}},
		"invoice-extraction.bench.yaml": {bench.ConfigContract, []string{"scripted-large.json", "scripted-small.json"}},
		"intent-select.foundry.yaml":    {foundry.ConfigContract, []string{"scripted-large.json", "scripted-small.json"}},
		"code-normalizer.foundry.yaml":  {foundry.ConfigContract, nil},
	}
	for name, want := range wants {
		t.Run(name, func(t *testing.T) {
			w, err := Load(suitePath(name))
			if err != nil {
				t.Fatal(err)
			}
			out := t.TempDir()
			c, err := Compile(w, out, foundry.AdmitOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if c.Config["contract"] != want.contract {
				t.Fatalf("contract %v", c.Config["contract"])
			}
			if got := slices.Sorted(maps.Keys(c.Files)); !slices.Equal(got, want.files) {
				t.Errorf("generated files %v, want %v", got, want.files)
			}
			// Compiling again, into another root, gives the same identity
			// and slug: the slug depends on the inputs only.
			c2, err := Compile(w, t.TempDir(), foundry.AdmitOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if c.Identity != c2.Identity || c.Slug != c2.Slug || !strings.HasPrefix(c.Slug, w.Name+"-r1-") {
				t.Errorf("identity %s/%s, slug %s/%s", c.Identity, c2.Identity, c.Slug, c2.Slug)
			}
			// The written config round-trips through canonical JSON and the
			// engine admits it from the run directory.
			b, err := canon.Encode(c.Config)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(c.RunDir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(c.RunDir, ConfigFile), b, 0o644); err != nil {
				t.Fatal(err)
			}
			for n, f := range c.Files {
				if err := os.WriteFile(filepath.Join(c.RunDir, n), f, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if w.Kind == KindBench {
				_, err = bench.LoadConfig(filepath.Join(c.RunDir, ConfigFile))
			} else {
				_, err = foundry.LoadConfig(filepath.Join(c.RunDir, ConfigFile), foundry.AdmitOptions{})
			}
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestCompiledQueuesFollowCaseOrder(t *testing.T) {
	t.Parallel()
	w, err := Load(suitePath("intent-select.foundry.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := Compile(w, t.TempDir(), foundry.AdmitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := strings.TrimSpace(string(c.Files["scripted-large.json"]))
	want := `{"escalate":["refund","bug","bug"],"intent":["refund","bug","how-to","refund","how-to","bug","refund","bug"]}`
	if got != want {
		t.Fatalf("large table\n got %s\nwant %s", got, want)
	}
}
