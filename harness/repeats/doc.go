// Package repeats runs a workload's repeats and aggregates them. Run
// wraps a Measure (the harness's bench or foundry, one repeat each) and
// runs it k times on fresh sessions without knowing which of the two it
// is; the reports (or foundry results) of the k repeats become one
// Aggregate, per contender and case: samples, passes, pass/fail/flaky
// verdicts, pass@k and pass^k, intervals clustered by case, and the Pareto
// set or promotion over the evidence pooled across repeats. Its Value is
// repeats.json, which is re-derived from the verified reports on every
// read and never taken as evidence.
package repeats
