package prcheck

import "strings"

// Summary is the one JSON line `assay ci pr` prints: the verdict
// {"passed","workloads","failed","changed"}, the check's problems, the
// artifact directory and the pull request.
func (r *Result) Summary() map[string]any {
	v := r.Diff.Verdict
	return map[string]any{
		"passed": v.Passed, "workloads": v.Workloads, "failed": v.Failed, "changed": v.Changed,
		"problems": r.Diff.Problems, "artifact": r.Artifact, "pr": r.PR,
	}
}

// FailureReason is why a Failed check failed: the failed workloads, then
// the check's own problems.
func (r *Result) FailureReason() string {
	return strings.Join(append(append([]string{}, r.Diff.Verdict.Failed...), r.Diff.Problems...), "; ")
}
