package main

import (
	"fmt"
	"io"

	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/harness"
	"github.com/algal-assay/assay/internal/atomicfile"
	"github.com/algal-assay/assay/report"
)

// printResultsJSON prints the job's results as one canonical JSON line
// (report.JSON).
func printResultsJSON(w io.Writer, results []*harness.Result, total int, stopErr error) error {
	b, err := report.JSON(harness.JobResults(results, total, stopErr))
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// writeJUnit writes the job's JUnit report (report.JUnit) atomically.
func writeJUnit(path string, results []*harness.Result, stopErr error) error {
	data, err := report.JUnit(harness.JobResults(results, len(results), stopErr))
	if err != nil {
		return err
	}
	if err := atomicfile.Write(path, data); err != nil {
		return &fault.Error{Code: fault.IOFailed, File: path, Message: "cannot write the JUnit report: " + err.Error()}
	}
	return nil
}
