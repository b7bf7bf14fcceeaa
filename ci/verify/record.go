package verify

import (
	"bytes"
	"path/filepath"
	"slices"
	"time"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/harness"
	"github.com/algal-assay/assay/harness/workload"
	"github.com/algal-assay/assay/runrecord"
)

// checkRecord holds a re-derived run's record to what the run must have
// written: the workload's revision, harness and roster; phases whose
// statuses agree with the run's and with the rows they list (a skipped
// or pending phase lists nothing, a loop counts its iterations); the
// branch member the workload takes; the commit the runs were made at
// (when known, foundry_head must be it and foundry_modified unset);
// and timestamps in order (started_at <= every row's at <= finished_at,
// finished_at set exactly when the run ended). runrecord.Read has
// already refused unknown keys, bad types and a roster digest that is not
// _assembly.json's (they are warnings there, failures here); which file
// each row names and under which id is checkFiles's.
func checkRecord(rc *rerun, opts Options, fail func(string, ...any)) {
	rec, w := rc.rec, rc.compiled.Workload
	f := func(format string, a ...any) { fail(runrecord.RecordFile+": "+format, a...) }
	checkRecordBytes(rc, f)
	a := harness.Assembly(w)
	checkRecordHeader(rec, w, a, f)
	if opts.Commit != "" {
		checkRecordCommit(rec, opts.Commit, f)
	}
	checkPhases(rc, a, f)
	checkRecordStatus(rec, f)
	checkRecordTimes(rec, f)
}

// checkRecordBytes holds the record to its bytes first: a harness record
// is in the one form the recorder writes, so a reordered, commented or
// re-spelled record is not one.
func checkRecordBytes(rc *rerun, f func(string, ...any)) {
	got, err := canon.ReadBounded(filepath.Join(rc.dir, runrecord.RecordFile), 0)
	if err != nil {
		return
	}
	if want, err := runrecord.Encode(rc.rec); err == nil && !bytes.Equal(got, want) {
		f("not in the form the run recorder writes (%s)", firstDifference(got, want))
	}
}

// checkRecordHeader checks the workload's revision, the harness and that
// the roster is pinned.
func checkRecordHeader(rec *runrecord.Record, w *workload.Workload, a runrecord.Assembly, f func(string, ...any)) {
	if rec.SourceRevision != w.Revision {
		f("source_revision is %d, but workload %s is revision %d", rec.SourceRevision, w.Path, w.Revision)
	}
	if rec.HarnessName != a.HarnessName {
		f("harness_name is %q, but a %s workload runs under %q", rec.HarnessName, w.Kind, a.HarnessName)
	}
	if rec.AssemblySHA256 == "" {
		f("assembly_sha256 is missing: every harness run pins its roster")
	}
}

// checkRecordCommit holds the record to a known commit (an artifact's
// side): the run must say it read that commit, unmodified. The tree is
// confirmed against the commit, so a null head or a modified checkout is
// no honest run of it; without a known commit a null head stays what it
// is, a run made outside git.
func checkRecordCommit(rec *runrecord.Record, commit string, f func(string, ...any)) {
	switch {
	case rec.FoundryHead == "":
		f("foundry_head is null, but these runs were made at commit %s: a run of it records that commit", commit)
	case rec.FoundryHead != commit:
		f("foundry_head is %s, but these runs were made at commit %s", rec.FoundryHead, commit)
	}
	if rec.FoundryModified {
		f("foundry_modified is true: the run read a checkout with changes commit %s does not hold, so it is not evidence of that commit", commit)
	}
}

// checkPhases compares the record's phases with the roster's, one by one.
func checkPhases(rc *rerun, a runrecord.Assembly, f func(string, ...any)) {
	rec := rc.rec
	if len(rec.Phases) != len(a.Phases) {
		f("%d phases, but the roster has %d", len(rec.Phases), len(a.Phases))
	}
	for i := 0; i < len(rec.Phases) && i < len(a.Phases); i++ {
		p, ap := rec.Phases[i], a.Phases[i]
		if p.N != ap.N || p.Kind != ap.Kind || p.Skill != ap.Skill || p.Pattern != ap.Pattern {
			f("phases[%d] is phase %d %s %q, but the roster's is phase %d %s %q", i, p.N, p.Kind, p.Name(), ap.N, ap.Kind, ap.Skill+ap.Pattern)
		}
		checkPhase(rc, p, ap, f)
	}
}

// checkRecordStatus holds the run's status to finished_at and, for a
// cancelled run, to its phases.
func checkRecordStatus(rec *runrecord.Record, f func(string, ...any)) {
	if rec.Status == runrecord.RunRunning {
		if rec.FinishedAt != nil {
			f("status running, but finished_at is set")
		}
		return
	}
	// A stop interrupts a phase; one after the last phase left a complete
	// run that its record no longer says is one.
	if rec.Status == runrecord.RunCancelled && !slices.ContainsFunc(rec.Phases, phaseUnfinished) {
		f("status cancelled, but every phase is done or skipped: a cancelled run leaves the phase it stopped running or pending")
	}
	if rec.FinishedAt == nil {
		f("status %s, but finished_at is not set", rec.Status)
	}
}

// phaseUnfinished reports whether a phase is neither done nor skipped.
func phaseUnfinished(p runrecord.Phase) bool {
	return p.Status != runrecord.PhaseDone && p.Status != runrecord.PhaseSkipped
}

// checkRecordTimes holds the timestamps in order: started_at <= every
// row's at, in the order the rows are written, <= finished_at.
func checkRecordTimes(rec *runrecord.Record, f func(string, ...any)) {
	if rec.StartedAt.IsZero() {
		f("started_at is missing")
	}
	order := func(what string, t time.Time) {
		if t.Before(rec.StartedAt) {
			f("%s (%s) is before started_at (%s)", what, stamp(t), stamp(rec.StartedAt))
		}
		if rec.FinishedAt != nil && t.After(*rec.FinishedAt) {
			f("%s (%s) is after finished_at (%s)", what, stamp(t), stamp(*rec.FinishedAt))
		}
	}
	if rec.FinishedAt != nil {
		order("finished_at", *rec.FinishedAt)
	}
	var last time.Time
	for _, p := range rec.Phases {
		for _, r := range p.Artifacts {
			order("the at of "+r.File, r.At)
			last = checkRowAfter(r, last, f)
		}
	}
}

// checkRowAfter holds a row's at to the row above it (at last), and is
// the row's at.
func checkRowAfter(r runrecord.Artifact, last time.Time, f func(string, ...any)) time.Time {
	if r.At.Before(last) {
		f("the at of %s (%s) is before the row above it (%s): rows are written in order", r.File, stamp(r.At), stamp(last))
	}
	return r.At
}

// checkPhase checks one phase's status, branch member and iterations.
func checkPhase(rc *rerun, p runrecord.Phase, ap runrecord.AssemblyPhase, f func(string, ...any)) {
	complete := rc.rec.Status == runrecord.RunComplete
	checkPhaseRows(p, complete, f)
	if p.N == harness.PhaseSource && complete {
		checkSourcePhase(rc.compiled.Workload, p, f)
	} else if complete && p.Status != runrecord.PhaseDone {
		f("status complete, but phase %d is %s: every phase but a bench's candidate source runs", p.N, p.Status)
	}
	if p.Selected != "" && !contains(ap.Chain, p.Selected) {
		f("phase %d selected %q, which is not in its chain", p.N, p.Selected)
	}
	checkIterations(p, f)
}

// checkPhaseRows holds a phase's status to the run's and to its rows: a
// complete run's phases are done or skipped, and a skipped or pending
// phase lists nothing.
func checkPhaseRows(p runrecord.Phase, complete bool, f func(string, ...any)) {
	switch {
	case complete && phaseUnfinished(p):
		f("status complete, but phase %d is %s", p.N, p.Status)
	case (p.Status == runrecord.PhaseSkipped || p.Status == runrecord.PhasePending) && len(p.Artifacts) > 0:
		f("phase %d is %s but lists %d file(s)", p.N, p.Status, len(p.Artifacts))
	}
}

// checkSourcePhase checks the candidate-source phase of a complete run:
// a bench names its systems; a foundry takes its candidates from files,
// or from its generator.
func checkSourcePhase(w *workload.Workload, p runrecord.Phase, f func(string, ...any)) {
	switch {
	case w.Kind == workload.KindBench && p.Status != runrecord.PhaseSkipped:
		f("phase %d is %s, but a bench names its systems and skips it", p.N, p.Status)
	case w.Kind == workload.KindFoundry && p.Selected != expectedSource(w):
		f("phase %d selected %q, but workload %s takes its candidates from %q", p.N, p.Selected, w.Path, expectedSource(w))
	case w.Kind == workload.KindFoundry && p.Status != runrecord.PhaseDone:
		f("phase %d is %s, but a complete foundry run sources its candidates there", p.N, p.Status)
	}
}

// checkIterations holds a loop phase's count to the iterations it lists;
// any other phase counts none.
func checkIterations(p runrecord.Phase, f func(string, ...any)) {
	if p.Kind != runrecord.KindLoop {
		if p.Iterations != 0 {
			f("phase %d is a %s and has no iterations, but counts %d", p.N, p.Kind, p.Iterations)
		}
		return
	}
	n := 0
	for _, r := range p.Artifacts {
		if r.Iteration > 0 {
			n++
		}
	}
	if p.Iterations != n {
		f("phase %d counts %d iteration(s), but lists %d", p.N, p.Iterations, n)
	}
}

func expectedSource(w *workload.Workload) string {
	if w.Generator != nil {
		return harness.SourceGenerator
	}
	return harness.SourceFiles
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }
