// Package console is what the main job (`assay run`, `assay workloads
// run`) shows a person while and after it runs: the progress display on
// stderr and the summary of every workload's result on stdout.
package console
