package prcheck

import (
	"reflect"
	"testing"

	"github.com/algal-assay/assay/ci/diff"
)

func TestSummaryAndFailureReason(t *testing.T) {
	t.Parallel()
	d := &diff.Diff{Verdict: diff.Verdict{Passed: false, Workloads: 3, Failed: []string{"triage"}, Changed: []string{"pick"}},
		Problems: []string{"suites/bad.bench.yaml: does not load"}}
	r := &Result{Diff: d, Artifact: "out/check", PR: 7, Failed: true}
	want := map[string]any{"passed": false, "workloads": 3, "failed": []string{"triage"}, "changed": []string{"pick"},
		"problems": []string{"suites/bad.bench.yaml: does not load"}, "artifact": "out/check", "pr": 7}
	if got := r.Summary(); !reflect.DeepEqual(got, want) {
		t.Errorf("summary %v, want %v", got, want)
	}
	if got, want := r.FailureReason(), "triage; suites/bad.bench.yaml: does not load"; got != want {
		t.Errorf("reason %q, want %q", got, want)
	}
	if len(d.Verdict.Failed) != 1 {
		t.Errorf("FailureReason changed the verdict: %v", d.Verdict.Failed)
	}
}
