// Package repeats aggregates a repeated run: the reports (or foundry
// results) of its k repeats become one Aggregate, per contender and case:
// samples, passes, pass/fail/flaky verdicts, pass@k and pass^k,
// intervals clustered by case, and the Pareto set or promotion over the
// evidence pooled across repeats. Its Value is repeats.json, which is
// re-derived from the verified reports on every read and never taken as
// evidence. Running the repeats is the harness's (its Measure); this
// package only pools what they measured.
package repeats
