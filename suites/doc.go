// Package suites holds the workload files (*.bench.yaml, *.foundry.yaml)
// that `go test ./suites/...` and `assay run` execute, and the Ginkgo
// suite that turns them into specs through package assaysuite: one ordered
// container per workload, labelled with its name and kind, holding a spec
// for the run, one per contender, one for the verification and one per
// gate rule. Only the run, verification and gate rules decide pass or
// fail; a case failure the gate tolerates is reported, not failed.
//
// A workload runs when its first selected spec does, so
// `go test ./suites/... -ginkgo.label-filter=ticket-triage` runs only that
// workload and `ginkgo -p` spreads workloads over processes. Extra
// workload roots can be added with ASSAY_SUITES (a path list); run
// directories go to ASSAY_SUITES_OUT when set, else to a temporary
// directory removed after each passing workload and kept, and named in
// the failure, after a failing one. Reports for GitHub: `go run
// github.com/onsi/ginkgo/v2/ginkgo --junit-report=junit.xml
// --json-report=report.json ./suites`.
package suites
