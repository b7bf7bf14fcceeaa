// Package rundoc reads what a workload run directory holds for the verbs
// that take one: its report (`assay bench|foundry verify|inspect
// RUN_DIR`), its gate verdict, and today's assembly of the workloads its
// record is compared with (`assay record show`). What it reads is
// derived: ci verify re-derives it, and nothing here is evidence.
package rundoc

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/harness"
	"github.com/algal-assay/assay/harness/rundir"
	"github.com/algal-assay/assay/harness/workload"
	"github.com/algal-assay/assay/runrecord"
)

// Report reads a report file, or the report of a workload run directory:
// report.json, or budget.json when a foundry exhausted its budget.
func Report(path string) (any, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		for _, name := range []string{rundir.ReportFile, rundir.BudgetFile} {
			p := filepath.Join(path, name)
			if _, err := os.Stat(p); err == nil {
				return canon.ReadFile(p, 0)
			}
		}
		return nil, &fault.Error{Code: fault.IOFailed, Message: fmt.Sprintf("%s: a run directory holds %s (or %s); neither is there", path, rundir.ReportFile, rundir.BudgetFile)}
	}
	return canon.ReadFile(path, 0)
}

// GateVerdict reads the run directory's gate.json for a status line:
// "gate passed, 8 of 8 rules hold", "gate FAILED, ...", or why there is
// no verdict.
func GateVerdict(dir string) string {
	data, err := os.ReadFile(filepath.Join(dir, rundir.GateFile))
	if err != nil {
		return "no gate verdict: " + rundir.GateFile + " was not written"
	}
	var g struct {
		Passed *bool `json:"passed"`
		Rules  []struct {
			Passed bool `json:"passed"`
		} `json:"rules"`
	}
	if json.Unmarshal(data, &g) != nil || g.Passed == nil {
		return "no gate verdict: " + rundir.GateFile + " does not parse"
	}
	held := 0
	for _, r := range g.Rules {
		if r.Passed {
			held++
		}
	}
	word := "passed"
	if !*g.Passed {
		word = "FAILED"
	}
	if len(g.Rules) == 0 {
		return "gate " + word + ", no rules"
	}
	return fmt.Sprintf("gate %s, %d of %d rules hold", word, held, len(g.Rules))
}

// Assemblies builds today's assembly of every workload under paths
// (default suites/ when it is a directory), so a record can be checked
// for drift. A workload that no longer loads is reported on warn and
// left out: the record is then compared with nothing rather than with a
// guess.
func Assemblies(paths []string, warn io.Writer) ([]runrecord.Workload, error) {
	if len(paths) == 0 {
		if st, err := os.Stat(workload.DefaultSuites); err != nil || !st.IsDir() {
			return nil, nil
		}
		paths = []string{workload.DefaultSuites}
	}
	files, err := workload.Discover(paths...)
	if err != nil {
		return nil, err
	}
	var out []runrecord.Workload
	for _, f := range files {
		w, err := workload.Load(f)
		if err != nil {
			fmt.Fprintf(warn, "assay: warning: %v\n", err)
			continue
		}
		data, err := runrecord.EncodeAssembly(harness.Assembly(w))
		if err != nil {
			return nil, err
		}
		out = append(out, runrecord.Workload{Pipeline: w.Name, Assembly: data})
	}
	return out, nil
}

// AssemblyWorkload is today's assembly given as an _assembly.json's bytes
// (`assay record show --assembly`), named by its own pipeline unless
// pipeline names the one to read the record against.
func AssemblyWorkload(data []byte, pipeline string) (runrecord.Workload, error) {
	a, err := runrecord.ParseAssembly(data)
	if err != nil {
		return runrecord.Workload{}, err
	}
	name := a.Pipeline
	if pipeline != "" {
		name = pipeline
	}
	return runrecord.Workload{Pipeline: name, Assembly: data}, nil
}
