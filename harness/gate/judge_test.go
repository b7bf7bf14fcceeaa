package gate

import (
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/bench"
	"github.com/algal-assay/assay/harness/workload"
)

// benchGate is a bench workload with the given rules, written at
// w.bench.yaml line 10 onwards.
func benchGate(rules ...workload.Rule) *workload.Workload {
	for i := range rules {
		rules[i].Pos = workload.Pos{File: "w.bench.yaml", Line: 10 + i, Column: 5}
	}
	return &workload.Workload{Name: "w", Kind: workload.KindBench, Gate: workload.Gate{Rules: rules}}
}

// twoSystems: cheap passed a of a and b, used 30 tokens and 4 calls;
// frontier passed both; only frontier is on the Pareto set.
func twoSystems() *bench.Report {
	return &bench.Report{Pareto: []string{"frontier"}, Systems: []bench.SystemResult{
		{ID: "cheap", Passed: 1, Total: 2, EffectCalls: 4, Usage: bench.Tally{TokensIn: 20, TokensOut: 10}, Cases: []bench.CaseResult{
			{ID: "a", Passed: true, Outcome: "ok"},
			{ID: "b", Passed: false, Outcome: "wrong", Expect: map[string]any{"queue": "billing"}, Outputs: map[string]any{"queue": "other"}},
		}},
		{ID: "frontier", Passed: 2, Total: 2, EffectCalls: 2, Cases: []bench.CaseResult{{ID: "a", Passed: true}, {ID: "b", Passed: true}}},
	}}
}

func TestEvaluateBenchSaysWhatWasRequiredAndMeasured(t *testing.T) {
	t.Parallel()
	w := benchGate(
		workload.Rule{Kind: workload.RuleMinPassed, System: "cheap", Number: 2},
		workload.Rule{Kind: workload.RuleMinPassed, System: "frontier", Number: 2},
		workload.Rule{Kind: workload.RuleOnPareto, System: "cheap"},
		workload.Rule{Kind: workload.RuleMaxTokens, System: "cheap", Number: 30},
		workload.Rule{Kind: workload.RuleMaxCalls, System: "cheap", Number: 3.5},
		workload.Rule{Kind: workload.RuleOutcomes, System: "cheap", Case: "b", Text: "fail"},
		workload.Rule{Kind: workload.RuleMinPassed, System: "mid", Number: 1},
	)
	got := EvaluateBench(w, twoSystems())
	want := []struct {
		passed  bool
		message string
	}{
		{false, `system "cheap" passed 1 of 2 cases; the gate at w.bench.yaml:10:5 requires at least 2. Failing cases: b (outcome wrong, expected {"queue":"billing"}, got {"queue":"other"}).`},
		{true, `system "frontier" passed 2 of 2 cases; the gate at w.bench.yaml:11:5 requires at least 2.`},
		{false, `system "cheap" is not on the Pareto set [frontier]: another system is at least as good on every axis and better on one; the gate at w.bench.yaml:12:5 requires it to be on the set.`},
		{true, `system "cheap" used 30 tokens (20 in, 10 out); the gate at w.bench.yaml:13:5 allows at most 30.`},
		{false, `system "cheap" made 4 effect calls; the gate at w.bench.yaml:14:5 allows at most 3.5.`},
		{true, `system "cheap" case "b" failed (outcome wrong, expected {"queue":"billing"}, got {"queue":"other"}); the gate at w.bench.yaml:15:5 expects it to fail.`},
		{false, `gate min-passed (w.bench.yaml:16:5): system "mid" is not in the report`},
	}
	if len(got) != len(want) {
		t.Fatalf("%d results for %d rules", len(got), len(want))
	}
	for i, g := range got {
		if g.Passed != want[i].passed || g.Message != want[i].message || g.Rule != w.Gate.Rules[i] {
			t.Errorf("rule %d: %v %q\nwant %v %q", i+1, g.Passed, g.Message, want[i].passed, want[i].message)
		}
	}
	if Passed(got) || !Passed(got[1:2]) || !Passed(nil) {
		t.Error("Passed does not say whether every rule holds")
	}
}

// Without repeats, Judge is the single report's verdict; a repeat rule
// reads the report as one repeat.
func TestJudgeOfOneRepeat(t *testing.T) {
	t.Parallel()
	w := benchGate(
		workload.Rule{Kind: workload.RuleMinPassRate, System: "cheap", Number: 0.5},
		workload.Rule{Kind: workload.RuleMaxFlaky, System: "cheap", Number: 0},
	)
	got := Judge(w, twoSystems(), nil, nil)
	if len(got) != 2 || !got[0].Passed || !got[1].Passed {
		t.Fatalf("%+v", got)
	}
	for _, g := range got {
		if !strings.Contains(g.Message, `system "cheap"`) || !strings.Contains(g.Message, "w.bench.yaml:1") {
			t.Errorf("message %q names neither the system nor the rule's place", g.Message)
		}
	}
}

// The words gate messages and summary.md share.
func TestWords(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ got, want string }{
		{RepeatWord([]int{2}), "repeat 2"},
		{RepeatWord([]int{1, 3}), "repeats 1, 3"},
		{MeanCount(6, 3), "2"},
		{MeanCount(7, 3), "2.33"},
		{ShortJSON(map[string]any{"a": "b"}), `{"a":"b"}`},
		{ShortJSON(strings.Repeat("x", 200)), `"` + strings.Repeat("x", 116) + "..."},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}
