package runrecord

import "time"

// File names registered by the protocol.
const (
	// RecordFile is the run record's basename inside the run directory.
	RecordFile = "foundry-run.yml"
	// AssemblyFile is the phase roster the harness writes next to it.
	AssemblyFile = "_assembly.json"
	// RecordVersion is the only run_record_version this package writes or reads.
	RecordVersion = 1
	// AssemblyVersion is the only assembly_version this package writes or reads.
	AssemblyVersion = 1
)

// Run statuses.
const (
	RunRunning   = "running"
	RunComplete  = "complete"
	RunFailed    = "failed"
	RunCancelled = "cancelled"
)

// Phase statuses.
const (
	PhasePending = "pending"
	PhaseRunning = "running"
	PhaseDone    = "done"
	PhaseFailed  = "failed"
	PhaseSkipped = "skipped"
)

// Phase kinds the harness emits. Other kinds (upstream Foundry writes
// "mold") are carried through untouched; only KindBranch changes the shape
// (pattern and chain instead of skill).
const (
	KindStep   = "step"
	KindLoop   = "loop"
	KindBranch = "branch"
)

// Record is foundry-run.yml. Pointer and zero-value fields mirror the
// record's nulls: FoundryHead "" is written as null (outside a git
// checkout), FinishedAt nil is null while the run is running.
type Record struct {
	Version        int
	Pipeline       string
	RunSlug        string
	SourceRevision int
	HarnessName    string
	// AssemblySHA256 is the lowercase sha256 hex of the _assembly.json bytes;
	// "" when absent (or ignored by a reader).
	AssemblySHA256 string
	// FoundryHead is the git commit of the checkout the run read; "" is null.
	FoundryHead string
	// FoundryModified: the checkout had changes not in FoundryHead
	// (modified, staged or untracked files), so the head does not pin
	// what the run read. Written foundry_modified: true; absent is false.
	FoundryModified bool
	StartedAt       time.Time
	FinishedAt      *time.Time
	Status          string
	Phases          []Phase
}

// Phase is one roster row, keyed by N (written "n"; readers also accept
// "phase").
type Phase struct {
	N    int
	Kind string
	// Skill names the step for non-branch phases; Pattern names a branch.
	Skill   string
	Pattern string
	// Selected is the chain member that satisfied a branch ("" until chosen).
	Selected   string
	Status     string
	Iterations int
	Artifacts  []Artifact
}

// Name is Skill, or Pattern for a branch.
func (p Phase) Name() string {
	if p.Pattern != "" && p.Skill == "" {
		return p.Pattern
	}
	return p.Skill
}

// Artifact is one artifacts row: one file written by the phase (by one
// iteration of a loop when Iteration > 0).
type Artifact struct {
	ID        string
	File      string
	At        time.Time
	Iteration int
}

// Assembly is _assembly.json, the ordered phase roster a run follows. The
// harness builds it from the workload, Create writes it into the run
// directory, and its bytes' sha256 pins the run to the roster it saw.
//
// JSON shape (canonical JSON, one trailing newline):
//
//	{"assembly_version":1,"harness_name":"...","phases":[
//	  {"kind":"step","outputs":[{"file":"a.md","id":"a"}],"phase":1,"skill":"..."},
//	  {"kind":"loop","phase":2,"skill":"..."},
//	  {"chain":["m1","m2"],"kind":"branch","pattern":"...","phase":3}],
//	 "pipeline":"...","source_revision":2}
type Assembly struct {
	Pipeline       string          `json:"pipeline"`
	HarnessName    string          `json:"harness_name"`
	SourceRevision int             `json:"source_revision"`
	Phases         []AssemblyPhase `json:"phases"`
}

// AssemblyPhase is one roster entry. N is written as "phase", the name the
// seed gives the roster's number (the record calls the same number "n").
type AssemblyPhase struct {
	N    int    `json:"phase"`
	Kind string `json:"kind"`
	// Skill for steps and loops; Pattern and Chain for branches.
	Skill   string   `json:"skill,omitempty"`
	Pattern string   `json:"pattern,omitempty"`
	Chain   []string `json:"chain,omitempty"`
	// Outputs are the artifacts the phase declares (for a branch, the union
	// over its chain). Optional; a reader uses them only to reconstruct a
	// degraded view when the record is missing.
	Outputs []Output `json:"outputs,omitempty"`
}

// Output is one declared artifact: its id and the fixed basename it is
// written to in the run directory.
type Output struct {
	ID   string `json:"id"`
	File string `json:"file"`
}

// Meta carries the per-run facts the assembly does not know.
type Meta struct {
	// RunSlug names this run (e.g. "auris-scf1").
	RunSlug string
	// FoundryHead is the commit of the checkout the workload was read from;
	// "" outside git (written null). See FoundryHead.
	FoundryHead string
	// FoundryModified says the checkout had uncommitted changes. See
	// FoundryModified.
	FoundryModified bool
}

// Clock supplies wall-clock time for started_at, finished_at and artifact
// at fields; tests inject a fixed sequence.
type Clock func() time.Time
