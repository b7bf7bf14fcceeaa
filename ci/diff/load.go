package diff

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/algal-assay/assay/engine/bench"
	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/foundry"
	"github.com/algal-assay/assay/engine/yamlsize"
	"gopkg.in/yaml.v3"
)

// Error codes carried by [Error].
const (
	CodeRuns    = "RUNS_INVALID"    // a runs root or run directory cannot be read
	CodeArchive = "ARCHIVE_INVALID" // the receipt archive cannot be read
)

// Workload kinds.
const (
	KindBench   = "bench"
	KindFoundry = "foundry"
)

// Run is one run directory read back.
type Run struct {
	Workload string
	Kind     string
	Dir      string
	Slug     string
	// Status is the run record's final status (complete, failed, ...).
	Status string
	// Bench or Foundry is set when the run left a report.
	Bench   *bench.Report
	Foundry *foundry.Report
	// BudgetExhausted: a foundry that ran out of habitat budget wrote
	// budget.json instead of a report.
	BudgetExhausted bool
	Verification    *Verification
	Gate            *GateFile
}

// Verification is verification.json.
type Verification struct {
	OK              bool     `json:"ok"`
	CheckedReceipts int      `json:"checkedReceipts"`
	Mismatches      []string `json:"mismatches"`
}

// GateFile is gate.json.
type GateFile struct {
	Passed bool       `json:"passed"`
	Rules  []GateRule `json:"rules"`
}

// GateRule is one rule's verdict in gate.json.
type GateRule struct {
	Name    string `json:"name"`
	Rule    string `json:"rule"`
	At      string `json:"at"`
	Passed  bool   `json:"passed"`
	Message string `json:"message"`
}

// Passed reports whether the run counts as passing: complete, verified,
// every gate rule held.
func (r *Run) Passed() bool {
	return r.Status == "complete" && r.Verification != nil && r.Verification.OK && r.Gate != nil && r.Gate.Passed
}

// Set is the runs under one runs root, one per workload, sorted by name.
type Set struct {
	Root string
	Runs []*Run
	// Ignored lists older run directories passed over (relative to Root).
	Ignored []string
}

// Lookup returns the run of workload name, or nil.
func (s *Set) Lookup(name string) *Run {
	if s == nil {
		return nil
	}
	for _, r := range s.Runs {
		if r.Workload == name {
			return r
		}
	}
	return nil
}

// LoadSet reads every workload's run under root. A missing root is an
// empty set: a base that has no workloads yet is not an error.
func LoadSet(root string) (*Set, error) {
	s := &Set{Root: root}
	entries, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, &fault.Error{Code: CodeRuns, Message: "runs root " + root, Err: err}
	}
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		dir, ignored, err := pickRun(filepath.Join(root, e.Name()))
		if err != nil {
			return nil, err
		}
		for _, ig := range ignored {
			s.Ignored = append(s.Ignored, filepath.ToSlash(filepath.Join(e.Name(), ig)))
		}
		if dir == "" {
			continue
		}
		r, err := LoadRun(dir)
		if err != nil {
			return nil, err
		}
		if r.Workload == "" {
			r.Workload = e.Name()
		}
		s.Runs = append(s.Runs, r)
	}
	slices.SortFunc(s.Runs, func(a, b *Run) int { return strings.Compare(a.Workload, b.Workload) })
	slices.Sort(s.Ignored)
	return s, nil
}

// pickRun chooses the run directory of one workload directory: the one
// whose gate.json (else foundry-run.yml) was written last; staging
// directories (hidden) are never runs.
func pickRun(wdir string) (string, []string, error) {
	entries, err := os.ReadDir(wdir)
	if err != nil {
		return "", nil, &fault.Error{Code: CodeRuns, Message: "workload directory " + wdir, Err: err}
	}
	type cand struct {
		name string
		t    int64
	}
	var cands []cand
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		var t int64 = -1
		for _, f := range []string{"gate.json", "foundry-run.yml"} {
			if st, err := os.Stat(filepath.Join(wdir, e.Name(), f)); err == nil {
				t = st.ModTime().UnixNano()
				break
			}
		}
		if t < 0 {
			continue
		}
		cands = append(cands, cand{e.Name(), t})
	}
	if len(cands) == 0 {
		return "", nil, nil
	}
	slices.SortFunc(cands, func(a, b cand) int {
		if a.t != b.t {
			if a.t > b.t {
				return -1
			}
			return 1
		}
		return strings.Compare(a.name, b.name)
	})
	var ignored []string
	for _, c := range cands[1:] {
		ignored = append(ignored, c.name)
	}
	return filepath.Join(wdir, cands[0].name), ignored, nil
}

// LoadRun reads one run directory.
func LoadRun(dir string) (*Run, error) {
	r := &Run{Dir: dir, Slug: filepath.Base(dir)}
	bad := func(file string, err error) error {
		return &fault.Error{Code: CodeRuns, Message: filepath.Join(dir, file), Err: err}
	}
	if data, err := os.ReadFile(filepath.Join(dir, "foundry-run.yml")); err == nil {
		var rec struct {
			Pipeline    string `yaml:"pipeline"`
			HarnessName string `yaml:"harness_name"`
			RunSlug     string `yaml:"run_slug"`
			Status      string `yaml:"status"`
		}
		var doc yaml.Node
		if err := yaml.Unmarshal(data, &doc); err != nil {
			return nil, bad("foundry-run.yml", err)
		}
		// The same alias byte bound as every YAML reader (runrecord's).
		if _, over := yamlsize.Check(&doc, 2*int64(len(data))+2); over != nil {
			return nil, bad("foundry-run.yml", fmt.Errorf("line %d, column %d: aliases expand the record past twice its size; a run record spells every value out", over.Line, over.Column))
		}
		if doc.Kind != 0 {
			if err := doc.Decode(&rec); err != nil {
				return nil, bad("foundry-run.yml", err)
			}
		}
		r.Workload, r.Status = rec.Pipeline, rec.Status
		if rec.RunSlug != "" {
			r.Slug = rec.RunSlug
		}
		r.Kind = strings.TrimPrefix(rec.HarnessName, "assay-")
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, bad("foundry-run.yml", err)
	}

	if v, ok, err := readJSON(dir, "report.json"); err != nil {
		return nil, bad("report.json", err)
	} else if ok {
		obj, _ := v.(map[string]any)
		switch obj["contract"] {
		case bench.ReportContract:
			if r.Bench, err = bench.ParseReport(v); err != nil {
				return nil, bad("report.json", err)
			}
			r.Kind = KindBench
		case foundry.ReportContract:
			if r.Foundry, err = foundry.ParseReport(v); err != nil {
				return nil, bad("report.json", err)
			}
			r.Kind = KindFoundry
		default:
			return nil, bad("report.json", fmt.Errorf("contract %v is neither %s nor %s", obj["contract"], bench.ReportContract, foundry.ReportContract))
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "budget.json")); err == nil {
		r.BudgetExhausted = true
		r.Kind = KindFoundry
	}
	if err := readInto(dir, "verification.json", &r.Verification); err != nil {
		return nil, bad("verification.json", err)
	}
	if err := readInto(dir, "gate.json", &r.Gate); err != nil {
		return nil, bad("gate.json", err)
	}
	return r, nil
}

func readJSON(dir, name string) (any, bool, error) {
	path := filepath.Join(dir, name)
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	v, err := canon.ReadFile(path, 0)
	if err != nil {
		return nil, false, err
	}
	return v, true, nil
}

// readInto decodes a small JSON file through canon (strict) and then into
// dst, leaving dst nil when the file is absent.
func readInto[T any](dir, name string, dst **T) error {
	v, ok, err := readJSON(dir, name)
	if err != nil || !ok {
		return err
	}
	b, err := canon.Encode(v)
	if err != nil {
		return err
	}
	var out T
	if err := unmarshalJSON(b, &out); err != nil {
		return err
	}
	*dst = &out
	return nil
}
