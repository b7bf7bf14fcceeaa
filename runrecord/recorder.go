package runrecord

import (
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/algal-assay/assay/engine/fault"
)

// Recorder is the harness's handle on one run's foundry-run.yml. Every
// method validates the transition, rewrites the whole record atomically and
// only then commits the change in memory, so a failed write leaves both the
// file and the Recorder at the previous state. Methods are safe for
// concurrent use (Cancel typically arrives from a signal goroutine).
//
// Once the run is complete, failed or cancelled, every further update
// returns a CodeClosed error, except Cancel, which is then a no-op.
type Recorder struct {
	mu       sync.Mutex
	path     string
	clock    Clock
	assembly Assembly
	rec      Record
}

// Create sets up the run's record during working-directory setup, before
// phase 1: it writes _assembly.json (EncodeAssembly bytes) into runDir, then
// foundry-run.yml with status running, assembly_sha256 of those bytes, and
// every roster phase pending. A nil clock means time.Now. runDir must exist.
func Create(runDir string, a Assembly, meta Meta, clock Clock) (*Recorder, error) {
	if clock == nil {
		clock = time.Now
	}
	assemblyBytes, err := EncodeAssembly(a)
	if err != nil {
		return nil, err
	}
	if st, err := os.Stat(runDir); err != nil || !st.IsDir() {
		return nil, errf(CodeRunDir, runDir, "is not a directory")
	}
	if err := writeAtomic(filepath.Join(runDir, AssemblyFile), assemblyBytes); err != nil {
		return nil, &fault.Error{Code: CodeWrite, File: filepath.Join(runDir, AssemblyFile), Err: err}
	}
	r := &Recorder{path: filepath.Join(runDir, RecordFile), clock: clock, assembly: a}
	r.rec = Record{
		Version:         RecordVersion,
		Pipeline:        a.Pipeline,
		RunSlug:         meta.RunSlug,
		SourceRevision:  a.SourceRevision,
		HarnessName:     a.HarnessName,
		AssemblySHA256:  AssemblySHA256(assemblyBytes),
		FoundryHead:     meta.FoundryHead,
		FoundryModified: meta.FoundryModified,
		StartedAt:       clock().UTC().Truncate(time.Second),
		Status:          RunRunning,
	}
	for _, p := range a.Phases {
		row := Phase{N: p.N, Kind: p.Kind, Status: PhasePending}
		if p.Kind == KindBranch {
			row.Pattern = p.Pattern
		} else {
			row.Skill = p.Skill
		}
		r.rec.Phases = append(r.rec.Phases, row)
	}
	if err := r.write(&r.rec); err != nil {
		return nil, err
	}
	return r, nil
}

// Path is the record's file path.
func (r *Recorder) Path() string { return r.path }

// Snapshot returns a deep copy of the record as last written.
func (r *Recorder) Snapshot() Record {
	r.mu.Lock()
	defer r.mu.Unlock()
	return cloneRecord(&r.rec)
}

// StartPhase marks a pending phase running, immediately before the harness
// invokes it.
func (r *Recorder) StartPhase(n int) error {
	return r.update(n, func(_ *Record, p *Phase, _ AssemblyPhase) error {
		if p.Status != PhasePending {
			return errf(CodeTransition, r.path, "phase %d is %s; only a pending phase can start", n, p.Status)
		}
		p.Status = PhaseRunning
		return nil
	})
}

// AddArtifact appends one artifacts row for a file a running phase wrote
// (id is the artifact id, file its basename in the run directory).
func (r *Recorder) AddArtifact(n int, id, file string) error {
	return r.AddArtifacts(n, 0, []Artifact{{ID: id, File: file}})
}

// NextIteration starts the next iteration of a running phase: iterations
// goes up by one and the new iteration number (1 for the first) is
// returned for AddLoopArtifact.
func (r *Recorder) NextIteration(n int) (int, error) {
	var it int
	err := r.update(n, func(_ *Record, p *Phase, _ AssemblyPhase) error {
		if p.Status != PhaseRunning {
			return errf(CodeTransition, r.path, "phase %d is %s; iterations count only while it runs", n, p.Status)
		}
		p.Iterations++
		it = p.Iterations
		return nil
	})
	return it, err
}

// AddLoopArtifact appends the artifacts row for a file written by one
// iteration (1..iterations so far) of a running phase. The last such row
// naming a file says which phase, and which iteration, last wrote it.
func (r *Recorder) AddLoopArtifact(n, iteration int, id, file string) error {
	if iteration <= 0 {
		return errf(CodeTransition, r.path, "phase %d: iteration %d is not positive", n, iteration)
	}
	return r.AddArtifacts(n, iteration, []Artifact{{ID: id, File: file}})
}

// AddArtifacts appends several artifacts rows (each row's ID and File)
// for files a running phase wrote, with one write of the record: a phase
// that writes many files (a bench run in parts) would otherwise rewrite
// the record once per file. iteration is 0 for a step's files.
func (r *Recorder) AddArtifacts(n, iteration int, rows []Artifact) error {
	return r.update(n, func(rec *Record, p *Phase, _ AssemblyPhase) error {
		if p.Status != PhaseRunning {
			return errf(CodeTransition, r.path, "phase %d is %s; only a running phase writes artifacts", n, p.Status)
		}
		for _, a := range rows {
			if a.ID == "" || !plainBasename(a.File) {
				return errf(CodeTransition, r.path, "phase %d: artifact id %q / file %q: need an id and a plain file name", n, a.ID, a.File)
			}
		}
		if iteration < 0 || iteration > p.Iterations {
			return errf(CodeTransition, r.path, "phase %d: iteration %d not started (iterations is %d)", n, iteration, p.Iterations)
		}
		now := r.now()
		for _, a := range rows {
			p.Artifacts = append(p.Artifacts, Artifact{ID: a.ID, File: a.File, At: now, Iteration: iteration})
		}
		return nil
	})
}

// SelectBranch records the chain member that satisfied a running branch
// phase. member must be one of the roster's chain members.
func (r *Recorder) SelectBranch(n int, member string) error {
	return r.update(n, func(_ *Record, p *Phase, ap AssemblyPhase) error {
		if p.Kind != KindBranch {
			return errf(CodeTransition, r.path, "phase %d is a %s, not a branch", n, p.Kind)
		}
		if p.Status != PhaseRunning {
			return errf(CodeTransition, r.path, "phase %d is %s; a branch selects while it runs", n, p.Status)
		}
		if !slices.Contains(ap.Chain, member) {
			return errf(CodeTransition, r.path, "phase %d: %q is not a member of chain %v", n, member, ap.Chain)
		}
		p.Selected = member
		return nil
	})
}

// DonePhase marks a running phase done once its artifacts are confirmed.
// A branch must have selected a member first.
func (r *Recorder) DonePhase(n int) error {
	return r.update(n, func(_ *Record, p *Phase, _ AssemblyPhase) error {
		if p.Status != PhaseRunning {
			return errf(CodeTransition, r.path, "phase %d is %s; only a running phase can be done", n, p.Status)
		}
		if p.Kind == KindBranch && p.Selected == "" {
			return errf(CodeTransition, r.path, "branch phase %d is done without a selected chain member", n)
		}
		p.Status = PhaseDone
		return nil
	})
}

// SkipPhase marks a pending phase skipped (not intended for this run), so
// that Complete can be reached without it.
func (r *Recorder) SkipPhase(n int) error {
	return r.update(n, func(_ *Record, p *Phase, _ AssemblyPhase) error {
		if p.Status != PhasePending {
			return errf(CodeTransition, r.path, "phase %d is %s; only a pending phase can be skipped", n, p.Status)
		}
		p.Status = PhaseSkipped
		return nil
	})
}

// FailPhase marks phase n failed and ends the run as failed. The record has
// no field for the cause (the seed defines none); the harness reports cause
// in its own output. cause is accepted so call sites read naturally and is
// returned wrapped if the write itself fails.
func (r *Recorder) FailPhase(n int, cause error) error {
	err := r.update(n, func(rec *Record, p *Phase, _ AssemblyPhase) error {
		if p.Status != PhaseRunning && p.Status != PhasePending {
			return errf(CodeTransition, r.path, "phase %d is %s; it cannot fail now", n, p.Status)
		}
		p.Status = PhaseFailed
		rec.Status = RunFailed
		t := r.now()
		rec.FinishedAt = &t
		return nil
	})
	if e, ok := fault.As(err); ok && e == err && cause != nil && e.Err == nil {
		withCause := *e
		withCause.Err = cause
		return &withCause
	}
	return err
}

// Cancel ends a running run as cancelled (a graceful user stop: SIGINT or
// SIGTERM). Phase rows are left as they are: a phase still running under a
// cancelled run is the one that was interrupted. Cancel on a run that has
// already finished is a no-op, so a late signal never rewrites history.
func (r *Recorder) Cancel() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.rec.Status != RunRunning {
		return nil
	}
	next := cloneRecord(&r.rec)
	next.Status = RunCancelled
	t := r.now()
	next.FinishedAt = &t
	return r.commit(&next)
}

// Complete ends the run as complete. It refuses (CodeIncomplete, nothing
// written) unless every phase is done or skipped.
func (r *Recorder) Complete() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.rec.Status != RunRunning {
		return errf(CodeClosed, r.path, "run is already %s", r.rec.Status)
	}
	for _, p := range r.rec.Phases {
		if p.Status != PhaseDone && p.Status != PhaseSkipped {
			return errf(CodeIncomplete, r.path, "phase %d is %s; every phase must be done or skipped", p.N, p.Status)
		}
	}
	next := cloneRecord(&r.rec)
	next.Status = RunComplete
	t := r.now()
	next.FinishedAt = &t
	return r.commit(&next)
}

func (r *Recorder) now() time.Time { return r.clock().UTC().Truncate(time.Second) }

// update applies f to a copy of phase n and commits it if f accepts.
func (r *Recorder) update(n int, f func(*Record, *Phase, AssemblyPhase) error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.rec.Status != RunRunning {
		return errf(CodeClosed, r.path, "run is already %s", r.rec.Status)
	}
	ap, ok := r.assembly.phase(n)
	if !ok {
		return errf(CodePhase, r.path, "phase %d is not in the roster", n)
	}
	next := cloneRecord(&r.rec)
	i := slices.IndexFunc(next.Phases, func(p Phase) bool { return p.N == n })
	if err := f(&next, &next.Phases[i], ap); err != nil {
		return err
	}
	return r.commit(&next)
}

func (r *Recorder) commit(next *Record) error {
	if err := r.write(next); err != nil {
		return err
	}
	r.rec = *next
	return nil
}

func (r *Recorder) write(rec *Record) error {
	data, err := encodeRecord(rec)
	if err == nil {
		err = writeAtomic(r.path, data)
	}
	if err != nil {
		return &fault.Error{Code: CodeWrite, File: r.path, Err: err}
	}
	return nil
}

func cloneRecord(r *Record) Record {
	c := *r
	if r.FinishedAt != nil {
		t := *r.FinishedAt
		c.FinishedAt = &t
	}
	c.Phases = make([]Phase, len(r.Phases))
	for i, p := range r.Phases {
		p.Artifacts = slices.Clone(p.Artifacts)
		c.Phases[i] = p
	}
	return c
}
