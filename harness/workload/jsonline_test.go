package workload

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/harness/synth"
	"gopkg.in/yaml.v3"
)

// jsonLineCorpus holds lines jsonNodes must build (want true) and lines
// it must leave to yaml.v3 (want false), valid YAML or not.
var jsonLineCorpus = []struct {
	line string
	fast bool
}{
	{`{"id":"a","args":{"ticket":"x"},"expect":{"queue":"billing"}}`, true},
	{`  { "id" : "a" , "args" : { } , "expect" : {"q": [1, 2.5, -3e2, 0, -0, 1E+2, 1e-2]} }  `, true},
	{`{"a":true,"b":false,"c":null,"d":[],"e":{},"f":[[],[{}]]}`, true},
	{`{"s":"tab\there \"q\" back\\slash \b\f\n\r \u0041\u00e9\u4e2d\uffff"}`, true},
	{`{"s":"héllo 中文 😀 ok","n":"x"}` + "\r", true},
	{`{"big":9007199254740993,"bigger":12345678901234567890,"huge":123456789012345678901234567890}`, true},
	{`{"f":1e400,"g":-1e400,"h":1e-400,"i":0.000000000000000000001}`, true},
	{`{"dup":1,"dup":2}`, true},
	{`{"":""}`, true},
	{`{"k":"` + strings.Repeat("v", 3000) + `"}`, true},
	{`{"` + strings.Repeat("k", 990) + `":1}`, true},
	{`{"` + strings.Repeat("k", 1100) + `":1}`, false},
	{`{"s":"a\/b"}`, false},
	{`{"s":"\ud83d\ude00"}`, false},
	{`{"s":"\ud83d"}`, false},
	{"{\"s\":\"raw\ttab\"}", false},
	{"{\"a\":\t1}", false},
	{"{\"s\":\"\u0085\"}", false},
	{"{\"s\":\"\u2028\"}", false},
	{"{\"s\":\"\ufeff\"}", false},
	{"{\"s\":\"\x7f\"}", false},
	{"{\"s\":\"\xff\"}", false},
	{"\ufeff{\"a\":1}", false},
	{`{a: 1}`, false},
	{`{'a': 1}`, false},
	{`{"a": 1,}`, false},
	{`{"a": 1} # c`, false},
	{`{"a": 1} x`, false},
	{`{"a": 01}`, false},
	{`{"a": 1.}`, false},
	{`{"a": .5}`, false},
	{`{"a": +1}`, false},
	{`{"a": 0x10}`, false},
	{`{"a": True}`, false},
	{`{"a": nul}`, false},
	{`{"a": truex}`, false},
	{`{"a": 1x}`, false},
	{`{"a": !queue [1]}`, false},
	{`{"a": &x 1, "b": *x}`, false},
	{`["not", "an", "object"]`, false},
	{`"a string"`, false},
	{`# comment`, false},
	{`{"a": [1, 2}`, false},
	{`{"a": 1`, false},
	{`{"a" 1}`, false},
	{`{"s": "unterminated}`, false},
	{"{\"a\":1}\r\r", false},
	{"{\"a\":\r1}", false},
	{strings.Repeat(`{"a":`, 70) + "1" + strings.Repeat("}", 70), false},
	{strings.Repeat(`[`, 64) + strings.Repeat("]", 64), false},
	{`{"a":` + strings.Repeat(`[`, 63) + strings.Repeat("]", 63) + `}`, true},
}

// checkJSONLine fails t when jsonNodes builds a tree for line that is not
// the tree yaml.v3 parses it into, and reports whether it built one.
func checkJSONLine(t *testing.T, l *jsonLine, line []byte) bool {
	t.Helper()
	doc, ok := l.parse(line)
	if !ok {
		return false
	}
	var want yaml.Node
	if err := yaml.Unmarshal(line, &want); err != nil {
		t.Fatalf("jsonNodes built %q, which yaml.v3 rejects: %v", line, err)
	}
	if !reflect.DeepEqual(doc, &want) {
		t.Fatalf("jsonNodes built a tree yaml.v3 does not for %q:\n got %s\nwant %s", line, dumpNode(doc), dumpNode(&want))
	}
	return true
}

func dumpNode(n *yaml.Node) string {
	var b strings.Builder
	var walk func(n *yaml.Node, depth int)
	walk = func(n *yaml.Node, depth int) {
		b.WriteString(strings.Repeat(" ", depth))
		b.WriteString(strings.Join([]string{
			"kind=" + string(rune('0'+n.Kind)), "style=" + string(rune('0'+n.Style)), "tag=" + n.Tag, "value=" + n.Value,
		}, " "))
		b.WriteString(" at " + Pos{Line: n.Line, Column: n.Column}.String() + "\n")
		for _, c := range n.Content {
			walk(c, depth+1)
		}
	}
	walk(n, 0)
	return b.String()
}

// Whatever jsonNodes builds, yaml.v3 parses into the same tree (kinds,
// styles, tags, values, lines and columns), so the strict walk over it
// gives the same values, positions and errors; the lines it leaves to
// yaml.v3 are those whose reading it is not sure of.
func TestJSONNodesAreYAMLs(t *testing.T) {
	t.Parallel()
	var l jsonLine
	for _, tc := range jsonLineCorpus {
		if got := checkJSONLine(t, &l, []byte(tc.line)); got != tc.fast {
			t.Errorf("jsonNodes took %q: %v, want %v", tc.line, got, tc.fast)
		}
	}
	// Every line of the checked-in case files and of a synthetic workload
	// is plain JSON and is built without yaml.v3.
	files, _ := filepath.Glob(filepath.Join("..", "..", "fixtures", "*", "*.jsonl"))
	dir := t.TempDir()
	if _, err := synth.Write(dir, synth.Spec{Systems: 3, Cases: 300, Triage: filepath.Join("..", "..", "fixtures", "triage")}); err != nil {
		t.Fatal(err)
	}
	more, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	files = append(files, more...)
	if len(files) < 2 {
		t.Fatalf("case files %v", files)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range bytes.Split(data, []byte("\n")) {
			if len(bytes.TrimSpace(line)) > 0 && !checkJSONLine(t, &l, line) {
				t.Errorf("%s:%d is left to yaml.v3: %s", f, i+1, line)
			}
		}
	}
}

func FuzzJSONNodesAreYAMLs(f *testing.F) {
	for _, tc := range jsonLineCorpus {
		f.Add(tc.line)
	}
	f.Fuzz(func(t *testing.T, line string) {
		if strings.ContainsRune(line, '\n') {
			return // a JSONL file is split at line breaks first
		}
		var l jsonLine
		checkJSONLine(t, &l, []byte(line))
	})
}

// Loading a workload whose JSONL lines are built without yaml.v3 gives
// the same workload, or the same error (code, file, line:column, field,
// message), as reading every line with yaml.v3.
func TestJSONLCasesLoadAsWithYAML(t *testing.T) {
	load := func(path string, fast bool) (*Workload, error) {
		defer func(was bool) { JsonlFast = was }(JsonlFast)
		JsonlFast = fast
		return Load(path)
	}
	type result struct {
		w   *Workload
		err *fault.Error
	}
	compare := func(t *testing.T, path string) result {
		t.Helper()
		wf, errf := load(path, true)
		wy, erry := load(path, false)
		if (errf == nil) != (erry == nil) {
			t.Fatalf("fast: %v; yaml.v3: %v", errf, erry)
		}
		if erry != nil {
			var ef, ey *fault.Error
			if !errors.As(errf, &ef) || !errors.As(erry, &ey) || !reflect.DeepEqual(ef, ey) {
				t.Fatalf("fast error %#v\nyaml.v3 error %#v", errf, erry)
			}
			return result{err: ey}
		}
		wf.loading, wy.loading = nil, nil
		if !reflect.DeepEqual(wf, wy) {
			t.Fatalf("the workloads differ")
		}
		return result{w: wf}
	}
	dir := t.TempDir()
	p, err := synth.Write(dir, synth.Spec{Systems: 3, Cases: 600, Triage: filepath.Join("..", "..", "fixtures", "triage")})
	if err != nil {
		t.Fatal(err)
	}
	if r := compare(t, p); r.w == nil || len(r.w.Cases) != 600 {
		t.Fatalf("loaded %+v", r)
	}
	if r := compare(t, suitePath("invoice-extraction.bench.yaml")); r.w == nil {
		t.Fatal("invoice-extraction did not load")
	}
	cases := filepath.Join(dir, "cases-001.jsonl")
	good, err := os.ReadFile(cases)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(good, []byte("\n"))
	// Each broken line replaces case 4 (line 4): the error must be the
	// same whichever path read it.
	const (
		args = `"args":{"ticket":"Ticket 4"}`
		resp = `"responses":{"cheap":{"route":"billing","screen":"billing"},"frontier":{"route":"other"}}`
	)
	for name, bad := range map[string]string{
		"unknown key":       `{` + args + `,"expected":{"queue":"other"},"id":"t00004"}`,
		"missing key":       `{` + args + `,"id":"t00004"}`,
		"duplicate key":     `{` + args + `,"expect":{"queue":"other"},"id":"t00004","id":"t00004"}`,
		"not an object":     `["t00004"]`,
		"a string":          `"t00004"`,
		"args not a map":    `{"args":["Ticket 4"],"expect":{"queue":"other"},"id":"t00004"}`,
		"bad id":            `{` + args + `,"expect":{"queue":"other"},"id":"T 4"}`,
		"id not a string":   `{` + args + `,"expect":{"queue":"other"},"id":4}`,
		"inexact integer":   `{` + args + `,"expect":{"queue":"other","n":9007199254740993},"id":"t00004"}`,
		"slash escape":      `{"args":{"ticket":"Ticket\/4"},"expect":{"queue":"other"},"id":"t00004"}`,
		"surrogate pair":    `{"args":{"ticket":"Ticket \ud83d\ude00"},"expect":{"queue":"other"},"id":"t00004"}`,
		"control character": "{\"args\":{\"ticket\":\"Ticket \u0085\"},\"expect\":{\"queue\":\"other\"},\"id\":\"t00004\"}",
		"trailing comma":    `{` + args + `,"expect":{"queue":"other",},"id":"t00004"}`,
		"syntax":            `{` + args + `,"expect" {"queue":"other"},"id":"t00004"}`,
		"responses shape":   `{` + args + `,"expect":{"queue":"other"},"id":"t00004","responses":{"cheap":7}}`,
		"unserved executor": `{` + args + `,"expect":{"queue":"other"},"id":"t00004","responses":{"cheep":{"route":"billing"}}}`,
		"broken answer":     `{` + args + `,"expect":{"queue":"other"},"id":"t00004","responses":{"cheap":{"route":7,"screen":"billing"},"frontier":{"route":"other"}}}`,
		"too deep":          `{` + args + `,"expect":{"queue":"other","n":` + strings.Repeat("[", 66) + strings.Repeat("]", 66) + `},"id":"t00004"}`,
		"duplicate case":    string(lines[2]),
		"yaml flow":         `{` + args + `, expect: {queue: other}, id: t00004, ` + resp + `}`,
		"infinite number":   `{` + args + `,"expect":{"queue":"other","n":1e400},"id":"t00004",` + resp + `}`,
		"unicode columns":   `{"args":{"ticket":"Tïcket 4 😀"},"expect":{"queue":"other"},"id":"t00004",` + resp + `,"x":1}`,
	} {
		t.Run(name, func(t *testing.T) {
			edited := append([][]byte{}, lines...)
			edited[3] = []byte(bad)
			if err := os.WriteFile(cases, bytes.Join(edited, []byte("\n")), 0o644); err != nil {
				t.Fatal(err)
			}
			defer func() {
				if err := os.WriteFile(cases, good, 0o644); err != nil {
					t.Fatal(err)
				}
			}()
			r := compare(t, p)
			switch name {
			case "yaml flow", "trailing comma", "control character":
				// A trailing comma is YAML flow syntax.
				if r.w == nil {
					t.Fatalf("YAML flow syntax is refused: %v", r.err)
				}
				return
			}
			if r.err == nil || r.err.Code != CodeWorkload || r.err.Line != 4 {
				t.Fatalf("accepted or unpositioned: %+v %v", r, r.err)
			}
		})
	}
}
