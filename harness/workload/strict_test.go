package workload

import (
	"errors"
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/fault"
)

// Inputs that a lenient decoder would accept with a meaning the author did
// not write: each must be rejected with the file, line and key path.
func TestStrictDecodingGaps(t *testing.T) {
	t.Parallel()
	const goodFoundry = `name: tiny
revision: 1
candidates: [single.algal.json]
executors: { cheap: cases }
cases:
  - id: a
    split: train
    args: { ticket: "x" }
    expect: { queue: billing }
    responses:
      cheap: { route: billing }
`
	bomb := goodBench + "gate:\n  on-pareto: [one]\nscorer:\n" +
		"  - &a0 [x, x, x, x, x, x, x, x, x, x]\n" +
		"  - &a1 [*a0, *a0, *a0, *a0, *a0, *a0, *a0, *a0, *a0, *a0]\n" +
		"  - &a2 [*a1, *a1, *a1, *a1, *a1, *a1, *a1, *a1, *a1, *a1]\n" +
		"  - &a3 [*a2, *a2, *a2, *a2, *a2, *a2, *a2, *a2, *a2, *a2]\n" +
		"  - &a4 [*a3, *a3, *a3, *a3, *a3, *a3, *a3, *a3, *a3, *a3]\n" +
		"  - &a5 [*a4, *a4, *a4, *a4, *a4, *a4, *a4, *a4, *a4, *a4]\n" +
		"  - &a6 [*a5, *a5, *a5, *a5, *a5, *a5, *a5, *a5, *a5, *a5]\n" +
		"  - &a7 [*a6, *a6, *a6, *a6, *a6, *a6, *a6, *a6, *a6, *a6]\n"
	tests := []struct {
		name, file, body string
		line             int
		path, msg        string
	}{
		{"second YAML document", "tiny.bench.yaml", goodBench + "---\nname: other\n", 14, "", "more than one YAML document"},
		{"queue tag outside responses", "tiny.bench.yaml", strings.Replace(goodBench, "expect: { queue: billing }", "expect: { queue: !queue [billing, other] }", 1), 10, "cases[0].expect.queue", "tag !queue"},
		{"custom tag on a mapping", "tiny.bench.yaml", strings.Replace(goodBench, `args: { ticket: "x" }`, `args: !ticket { ticket: "x" }`, 1), 9, "cases[0].args", "tag !ticket"},
		{"alias expansion bomb", "tiny.bench.yaml", bomb, 0, "scorer", "expand"},
		{"empty on-pareto list", "tiny.bench.yaml", goodBench + "gate:\n  on-pareto: []\n", 14, "gate.on-pareto", "names no system"},
		{"empty min-passed map", "tiny.bench.yaml", goodBench + "gate:\n  min-passed: {}\n", 14, "gate.min-passed", "names no system"},
		{"empty outcomes map", "tiny.bench.yaml", goodBench + "gate:\n  outcomes: { one: {} }\n", 14, "gate.outcomes.one", "names no case"},
		{"empty gate", "tiny.bench.yaml", goodBench + "gate: {}\n", 13, "gate", "no rules"},
		{"min-passed zero holds vacuously", "tiny.bench.yaml", goodBench + "gate:\n  min-passed: { one: 0 }\n", 14, "gate.min-passed.one", "from 1 to 1"},
		{"min-passed above the case count never holds", "tiny.bench.yaml", goodBench + "gate:\n  min-passed: { one: 2 }\n", 14, "gate.min-passed.one", "from 1 to 1"},
		{"fractional min-passed", "tiny.bench.yaml", goodBench + "gate:\n  min-passed: { one: 0.5 }\n", 14, "gate.min-passed.one", "must be an integer"},
		{"zero rate holds vacuously", "tiny.foundry.yaml", goodFoundry + "gate:\n  min-train-rate: 0\n", 13, "gate.min-train-rate", "above 0"},
		{"fractional max-tokens", "tiny.bench.yaml", goodBench + "gate:\n  max-tokens: { one: 10.5 }\n", 14, "gate.max-tokens.one", "must be an integer"},
		{"foundry without candidates points at the file", "tiny.foundry.yaml", strings.Replace(goodFoundry, "candidates: [single.algal.json]\n", "", 1), 1, "", "needs candidates, a generator, or both"},
		{"min-holdout-rate without holdout cases", "tiny.foundry.yaml", goodFoundry + "gate:\n  min-holdout-rate: 1\n", 13, "gate.min-holdout-rate", "no holdout case"},
		{"min-validation-rate without validation cases", "tiny.foundry.yaml", goodFoundry + "gate:\n  min-validation-rate: 0.5\n", 13, "gate.min-validation-rate", "no validation case"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := writeWorkload(t, tc.file, tc.body)
			_, err := Load(p)
			var we *fault.Error
			if !errors.As(err, &we) {
				t.Fatalf("want a positioned *fault.Error, got %v", err)
			}
			if we.File != p || (tc.line != 0 && we.Line != tc.line) || (tc.line == 0 && we.Line == 0) {
				t.Errorf("at %s:%d:%d, want line %d (%v)", we.File, we.Line, we.Column, tc.line, we)
			}
			if tc.path != "" && !strings.HasPrefix(we.Path, tc.path) {
				t.Errorf("path %q, want %q (%v)", we.Path, tc.path, we)
			}
			if !strings.Contains(we.Message, tc.msg) {
				t.Errorf("message %q lacks %q", we.Message, tc.msg)
			}
		})
	}
}

// Anchors and aliases within a sane size stay usable.
func TestAliasesStillWork(t *testing.T) {
	t.Parallel()
	body := strings.Replace(goodBench, `args: { ticket: "x" }`, `args: &args { ticket: "x" }`, 1) +
		"  - id: b\n    args: *args\n    expect: { queue: billing }\n    responses:\n      cheap: { route: billing }\n"
	w := loadWorkload(t, writeWorkload(t, "tiny.bench.yaml", body))
	if len(w.Cases) != 2 || w.Cases[1].Args()["ticket"] != "x" {
		t.Fatalf("cases %+v", w.Cases)
	}
}
