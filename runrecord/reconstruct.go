package runrecord

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/algal-assay/assay/engine/fault"
)

// Reconstruction is the degraded view of a run whose record is missing or
// unusable, built only from what the directory shows. Every field is a
// guess from file names and is labelled as such; in particular Pipeline
// stays empty unless exactly one source singles a pipeline out.
type Reconstruction struct {
	// Pipeline is claimed only when distinguishable: named by the run
	// directory's own _assembly.json, or the only supplied workload whose
	// declared files account for every file present.
	Pipeline string
	// PipelineSource says how Pipeline was found: "_assembly.json",
	// "file names", or "" (not distinguishable).
	PipelineSource string
	// Candidates are the supplied workloads consistent with the files.
	Candidates []string
	// Files are the run directory's files (harness files and temporary
	// files excluded), sorted, with the roster phases that declare them.
	Files []ReconstructedFile
	Notes []string
}

// ReconstructedFile is one file on disk and the phases that could have
// written it. Phase attribution is certain only when exactly one declares it;
// loop iterations and branch selections cannot be recovered at all.
type ReconstructedFile struct {
	File   string
	Phases []int
}

func reconstruct(runDir string, opts Options) (*Reconstruction, error) {
	entries, err := os.ReadDir(runDir)
	if err != nil {
		return nil, &fault.Error{Code: CodeRunDir, File: runDir, Message: "cannot be listed", Err: unwrapPath(err)}
	}
	r := &Reconstruction{Notes: []string{"reconstructed from file names: loop iterations, branch selections and write order are not recoverable"}}
	var files []string
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || name == RecordFile || name == AssemblyFile || isTempName(name) {
			continue
		}
		files = append(files, name)
	}
	slices.Sort(files)

	var roster *Assembly
	if a, _, err := ReadAssembly(filepath.Join(runDir, AssemblyFile)); err == nil {
		r.Pipeline, r.PipelineSource = a.Pipeline, AssemblyFile
		roster = &a
		r.Notes = append(r.Notes, "pipeline named by the run directory's "+AssemblyFile)
	}

	var sole *Assembly
	for _, w := range opts.Workloads {
		if w.Assembly == nil {
			continue
		}
		a, err := ParseAssembly(w.Assembly)
		if err != nil || !declaresAll(a, files) {
			continue
		}
		r.Candidates = append(r.Candidates, w.Pipeline)
		if len(r.Candidates) == 1 {
			sole = &a
		} else {
			sole = nil
		}
	}
	if roster == nil {
		switch {
		case len(r.Candidates) == 1:
			r.Pipeline, r.PipelineSource, roster = r.Candidates[0], "file names", sole
			r.Notes = append(r.Notes, "pipeline inferred from file names: the only supplied workload declaring every file present")
		case len(r.Candidates) > 1:
			r.Notes = append(r.Notes, "pipeline not distinguishable: "+strings.Join(r.Candidates, ", ")+" all declare these files")
		default:
			r.Notes = append(r.Notes, "pipeline unknown: no supplied workload declares these files")
		}
	}
	for _, f := range files {
		rf := ReconstructedFile{File: f}
		if roster != nil {
			for _, p := range roster.Phases {
				if slices.ContainsFunc(p.Outputs, func(o Output) bool { return o.File == f }) {
					rf.Phases = append(rf.Phases, p.N)
				}
			}
		}
		r.Files = append(r.Files, rf)
	}
	return r, nil
}

// declaresAll reports whether a's outputs include every file (and there is
// at least one file: an empty directory singles out nothing).
func declaresAll(a Assembly, files []string) bool {
	if len(files) == 0 {
		return false
	}
	declared := map[string]bool{}
	for _, p := range a.Phases {
		for _, o := range p.Outputs {
			declared[o.File] = true
		}
	}
	for _, f := range files {
		if !declared[f] {
			return false
		}
	}
	return true
}
