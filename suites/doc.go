// Package suites holds the workload files (*.bench.yaml, *.foundry.yaml)
// that `go test ./suites/...` and `assay run` execute, and the Ginkgo
// suite that turns each workload's run into specs: one container per
// workload, an entry per contender and case, a verification spec, and one
// spec per gate rule. Only verification and gate rules decide pass or
// fail; a case failure the gate tolerates is reported, not failed.
//
// Extra workload roots can be added with ASSAY_SUITES (a path list); run
// directories go to ASSAY_SUITES_OUT when set, else to a temporary
// directory removed after the suite.
//
// Workloads run while the spec tree is built, so run the suite in one
// process: `ginkgo -p` would have every parallel process run every
// workload (the cases inside a workload already run concurrently).
// Reports for GitHub: `go run github.com/onsi/ginkgo/v2/ginkgo
// --junit-report=junit.xml --json-report=report.json ./suites`.
package suites
