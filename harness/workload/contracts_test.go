package workload

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/manifest"
	"github.com/algal-assay/assay/internal/suggest"
)

// fixture is the absolute path of a file under fixtures/.
func fixture(t *testing.T, rel string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", "fixtures", filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return filepath.ToSlash(p)
}

// loadErr writes body as a workload and returns its load error.
func loadErr(t *testing.T, name, body string) (*fault.Error, string) {
	t.Helper()
	p := writeWorkload(t, name, body)
	_, err := Load(p)
	var we *fault.Error
	if !errors.As(err, &we) {
		t.Fatalf("want a positioned *Error, got %v", err)
	}
	return we, p
}

func TestScriptedAnswersAreCheckedAgainstTheOutputContract(t *testing.T) {
	t.Parallel()
	extract := fixture(t, "extraction/extract-once.algal.json")
	jsonBench := `name: tiny
revision: 1
systems:
  - id: one
    manifest: ` + extract + `
    executors: { small: cases }
cases:
  - id: a
    args: { text: "x" }
    expect: { invoice: { vendor: v } }
    responses:
      small: { extract: { vendor: v, total: "12", currency: EUR, due: "2026-01-01" } }
`
	tests := []struct {
		name, file, body string
		line, col        int
		path, msg        string
	}{
		{"label typo", "tiny.bench.yaml", strings.Replace(goodBench, "route: billing", "route: biling", 1),
			12, 23, "cases[a].responses.cheap.route", `"biling" is not one of the labels "billing", "technical", "account", "other" (did you mean "billing"?), so the answer can never satisfy cell "route" of single.algal.json`},
		{"label typo in a queue", "tiny.bench.yaml", strings.Replace(goodBench, "route: billing", "route: !queue [billing, postive]", 1),
			12, 40, "cases[a].responses.cheap.route[1]", `"postive" is not one of the labels`},
		{"json failing the schema", "tiny.bench.yaml", jsonBench,
			12, 25, "cases[a].responses.small.extract", `fails the cell's schema (expected number)`},
		{"a number for a choice", "tiny.bench.yaml", strings.Replace(goodBench, "route: billing", "route: 3", 1),
			12, 23, "cases[a].responses.cheap.route", "the answer is a number, not one of the labels"},
		{"malformed tag on a good answer", "tiny.bench.yaml", strings.Replace(goodBench, "route: billing", "route: !malformed billing", 1),
			12, 23, "cases[a].responses.cheap.route", "is tagged !malformed but satisfies"},
		{"answer for a cell that does not exist", "tiny.bench.yaml", strings.Replace(goodBench, "route: billing", "rout: billing", 1),
			12, 22, "cases[a].responses.cheap.rout", `has a cell "rout" (did you mean "route"?)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			we, p := loadErr(t, tc.file, tc.body)
			if we.File != p || we.Line != tc.line || we.Column != tc.col || we.Path != tc.path {
				t.Errorf("at %s:%d:%d %s, want line %d column %d path %s", we.File, we.Line, we.Column, we.Path, tc.line, tc.col, tc.path)
			}
			if !strings.Contains(we.Message, tc.msg) {
				t.Errorf("message %q\nlacks %q", we.Message, tc.msg)
			}
		})
	}
}

func TestExecutorsAndRoutesMustMeet(t *testing.T) {
	t.Parallel()
	escalating := fixture(t, "triage/triage-escalating.algal.json")
	renamed := `name: tiny
revision: 1
systems:
  - id: esc
    manifest: ` + escalating + `
    executors: { mini: cases, frontier: cases }
cases:
  - id: a
    args: { ticket: "x" }
    expect: { queue: billing }
    responses:
      mini: { screen: billing }
`
	we, _ := loadErr(t, "tiny.bench.yaml", renamed)
	for _, want := range []string{
		`cell "screen" routes to "cheap", but no executor of system "esc" has that name`,
		`executor(s) "mini" serve no cell of system "esc" (screen routes to cheap, escalate routes to frontier)`,
	} {
		if !strings.Contains(we.Message, want) {
			t.Errorf("message %q\nlacks %q", we.Message, want)
		}
	}
	if we.Path != "systems[0].executors" || we.Line != 6 {
		t.Errorf("at %d:%d %s", we.Line, we.Column, we.Path)
	}
	// An unrouted cell goes to the first executor by name; a second
	// executor then serves nothing.
	idle := strings.Replace(goodBench, "executors: { cheap: cases }", "executors: { cheap: cases, zeta: cases }", 1)
	we, _ = loadErr(t, "tiny.bench.yaml", idle)
	if !strings.Contains(we.Message, `executor(s) "zeta" serve no cell of system "one" (route has no route)`) {
		t.Errorf("message %q", we.Message)
	}
	// A typo'd name gets a suggestion.
	typo := strings.Replace(renamed, "mini: cases", "chep: cases", 1)
	typo = strings.Replace(typo, "mini: {", "chep: {", 1)
	we, _ = loadErr(t, "tiny.bench.yaml", typo)
	if !strings.Contains(we.Message, `has that name (did you mean "chep"?)`) {
		t.Errorf("message %q", we.Message)
	}
}

func TestFoundryExecutorsServeSomeCandidate(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile(suitePath("intent-select.foundry.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	body := strings.ReplaceAll(string(src), "../fixtures", fixture(t, ""))
	body = strings.Replace(body, "executors: { small: cases, large: cases }", "executors: { small: cases, large: cases, huge: cases }", 1)
	we, _ := loadErr(t, "intent-select.foundry.yaml", body)
	if we.Path != "executors" || !strings.Contains(we.Message, `executor(s) "huge" serve no cell of any candidate`) {
		t.Errorf("%v", we)
	}
}

func TestPromotedNamesACandidate(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile(suitePath("intent-select.foundry.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	body := strings.ReplaceAll(string(src), "../fixtures", fixture(t, ""))
	if !strings.Contains(body, "promoted: organism:assay-intent-cascade") {
		t.Fatal("intent-select.foundry.yaml changed; update this test")
	}
	body = strings.Replace(body, "promoted: organism:assay-intent-cascade", "promoted: organism:assay-intent-cascde", 1)
	we, _ := loadErr(t, "intent-select.foundry.yaml", body)
	if we.Path != "gate.promoted" || !strings.Contains(we.Message, `names "organism:assay-intent-cascde", which is no candidate's key (did you mean "organism:assay-intent-cascade"?)`) {
		t.Errorf("%v", we)
	}
}

func TestYMLWorkloadsAreDiscovered(t *testing.T) {
	t.Parallel()
	dir := filepath.Dir(writeWorkload(t, "a.bench.yml", goodBench))
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sub", "b.bench.yaml"), []byte(strings.Replace(goodBench, "single.algal.json", "../single.algal.json", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.yml"), []byte("x: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || filepath.Base(got[0]) != "a.bench.yml" || filepath.Base(got[1]) != "b.bench.yaml" {
		t.Fatalf("discovered %v", got)
	}
	w, err := Load(got[0])
	if err != nil || w.Kind != KindBench || FileStem(got[0]) != "a" {
		t.Fatalf("load %v, stem %q", err, FileStem(got[0]))
	}
}

func TestDidYouMean(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, body, msg string }{
		{"unknown key", strings.Replace(goodBench, "revision: 2", "revison: 2", 1), `unknown key "revison" (did you mean "revision"?)`},
		{"gate system", goodBench + "gate:\n  min-passed: { oen: 1 }\n", `names system "oen", which the workload does not declare (did you mean "one"?)`},
		{"gate case", goodBench + "gate:\n  outcomes: { one: { b: pass } }\n", `names case "b", which the workload does not declare (did you mean "a"?)`},
		{"response executor", strings.Replace(goodBench, "cheap: { route", "chaep: { route", 1), `no executor named "chaep" is declared "cases", so nothing would serve these responses (did you mean "cheap"?)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			we, _ := loadErr(t, "tiny.bench.yaml", tc.body)
			if !strings.Contains(we.Message, tc.msg) {
				t.Errorf("message %q\nlacks %q", we.Message, tc.msg)
			}
		})
	}
	if got := suggest.DidYouMean("zzzzzz", []string{"billing", "account"}); got != "" {
		t.Errorf("a far word got %q", got)
	}
}

func TestCaseBoundPointsAtTheCasesKey(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString(strings.SplitAfter(goodBench, "cases:\n")[0])
	for i := range MaxBenchCases + 1 {
		b.WriteString("  - { id: c" + strconv.Itoa(i) + ", args: { ticket: x }, expect: { queue: billing }, responses: { cheap: { route: billing } } }\n")
	}
	we, _ := loadErr(t, "tiny.bench.yaml", b.String())
	if we.Line != 7 || we.Column != 1 || we.Path != "cases" || we.Code != CodeWorkload {
		t.Errorf("at %d:%d %s code %s", we.Line, we.Column, we.Path, we.Code)
	}
	if !strings.Contains(we.Message, "holds 20001 cases (counting included case files), over the 20000 a bench workload may run") ||
		!strings.Contains(we.Message, "split the cases across two or more workloads") || strings.Contains(we.Message, "BUDGET") {
		t.Errorf("message %q", we.Message)
	}
}

// TestManifestExpressionErrorsReadAsSentences: an expression mistake inside
// an organism a workload names is reported as a sentence with its
// suggestion, not as the canonical {"code":"EXPR_OP",...} object.
func TestManifestExpressionErrorsReadAsSentences(t *testing.T) {
	t.Parallel()
	m, err := os.ReadFile(fixture(t, "triage/triage-escalating.algal.json"))
	if err != nil {
		t.Fatal(err)
	}
	guard := `"guard": { "equals": "unsure" }`
	if !strings.Contains(string(m), guard) {
		t.Fatalf("fixture no longer has %s", guard)
	}
	bad := strings.Replace(string(m), guard, `"guard": { "expr": { "contract": "algal.expr.v1", "program": ["eqq", ["get", "value"], "unsure"] } }`, 1)
	p := writeWorkload(t, "tiny.bench.yaml", strings.Replace(goodBench, "single.algal.json", "escalating.algal.json", 1))
	if err := os.WriteFile(filepath.Join(filepath.Dir(p), "escalating.algal.json"), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Load(p)
	if err == nil {
		t.Fatal("a guard with an unknown op loaded")
	}
	msg := err.Error()
	if !strings.Contains(msg, `unknown op "eqq" (did you mean "eq"?)`) || strings.Contains(msg, `{"code"`) {
		t.Errorf("error %q: want the sentence with its suggestion, not the canonical object", msg)
	}
}

// A graph mistake in an organism (an edge to a missing port, an interface
// naming a missing cell) fails every run of it at compile time; Load
// rejects it instead, pointing at the workload's manifest line and at the
// line and column inside the organism, with a did-you-mean.
func TestGraphMistakesRejectedAtLoad(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, old, new string
		want           string
	}{
		{"edge to a missing port", `"to": { "cell": "route", "port": "ticket" }`, `"to": { "cell": "route", "port": "tickt" }`,
			`single.algal.json:24:87: edges[0].to: cell "route" has no input port "tickt" (did you mean "ticket"?)`},
		{"interface naming a missing cell", `"queue": { "cell": "route"`, `"queue": { "cell": "rute"`,
			`single.algal.json:9:37: interface.outputs.queue: names missing cell "rute" (did you mean "route"?)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := writeWorkload(t, "tiny.bench.yaml", goodBench)
			org := filepath.Join(filepath.Dir(p), "single.algal.json")
			b, err := os.ReadFile(org)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(b), tc.old) {
				t.Fatalf("fixture lacks %q", tc.old)
			}
			if err := os.WriteFile(org, []byte(strings.Replace(string(b), tc.old, tc.new, 1)), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err = Load(p)
			we, ok := fault.As(err)
			if !ok {
				t.Fatalf("loaded: %v", err)
			}
			if we.File != p || we.Line != 5 || we.Column != 15 || we.Path != "systems[0].manifest" {
				t.Errorf("at %s:%d:%d %s, want the manifest key of %s", we.File, we.Line, we.Column, we.Path, p)
			}
			if !strings.Contains(we.Message, filepath.Join(filepath.Dir(p), tc.want)) {
				t.Errorf("message %q\nlacks %q", we.Message, tc.want)
			}
		})
	}
}

// The load-time graph check rejects nothing upstream runs: every upstream
// example manifest passes it (children and host tools are left to the run).
func TestUpstreamManifestsPassTheGraphCheck(t *testing.T) {
	t.Parallel()
	dir := os.Getenv("ASSAY_UPSTREAM_DIR")
	if dir == "" {
		t.Skip("ASSAY_UPSTREAM_DIR is not set: the upstream corpus is not here")
	}
	files, _ := filepath.Glob(filepath.Join(dir, "examples", "*.algal.json"))
	nested, _ := filepath.Glob(filepath.Join(dir, "examples", "*", "*.algal.json"))
	files = append(files, nested...)
	if len(files) < 47 {
		t.Fatalf("found %d upstream manifests, want at least 47", len(files))
	}
	for _, f := range files {
		m, err := manifest.ReadFile(f)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if err := GraphMistake(m); err != nil {
			t.Errorf("%s is rejected at load: %v", f, err)
		}
	}
}
