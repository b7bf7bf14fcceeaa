package diff

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/algal-assay/assay/ci/verify"
	"github.com/algal-assay/assay/engine/bench"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/foundry"
	"github.com/algal-assay/assay/engine/vm"
	"github.com/algal-assay/assay/harness"
	"github.com/algal-assay/assay/harness/repeats"
	"github.com/algal-assay/assay/harness/workload"
	"github.com/algal-assay/assay/report"
)

// Error codes carried by [Error].
const (
	CodeRuns    = "RUNS_INVALID"    // a runs root or run directory cannot be read
	CodeArchive = "ARCHIVE_INVALID" // the receipt archive cannot be read
	// CodeEvidence: a run directory's files disagree with what its
	// evidence re-derives to (an edited gate.json or verification.json, a
	// record at odds with the directory), or cannot be re-derived.
	CodeEvidence = "EVIDENCE_INVALID"
)

// Workload kinds.
const (
	KindBench   = report.KindBench
	KindFoundry = report.KindFoundry
)

// Run is one run directory read back.
type Run struct {
	Workload string
	Kind     string
	Dir      string
	Slug     string
	// Status is the run record's final status (complete, failed, ...).
	Status string
	// Modified: the run was made on a working tree with uncommitted
	// changes (the record's foundry_modified), so its commit does not pin
	// what it ran.
	Modified bool
	// Bench or Foundry is set when the run left a report. Bench holds no
	// per-case results: of each case, a comparison reads only its id,
	// verdict and receipt, kept in BenchVerdicts (one per system of Bench,
	// in its order), so a set of many runs stays small.
	Bench         *bench.Report
	BenchVerdicts []SystemVerdicts
	Foundry       *foundry.Report
	// BudgetExhausted: a foundry that ran out of habitat budget wrote
	// budget.json instead of a report.
	BudgetExhausted bool
	// Repeats is a repeated run's aggregate, re-derived from its repeats'
	// reports; Bench or Foundry is then its pooled view.
	Repeats      *repeats.Aggregate
	Verification *Verification
	Gate         *GateFile
	// Compare is the run's workload's compare block (its default when
	// the workload is unknown).
	Compare workload.Compare
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

// Evidence is what a run set is read against: the store its reports'
// receipts and manifests are in, and the workload files its runs were made
// from. A run's verification and gate verdicts are re-derived from its
// report and its workload (ci/verify.CheckRun); the verification.json and
// gate.json it holds are only compared with them, never believed.
type Evidence struct {
	Store    *vm.Workbench
	StoreDir string
	// Workloads are the workloads of this side (its tree's).
	Workloads *verify.Workloads
}

// LoadSet reads every workload's run under root. A missing root is an
// empty set: a base that has no workloads yet is not an error. A run
// directory whose files disagree with what its evidence re-derives to is
// an error (CodeEvidence) naming the file and field.
func LoadSet(ctx context.Context, root string, ev Evidence) (*Set, error) {
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
		if err := s.loadWorkload(ctx, e.Name(), ev); err != nil {
			return nil, err
		}
	}
	slices.SortFunc(s.Runs, func(a, b *Run) int { return strings.Compare(a.Workload, b.Workload) })
	slices.Sort(s.Ignored)
	return s, nil
}

// loadWorkload loads the run of the workload directory name under the
// set's root, and notes the older runs it ignored.
func (s *Set) loadWorkload(ctx context.Context, name string, ev Evidence) error {
	dir, ignored, err := pickRun(filepath.Join(s.Root, name))
	if err != nil {
		return err
	}
	for _, ig := range ignored {
		s.Ignored = append(s.Ignored, filepath.ToSlash(filepath.Join(name, ig)))
	}
	if dir == "" {
		return nil
	}
	r, err := LoadRun(ctx, dir, ev)
	if err != nil {
		return err
	}
	if r.Workload == "" {
		r.Workload = name
	}
	s.Runs = append(s.Runs, r)
	return nil
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
		if t := writtenAt(filepath.Join(wdir, e.Name())); t >= 0 {
			cands = append(cands, cand{e.Name(), t})
		}
	}
	if len(cands) == 0 {
		return "", nil, nil
	}
	slices.SortFunc(cands, func(a, b cand) int {
		return cmp.Or(cmp.Compare(b.t, a.t), strings.Compare(a.name, b.name))
	})
	var ignored []string
	for _, c := range cands[1:] {
		ignored = append(ignored, c.name)
	}
	return filepath.Join(wdir, cands[0].name), ignored, nil
}

// writtenAt is when a run directory's gate.json (else foundry-run.yml)
// was written, in Unix nanoseconds; -1 when it holds neither.
func writtenAt(dir string) int64 {
	for _, f := range []string{"gate.json", "foundry-run.yml"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err == nil {
			return st.ModTime().UnixNano()
		}
	}
	return -1
}

// LoadRun reads one run directory through ci/verify.CheckRun: the record
// must agree with the directory, and the report's verification and every
// gate verdict are re-derived; the Run carries the re-derived ones.
func LoadRun(ctx context.Context, dir string, ev Evidence) (*Run, error) {
	res, err := verify.CheckRun(ctx, dir, verify.Options{Evidence: ev.Store, StoreDir: ev.StoreDir, Workloads: ev.Workloads})
	if err != nil {
		return nil, &fault.Error{Code: CodeRuns, Message: "run directory " + dir, Err: err}
	}
	if dis := res.Disagreements(); len(dis) > 0 || res.Run == nil {
		if len(dis) == 0 {
			dis = res.Mismatches
		}
		return nil, &fault.Error{Code: CodeEvidence, Message: fmt.Sprintf("run directory %s does not hold up: %s", dir, strings.Join(dis, "; "))}
	}
	return runOf(dir, res.Run), nil
}

// runOf is the run a checked run directory holds.
func runOf(dir string, c *verify.RunCheck) *Run {
	rec := c.Record
	r := &Run{Dir: dir, Slug: cmp.Or(rec.RunSlug, filepath.Base(dir)), Workload: rec.Pipeline, Status: rec.Status, Modified: rec.FoundryModified,
		Kind: strings.TrimPrefix(rec.HarnessName, "assay-"), Compare: workload.DefaultCompare()}
	if w := c.Workload; w != nil && w.Compare.FailOn != "" {
		r.Compare = w.Compare
	}
	if c.Derived != nil {
		r.takeDerived(c.Derived)
	}
	return r
}

// takeDerived takes what re-deriving the run gave: its reports (pooled
// over its repeats), the verification and the gate verdicts.
func (r *Run) takeDerived(d *harness.Derived) {
	r.Bench = d.Bench
	if d.Foundry != nil {
		r.Foundry = d.Foundry.Report
		r.BudgetExhausted = d.Foundry.Report == nil
		r.Kind = KindFoundry
	} else {
		r.Kind = KindBench
	}
	if a := d.Repeats; a != nil {
		r.Repeats = a
		if a.Kind == workload.KindBench {
			r.Bench = a.PooledBench()
		} else {
			r.Foundry = a.PooledFoundry()
			r.BudgetExhausted = r.Foundry == nil
		}
	}
	r.Bench, r.BenchVerdicts = benchVerdicts(r.Bench)
	v := d.Verification
	r.Verification = &Verification{OK: v.OK, CheckedReceipts: v.CheckedReceipts, Mismatches: append([]string{}, v.Mismatches...)}
	g := &GateFile{Passed: d.GatesPassed(), Rules: []GateRule{}}
	for _, x := range d.Gates {
		g.Rules = append(g.Rules, GateRule{Name: x.Rule.Name(), Rule: x.Rule.Kind, At: x.Rule.Pos.String(), Passed: x.Passed, Message: x.Message})
	}
	r.Gate = g
}
