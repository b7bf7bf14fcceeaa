package runrecord

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
)

// State says what Read found in the run directory.
type State string

const (
	// StateRecord: foundry-run.yml was read (whatever the run's status).
	StateRecord State = "record"
	// StateMissing: no foundry-run.yml; the run predates the protocol.
	StateMissing State = "missing"
	// StateUnparseable: the file exists but is not YAML (or is empty),
	// usually a run that crashed mid-write under a non-atomic writer.
	StateUnparseable State = "unparseable"
	// StateInvalid: YAML, but not a version-1 run record.
	StateInvalid State = "invalid"
)

// Assembly comparison verdicts.
const (
	AssemblyMatch     = "match"     // recorded assembly_sha256 equals today's workload assembly
	AssemblyDrift     = "drift"     // it differs: the run saw another roster than today's
	AssemblyUnknown   = "unknown"   // the record carries no (trustworthy) assembly_sha256
	AssemblyUnchecked = "unchecked" // nothing to compare against (no workload for the pipeline)
)

// Pipeline verdicts.
const (
	PipelineKnown      = "known"       // a workload of the recorded pipeline was supplied
	PipelineExplicit   = "explicit"    // read against the pipeline the caller named
	PipelineNoWorkload = "no-workload" // the reader has no workload for the recorded pipeline
	PipelineUnchecked  = "unchecked"   // the caller supplied no workloads at all
)

// Workload is one workload (pipeline) the reader's checkout has today, with
// the _assembly.json bytes the harness would write for it now (or, when
// the bytes are not at hand, their sha256 hex).
type Workload struct {
	Pipeline       string
	Assembly       []byte
	AssemblySHA256 string
}

func (w Workload) sha() string {
	if w.Assembly != nil {
		return AssemblySHA256(w.Assembly)
	}
	return strings.ToLower(w.AssemblySHA256)
}

// Options tune Read.
type Options struct {
	// Workloads are today's workloads; the record is compared against the
	// one named like its pipeline, never against another.
	Workloads []Workload
	// Pipeline, when set, names the workload to read the record against
	// even if the record names a different pipeline.
	Pipeline string
}

// Verdict is one comparison's outcome with a human sentence.
type Verdict struct {
	Check   string
	Message string
	// Against names the workload compared with ("" when none).
	Against string
	// Recorded and Current are the two assembly shas (assembly verdict only).
	Recorded, Current string
}

// FileWriter says which phase last wrote a file: the last artifacts row
// naming it, in record order.
type FileWriter struct {
	File      string
	Phase     int
	ID        string
	Iteration int // 0 when the row carries no iteration
	At        time.Time
	// Present reports whether the file exists in the run directory now.
	Present bool
}

// View is everything Read learnt about one run directory.
type View struct {
	Dir   string
	State State
	// Problem diagnoses StateMissing, StateUnparseable and StateInvalid.
	Problem *fault.Error
	// Record is set for StateRecord.
	Record   *Record
	Warnings []string
	Pipeline Verdict
	Assembly Verdict
	// Writers lists, per file named in the record, its last writer, sorted
	// by file name.
	Writers []FileWriter
	// Reconstructed is the degraded view built from the directory when no
	// record could be read; nil for StateRecord.
	Reconstructed *Reconstruction
}

// Read examines runDir. It returns an error only when runDir itself cannot
// be listed; a missing, unparseable or invalid record is reported in the
// View (State and Problem), together with a reconstructed view.
func Read(runDir string, opts Options) (*View, error) {
	st, err := os.Stat(runDir)
	if err != nil {
		return nil, &fault.Error{Code: CodeRunDir, File: runDir, Message: "cannot be read", Err: unwrapPath(err)}
	}
	if !st.IsDir() {
		return nil, errf(CodeRunDir, runDir, "is not a directory")
	}
	v := &View{Dir: runDir}
	path := filepath.Join(runDir, RecordFile)
	data, rerr := readRecordBytes(path)
	if rerr != nil {
		if rerr.Code == CodeMissing {
			if _, err := os.Lstat(filepath.Join(runDir, AssemblyFile)); err == nil {
				rerr.Message = "does not exist, yet " + AssemblyFile + " does: the harness set the run up under the protocol and the record was lost or never written"
			}
		}
		v.Problem = rerr
		v.State = stateFor(rerr.Code)
	} else if res, derr := decodeRecord(data, path); derr != nil {
		if v.Problem, _ = fault.As(derr); v.Problem == nil {
			v.Problem = &fault.Error{Code: CodeUnparseable, File: path, Message: derr.Error()}
		}
		v.State = stateFor(v.Problem.Code)
	} else {
		v.State = StateRecord
		v.Record = res.rec
		v.Warnings = append(v.Warnings, res.warnings...)
	}
	if v.State != StateRecord {
		v.Reconstructed, err = reconstruct(runDir, opts)
		if err != nil {
			return nil, err
		}
		return v, nil
	}
	v.judge(opts)
	v.Writers = lastWriters(runDir, v.Record)
	v.Warnings = append(v.Warnings, consistency(runDir, v.Record)...)
	return v, nil
}

func stateFor(code string) State {
	switch code {
	case CodeMissing:
		return StateMissing
	case CodeUnparseable:
		return StateUnparseable
	default:
		return StateInvalid
	}
}

func readRecordBytes(path string) ([]byte, *fault.Error) {
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, errf(CodeMissing, path, "does not exist: the run predates the run-record protocol")
	}
	data, err := canon.ReadBounded(path, maxRecordBytes)
	if err != nil {
		return nil, &fault.Error{Code: CodeUnparseable, File: path, Message: "cannot be read", Err: err}
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errf(CodeUnparseable, path, "is empty (a crash mid-write?)")
	}
	return data, nil
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// judge fills the pipeline and assembly verdicts.
func (v *View) judge(opts Options) {
	rec := v.Record
	target := rec.Pipeline
	if opts.Pipeline != "" {
		target = opts.Pipeline
	}
	unchecked := func() {
		if rec.AssemblySHA256 == "" {
			v.Assembly = Verdict{Check: AssemblyUnknown, Message: "the record has no assembly_sha256; it neither matches nor drifts"}
		} else {
			v.Assembly = Verdict{Check: AssemblyUnchecked, Recorded: rec.AssemblySHA256, Message: "no current assembly to compare with"}
		}
	}
	if len(opts.Workloads) == 0 {
		v.Pipeline = Verdict{Check: PipelineUnchecked, Message: "no workloads supplied; pipeline " + rec.Pipeline + " not checked"}
		if opts.Pipeline != "" && opts.Pipeline != rec.Pipeline {
			v.Warnings = append(v.Warnings, "the record names pipeline "+rec.Pipeline+", not "+opts.Pipeline)
		}
		unchecked()
		return
	}
	i := slices.IndexFunc(opts.Workloads, func(w Workload) bool { return w.Pipeline == target })
	if i < 0 {
		msg := "no workload for pipeline " + target + "; the record is not read against another"
		if opts.Pipeline == "" {
			msg += " (name one explicitly to do so)"
		}
		v.Pipeline = Verdict{Check: PipelineNoWorkload, Message: msg}
		unchecked()
		return
	}
	w := opts.Workloads[i]
	if target != rec.Pipeline {
		v.Pipeline = Verdict{Check: PipelineExplicit, Against: target,
			Message: "the record names pipeline " + rec.Pipeline + "; read against " + target + " as told"}
		v.Warnings = append(v.Warnings, v.Pipeline.Message)
	} else {
		v.Pipeline = Verdict{Check: PipelineKnown, Against: target, Message: "workload " + target + " found"}
	}
	cur := w.sha()
	switch {
	case rec.AssemblySHA256 == "":
		v.Assembly = Verdict{Check: AssemblyUnknown, Against: target, Current: cur,
			Message: "the record has no assembly_sha256; it neither matches nor drifts"}
	case cur == rec.AssemblySHA256:
		v.Assembly = Verdict{Check: AssemblyMatch, Against: target, Recorded: rec.AssemblySHA256, Current: cur,
			Message: "the run read the same assembly as today's " + target}
	default:
		v.Assembly = Verdict{Check: AssemblyDrift, Against: target, Recorded: rec.AssemblySHA256, Current: cur,
			Message: "the run read a different assembly than today's " + target + "; do not resolve it against today's roster"}
	}
}

// lastWriters walks artifacts rows in record order; each later row naming
// a file replaces the earlier one.
func lastWriters(runDir string, rec *Record) []FileWriter {
	last := map[string]FileWriter{}
	for _, p := range rec.Phases {
		for _, a := range p.Artifacts {
			last[a.File] = FileWriter{File: a.File, Phase: p.N, ID: a.ID, Iteration: a.Iteration, At: a.At}
		}
	}
	out := make([]FileWriter, 0, len(last))
	for _, w := range last {
		if plainBasename(w.File) {
			if _, err := os.Lstat(filepath.Join(runDir, w.File)); err == nil {
				w.Present = true
			}
		}
		out = append(out, w)
	}
	slices.SortFunc(out, func(a, b FileWriter) int { return strings.Compare(a.File, b.File) })
	return out
}

// consistency reports records that contradict themselves or their
// _assembly.json; the reader shows them rather than picking a side.
func consistency(runDir string, rec *Record) []string {
	var w []string
	switch rec.Status {
	case RunComplete:
		for _, p := range rec.Phases {
			if p.Status != PhaseDone && p.Status != PhaseSkipped {
				w = append(w, "status complete but phase "+itoa(p.N)+" is "+p.Status)
			}
		}
	case RunRunning:
		if rec.FinishedAt != nil {
			w = append(w, "status running but finished_at is set")
		}
	case RunFailed:
		if !slices.ContainsFunc(rec.Phases, func(p Phase) bool { return p.Status == PhaseFailed }) {
			w = append(w, "status failed but no phase is failed")
		}
	}
	for _, p := range rec.Phases {
		if p.Kind == KindBranch && p.Status == PhaseDone && p.Selected == "" {
			w = append(w, "branch phase "+itoa(p.N)+" is done with no selected member")
		}
	}
	data, err := canon.ReadBounded(filepath.Join(runDir, AssemblyFile), maxAssemblyBytes)
	if err == nil && rec.AssemblySHA256 != "" && AssemblySHA256(data) != rec.AssemblySHA256 {
		w = append(w, "the record's assembly_sha256 disagrees with the run directory's "+AssemblyFile)
	}
	return w
}

func itoa(i int) string { return strconv.Itoa(i) }
