package verify

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/harness/workload"
)

// Workloads are the workload files run directories are re-derived
// against, by name. A run directory's gate.json can only be checked
// against the gate its workload declares, so a run whose workload is not
// among them fails (its gate verdict is a claim nobody re-derived).
type Workloads struct {
	// Paths are where the workloads were looked for.
	Paths  []string
	byName map[string]*workload.Workload
	// Problems are the workload files that did not load, one line each.
	Problems []string
}

// LoadWorkloads discovers and loads the workload files under paths
// (workload.Discover, then workload.LoadAll, which refuses two workloads of
// one name). Paths that do not exist are skipped: a side of a change may
// have no workloads.
func LoadWorkloads(paths ...string) (*Workloads, error) {
	ws := &Workloads{Paths: paths, byName: map[string]*workload.Workload{}}
	var roots []string
	for _, p := range paths {
		if _, err := os.Stat(p); err == nil {
			roots = append(roots, p)
		}
	}
	if len(roots) == 0 {
		return ws, nil
	}
	files, err := workload.Discover(roots...)
	if err != nil {
		return nil, &fault.Error{Code: fault.IOFailed, Message: "workloads", Err: err}
	}
	loaded, errs := workload.LoadAll(files)
	for i := range files {
		if errs[i] != nil {
			ws.Problems = append(ws.Problems, errs[i].Error())
			continue
		}
		ws.byName[loaded[i].Name] = loaded[i]
	}
	return ws, nil
}

// roots are the absolute directories the workloads were looked for in (a
// root naming a file stands for its directory).
func (ws *Workloads) roots() []string {
	if ws == nil {
		return nil
	}
	var out []string
	for _, p := range ws.Paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			continue
		}
		if st, err := os.Stat(abs); err == nil && !st.IsDir() {
			abs = filepath.Dir(abs)
		}
		out = append(out, abs)
	}
	return out
}

// Lookup returns the workload called name, or nil.
func (ws *Workloads) Lookup(name string) *workload.Workload {
	if ws == nil {
		return nil
	}
	return ws.byName[name]
}

// missing explains why no workload named name was found.
func (ws *Workloads) missing(name string) string {
	if ws == nil || len(ws.Paths) == 0 {
		return "no workload files were given (assay ci verify --workloads PATH)"
	}
	msg := "no workload named " + name + " under " + strings.Join(ws.Paths, ", ")
	if n := len(ws.Problems); n > 0 {
		msg += "; " + itoa(n) + " workload file(s) there did not load, the first: " + oneLine(ws.Problems[0])
	}
	return msg
}

// All returns the loaded workloads, sorted by name.
func (ws *Workloads) All() []*workload.Workload {
	if ws == nil {
		return nil
	}
	out := make([]*workload.Workload, 0, len(ws.byName))
	for _, w := range ws.byName {
		out = append(out, w)
	}
	slices.SortFunc(out, func(a, b *workload.Workload) int { return strings.Compare(a.Name, b.Name) })
	return out
}
