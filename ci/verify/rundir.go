package verify

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/algal-assay/assay/engine/bench"
	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/foundry"
	"github.com/algal-assay/assay/engine/store"
	"github.com/algal-assay/assay/harness"
	"github.com/algal-assay/assay/harness/gate"
	"github.com/algal-assay/assay/harness/repeats"
	"github.com/algal-assay/assay/harness/rundir"
	"github.com/algal-assay/assay/harness/workload"
	"github.com/algal-assay/assay/internal/atomicfile"
	"github.com/algal-assay/assay/runrecord"
)

// RunCheck is what checking a run directory learnt besides pass or fail:
// the record, and the verification and gate verdicts re-derived from the
// report and the workload. ci/diff reads the run through it, so nothing
// downstream believes gate.json or verification.json.
type RunCheck struct {
	Record *runrecord.Record
	// Workload is the workload the run was re-derived against (nil when
	// none was found).
	Workload *workload.Workload
	// Derived is nil when the run left no report or account, or when it
	// could not be re-derived (Mismatches say why).
	Derived *harness.Derived
}

// brief is c without its re-derived reports: the record, the workload,
// and of the derivation only the verification and the gate verdicts
// (Result.Detail says whether the re-derived gate holds).
func (c *RunCheck) brief() *RunCheck {
	if c == nil || c.Derived == nil {
		return c
	}
	d := c.Derived
	return &RunCheck{Record: c.Record, Workload: c.Workload, Derived: &harness.Derived{Verification: d.Verification, Gates: d.Gates}}
}

// runFiles are the names that make a directory a run directory: a run
// whose record was deleted is still a run directory, and fails.
var runFiles = []string{runrecord.RecordFile, runrecord.AssemblyFile, rundir.GateFile, rundir.VerificationFile}

func isRunDir(dir string) bool {
	for _, f := range runFiles {
		if _, err := os.Lstat(filepath.Join(dir, f)); err == nil {
			return true
		}
	}
	return false
}

// CheckRun verifies one run directory (see checkRun). Its Run.Derived
// keeps every case verdict, of a run in parts too, for hosts that compare
// runs case by case.
func CheckRun(ctx context.Context, dir string, opts Options) (Result, error) {
	opts.everyVerdict = true
	return checkRun(ctx, dir, opts)
}

// checkRun verifies one run directory: its record parses and agrees with
// itself and with the directory (status against phases, every listed
// artifact present as a regular file, every file listed, _assembly.json
// against assembly_sha256); a complete run left its report (or account),
// verification.json and gate.json; the report verifies; and the
// verification and every gate verdict, re-derived from the report and the
// workload (whose compiled slug must be the run's), agree with the stored
// files, field by field. Disagreement is reported, never resolved. An error
// is a host fault, not a verification failure.
func checkRun(ctx context.Context, dir string, opts Options) (res Result, _ error) {
	res = Result{Path: dir, Kind: KindRun}
	defer func() { res.OK = len(res.Mismatches) == 0 }()
	c := &runCheck{ctx: ctx, dir: dir, opts: opts, res: &res}
	rec := c.readRecord()
	if rec == nil {
		return res, nil
	}
	c.checkStatusFiles(rec)
	if c.has(workload.AggregateFile) {
		return res, c.checkPartsRun(rec)
	}
	name, ok := c.reportName()
	if !ok {
		return res, nil
	}
	v, kind, ok := c.readReport(name)
	if !ok {
		return res, nil
	}
	w := opts.Workloads.Lookup(rec.Pipeline)
	if w == nil {
		return res, c.verifyWithoutWorkload(rec, name, v, kind)
	}
	return res, c.rederive(rec, w, name, v, kind)
}

// rederive re-derives the run from its report (v, in file name, of
// kind) and the workload w its record names, compares the stored files
// with the re-derivation, and then holds the record and every file to
// it.
func (c *runCheck) rederive(rec *runrecord.Record, w *workload.Workload, name string, v any, kind workload.Kind) error {
	c.res.Run.Workload = w
	if w.Kind != kind {
		c.fail("%s is a %s report but workload %s (%s) is a %s", name, kind, w.Name, w.Path, w.Kind)
		return nil
	}
	w, k, storedRepeats, ok := c.repeatsClaimed(w)
	if !ok {
		return nil
	}
	c.res.Run.Workload = w
	comp, ok := c.compileFor(w, rec)
	if !ok {
		return nil
	}
	reports, ok := c.repeatReports(rec, v, k, storedRepeats)
	if !ok {
		return nil
	}
	d, err := harness.RederiveRepeats(c.ctx, comp, reports, c.opts.Evidence)
	if err != nil {
		c.fail("%s: %v", name, err)
		return nil
	}
	c.compareDerived(w, name, d, storedRepeats)
	rc := &rerun{dir: c.dir, rec: rec, compiled: comp, derived: d, k: k, evidence: harness.RepeatReportFiles(c.dir, k), tree: c.opts.Tree, roots: c.opts.Workloads.roots()}
	return rc.check(c.opts, c.has, c.res, c.fail)
}

// runCheck is one run directory's check under way: the result its steps
// fill in.
type runCheck struct {
	ctx  context.Context
	dir  string
	opts Options
	res  *Result
}

// fail records a mismatch.
func (c *runCheck) fail(format string, a ...any) {
	c.res.Mismatches = append(c.res.Mismatches, fmt.Sprintf(format, a...))
}

// has reports whether the run directory holds name as a regular file.
func (c *runCheck) has(name string) bool { return isRegular(filepath.Join(c.dir, name)) }

// readRecord reads the run record and compares its listing with the
// directory; nil when there is no record to go on (the failure is
// recorded).
func (c *runCheck) readRecord() *runrecord.Record {
	view, err := runrecord.Read(c.dir, runrecord.Options{})
	if err != nil {
		c.fail("%v", err)
		return nil
	}
	if view.State != runrecord.StateRecord {
		msg := string(view.State)
		if view.Problem != nil {
			msg = view.Problem.Error()
		}
		c.fail("%s", msg)
		return nil
	}
	rec := view.Record
	c.res.Status = rec.Status
	c.res.Run = &RunCheck{Record: rec}
	for _, w := range view.Warnings {
		c.fail("%s: %s", runrecord.RecordFile, w)
	}
	checkListing(c.dir, view, c.fail)
	return rec
}

// checkStatusFiles holds the record's status to the files it implies: a
// running run is no evidence, a complete one left its report (or
// account), verification and gate.
func (c *runCheck) checkStatusFiles(rec *runrecord.Record) {
	switch rec.Status {
	case runrecord.RunRunning:
		c.fail("%s: status running: the run never finished (killed, or still going), so its files are not evidence", runrecord.RecordFile)
	case runrecord.RunComplete:
		if !c.has(rundir.ReportFile) && !c.has(rundir.BudgetFile) && !c.has(workload.AggregateFile) {
			c.fail("%s: status complete, but the run directory holds neither %s nor %s", runrecord.RecordFile, rundir.ReportFile, rundir.BudgetFile)
		}
		for _, f := range []string{rundir.VerificationFile, rundir.GateFile} {
			if !c.has(f) {
				c.fail("%s: status complete, but the run directory holds no %s", runrecord.RecordFile, f)
			}
		}
	}
}

// reportName is the one report (or account) file the run left; false
// when there is none to re-derive from, or two.
func (c *runCheck) reportName() (string, bool) {
	if c.has(rundir.ReportFile) && c.has(rundir.BudgetFile) {
		c.fail("the run directory holds both %s and %s; a run leaves one", rundir.ReportFile, rundir.BudgetFile)
		return "", false
	}
	name := rundir.ReportFile
	if !c.has(name) {
		name = rundir.BudgetFile
	}
	if c.has(name) {
		return name, true
	}
	for _, f := range []string{rundir.VerificationFile, rundir.GateFile} {
		if c.has(f) {
			c.fail("%s is there but neither %s nor %s: it cannot be re-derived, so it is not evidence", f, rundir.ReportFile, rundir.BudgetFile)
		}
	}
	return "", false
}

// reportKinds maps a report's contract to the kind of workload that
// writes it.
var reportKinds = map[string]workload.Kind{bench.ReportContract: workload.KindBench, foundry.ReportContract: workload.KindFoundry, foundry.BudgetContract: workload.KindFoundry}

// readReport reads the report file and the workload kind its contract
// names; false when it is unreadable or its contract is not the file's.
func (c *runCheck) readReport(name string) (any, workload.Kind, bool) {
	v, err := canon.ReadFile(filepath.Join(c.dir, name), 0)
	if err != nil {
		c.fail("%s: %v", name, err)
		return nil, "", false
	}
	m, _ := v.(map[string]any)
	contract, _ := m["contract"].(string)
	kind := reportKinds[contract]
	if kind == "" || (name == rundir.BudgetFile) != (contract == foundry.BudgetContract) {
		want := bench.ReportContract + " or " + foundry.ReportContract
		if name == rundir.BudgetFile {
			want = foundry.BudgetContract
		}
		c.fail("%s: contract %q is not %s", name, contract, want)
		return nil, "", false
	}
	return v, kind, true
}

// verifyWithoutWorkload says the stored verdicts cannot be re-derived
// when no workload names the run's pipeline, and still verifies the
// report on its own.
func (c *runCheck) verifyWithoutWorkload(rec *runrecord.Record, name string, v any, kind workload.Kind) error {
	c.fail("%s and %s cannot be re-derived: %s (%s names pipeline %q)", rundir.VerificationFile, rundir.GateFile, c.opts.Workloads.missing(rec.Pipeline), runrecord.RecordFile, rec.Pipeline)
	sub := Result{Kind: KindBench}
	if kind == workload.KindFoundry {
		sub.Kind = KindFoundry
	}
	if err := check(c.ctx, &sub, v, c.opts.Evidence); err != nil {
		return err
	}
	c.res.Digest = sub.Digest
	for _, mm := range sub.Mismatches {
		c.failEvidence("%s does not verify: %s", name, mm)
	}
	return nil
}

// failEvidence records a mismatch that is also a failure of the evidence.
func (c *runCheck) failEvidence(format string, a ...any) {
	c.fail(format, a...)
	c.res.Evidence = append(c.res.Evidence, c.res.Mismatches[len(c.res.Mismatches)-1])
}

// repeatsClaimed is the workload with the repeats the run holds, their
// number, and repeats.json as stored (nil without one). A repeated run
// says in repeats.json how many repeats it holds; the claim only stands
// if the workload compiled with it names this directory.
func (c *runCheck) repeatsClaimed(w *workload.Workload) (*workload.Workload, int, any, bool) {
	k, storedRepeats, err := harness.StoredRepeats(c.dir)
	if err != nil {
		c.fail("%v", err)
		return nil, 0, nil, false
	}
	if storedRepeats == nil {
		k = c.unrecordedRepeats(w)
	}
	wk, err := w.WithRepeats(k)
	if err != nil {
		c.fail("workload %s cannot run the %d repeats %s claims: %v", w.Path, k, repeats.File, err)
		return nil, 0, nil, false
	}
	return wk, k, storedRepeats, true
}

// unrecordedRepeats is the repeats of a run without an aggregate: the
// workload's own repeats, or one repeat for a run made with --repeats 1,
// whichever names this directory.
func (c *runCheck) unrecordedRepeats(w *workload.Workload) int {
	if w.Repeats <= 1 {
		return w.Repeats
	}
	if w1, err := w.WithRepeats(1); err == nil {
		if c1, err := workload.Compile(w1, ".", foundry.AdmitOptions{}); err == nil && c1.Slug == filepath.Base(c.dir) {
			return 1
		}
	}
	return w.Repeats
}

// compileFor compiles the workload for this run directory; false when it
// does not compile or compiles to another run.
func (c *runCheck) compileFor(w *workload.Workload, rec *runrecord.Record) (*workload.Compiled, bool) {
	comp, err := workload.Compile(w, runsRoot(c.dir), foundry.AdmitOptions{})
	if err != nil {
		c.fail("workload %s does not compile, so this run cannot be re-derived: %v", w.Path, err)
		return nil, false
	}
	if comp.Slug != rec.RunSlug || comp.Slug != filepath.Base(c.dir) {
		c.fail("workload %s compiles to run %s, but this run directory is %s (%s run_slug %s): the workload or an input it reads is not the one this run was made from, so its gate is not this run's", w.Path, comp.Slug, filepath.Base(c.dir), runrecord.RecordFile, rec.RunSlug)
		return nil, false
	}
	return comp, true
}

// repeatReports are the reports of every repeat, first the one already
// read; false when one is unreadable.
func (c *runCheck) repeatReports(rec *runrecord.Record, first any, k int, storedRepeats any) ([]any, bool) {
	reports := []any{first}
	if k <= 1 {
		return reports, true
	}
	if storedRepeats == nil && rec.Status == runrecord.RunComplete {
		c.fail("%s: status complete, but this run of %d repeats holds no %s", runrecord.RecordFile, k, repeats.File)
	}
	for _, f := range harness.RepeatReportFiles(c.dir, k)[1:] {
		rv, err := canon.ReadFile(filepath.Join(c.dir, f), 0)
		if err != nil {
			c.fail("%s: %v", f, err)
			return nil, false
		}
		reports = append(reports, rv)
	}
	return reports, true
}

// compareDerived records the re-derivation and compares the stored
// repeats aggregate, verification and gate with it.
func (c *runCheck) compareDerived(w *workload.Workload, name string, d *harness.Derived, storedRepeats any) {
	if storedRepeats != nil && d.Repeats != nil {
		for _, m := range harness.RepeatsDisagreements(storedRepeats, d.Repeats) {
			c.fail("%s", m)
		}
	}
	c.res.Run.Derived = d
	c.res.Digest = d.Verification.Digest
	for _, mm := range d.Verification.Mismatches {
		c.failEvidence("%s does not verify: %s", name, mm)
	}
	if c.has(rundir.VerificationFile) {
		compareStored(c.dir, rundir.VerificationFile, d.Verification.Value(), verificationFields, name, c.fail)
	}
	if c.has(rundir.GateFile) {
		compareGate(c.dir, w, d, name, c.fail)
	}
}

// runsRoot is the runs root a run directory (<root>/<workload>/<slug>)
// was compiled for.
func runsRoot(dir string) string { return filepath.Dir(filepath.Dir(dir)) }

// check runs the strict record checks and the file-by-file comparison of
// a re-derived run.
func (rc *rerun) check(opts Options, has func(string) bool, res *Result, fail func(string, ...any)) error {
	if m := rc.learnShown(has); m != "" {
		fail("%s", m)
	}
	checkRecord(rc, opts, fail)
	return rc.checkFiles(namedIn(res), fail)
}

// namedIn reports whether res already names a file: a file a
// field-by-field comparison named is not named again.
func namedIn(res *Result) func(file string) bool {
	return func(file string) bool {
		return slices.ContainsFunc(res.Mismatches, func(m string) bool {
			return strings.HasPrefix(m, file+":") || strings.HasPrefix(m, file+" ")
		})
	}
}

// checkListing compares the record's artifact rows with the directory:
// every listed file present as a regular file, every file present listed.
func checkListing(dir string, view *runrecord.View, fail func(string, ...any)) {
	listed := map[string]bool{runrecord.RecordFile: true, runrecord.AssemblyFile: true}
	for _, wr := range view.Writers {
		listed[wr.File] = true
		if !wr.Present {
			fail("%s lists %s (phase %d, %s) but the run directory does not hold it", runrecord.RecordFile, wr.File, wr.Phase, wr.ID)
		}
	}
	if view.Record.AssemblySHA256 != "" && !isRegular(filepath.Join(dir, runrecord.AssemblyFile)) {
		fail("%s: assembly_sha256 is set but %s is missing", runrecord.RecordFile, runrecord.AssemblyFile)
	}
	checkListed(dir, listed, fail)
}

// checkListed holds every entry of the run directory to a regular file
// the record lists.
func checkListed(dir string, listed map[string]bool, fail func(string, ...any)) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		fail("cannot list the run directory: %v", pathErr(err))
		return
	}
	for _, e := range entries {
		switch {
		case !listed[e.Name()]:
			fail("%s is in the run directory but %s lists no phase writing it", e.Name(), runrecord.RecordFile)
		case !e.Type().IsRegular():
			fail("%s is not a regular file (%s)", e.Name(), e.Type())
		}
	}
}

func isRegular(path string) bool {
	st, err := os.Lstat(path)
	return err == nil && st.Mode().IsRegular()
}

// verificationFields are verification.json's members, all compared.
var verificationFields = []string{"ok", "digest", "checkedReceipts", "mismatches"}

// compareStored reads a stored derived file and reports every field of
// fields that differs from the re-derived value, and every member that
// should not be there.
func compareStored(dir, file string, derived map[string]any, fields []string, from string, fail func(string, ...any)) map[string]any {
	v, err := canon.ReadFile(filepath.Join(dir, file), 0)
	if err != nil {
		fail("%s: %v", file, err)
		return nil
	}
	stored, ok := v.(map[string]any)
	if !ok {
		fail("%s: not a JSON object", file)
		return nil
	}
	for _, k := range canon.SortedKeys(stored) {
		if !slices.Contains(fields, k) {
			fail("%s: unexpected member %q", file, k)
		}
	}
	for _, k := range fields {
		if !sameValue(stored[k], derived[k]) {
			fail("%s: %s is %s, but re-deriving it from %s gives %s", file, k, show(stored[k]), from, show(derived[k]))
		}
	}
	return stored
}

// compareGate checks gate.json against the verdicts re-derived from the
// workload's gate: the workload name, the overall verdict, and each rule's
// kind, name and verdict in order. Messages and positions are not
// compared: they name the workload file as the run saw its path.
func compareGate(dir string, w *workload.Workload, d *harness.Derived, from string, fail func(string, ...any)) {
	derived := harness.GateValue(w, d.Gates)
	src := w.Path + " and " + from
	// Rules are compared one by one below, with better messages.
	stored := compareStored(dir, rundir.GateFile, derived, []string{"workload", "passed", "rules"}, src, exceptRules(fail))
	if stored == nil {
		return
	}
	rules, ok := stored["rules"].([]any)
	if !ok {
		fail("%s: rules is not a list", rundir.GateFile)
		return
	}
	want := derived["rules"].([]any)
	if len(rules) != len(want) {
		fail("%s: rules has %d entries, but %s declares %d rule(s)", rundir.GateFile, len(rules), w.Path, len(want))
	}
	for i := 0; i < len(rules) && i < len(want); i++ {
		got, _ := rules[i].(map[string]any)
		compareGateRule(i, got, want[i].(map[string]any), src, fail)
	}
}

// exceptRules is fail without the comparison of the rules as a whole.
func exceptRules(fail func(string, ...any)) func(string, ...any) {
	return func(format string, a ...any) {
		if strings.HasPrefix(format, "%s: %s is") && len(a) > 1 && a[1] == "rules" {
			return
		}
		fail(format, a...)
	}
}

// compareGateRule compares one stored gate rule's kind, name and verdict
// with the re-derived one.
func compareGateRule(i int, got, exp map[string]any, src string, fail func(string, ...any)) {
	for _, k := range []string{"rule", "name", "passed"} {
		if !sameValue(got[k], exp[k]) {
			fail("%s: rules[%d].%s is %s, but re-deriving rule %q from %s gives %s", rundir.GateFile, i, k, show(got[k]), exp["name"], src, show(exp[k]))
		}
	}
}

func sameValue(a, b any) bool {
	x, err1 := canon.Encode(a)
	y, err2 := canon.Encode(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}

func show(v any) string {
	if v == nil {
		return "absent"
	}
	return gate.ShortJSON(v)
}

func itoa(i int) string { return strconv.Itoa(i) }

// Leftover kinds.
const (
	// LeftInterrupted is a hidden staging directory (.<slug>.partial-*) a
	// run built and never swapped into place: it was killed, or it ended
	// unfinished beside a complete run of the same inputs.
	LeftInterrupted = "interrupted"
	// LeftReplaced is a previous run directory moved aside during a swap
	// (.<slug>.old-*) that was never removed.
	LeftReplaced = "replaced"
	// LeftTemp is a temporary file an atomic write never renamed (the
	// store's .tmp-*, atomicfile's .assay-tmp-*).
	LeftTemp = "temporary"
	// LeftLock is a run directory's lock file: held by a run in progress,
	// or left by one that was killed.
	LeftLock = "lock"
)

// Leftover is something an interrupted writer left behind. It is listed,
// neither failed nor passed over: it is not evidence, and it is not
// nothing either.
type Leftover struct {
	Path string
	Kind string
	// Status is an interrupted run's record status ("" when unreadable).
	Status string
}

// leftoverKind classifies a hidden name by the conventions of
// harness/rundir (staging, replaced and legacy old directories, lock
// files) and of the store and atomicfile (temporary files).
func leftoverKind(name string, dir bool) string {
	if !strings.HasPrefix(name, ".") {
		return "" // Cargo.lock and friends are nobody's leftovers
	}
	for _, r := range leftoverRules {
		if r.dir == dir && r.match(name) {
			return r.kind
		}
	}
	return ""
}

// leftoverRules name the leftovers, first match wins: a directory or a
// file whose hidden name matches is of kind.
var leftoverRules = []struct {
	dir   bool
	kind  string
	match func(name string) bool
}{
	{true, LeftInterrupted, func(n string) bool { return strings.Contains(n, rundir.StagingInfix) }},
	{true, LeftReplaced, func(n string) bool {
		return strings.Contains(n, rundir.ReplacedInfix) || strings.Contains(n, ".old-")
	}},
	{false, LeftLock, func(n string) bool { return strings.HasSuffix(n, rundir.LockSuffix) }},
	{false, LeftTemp, func(n string) bool {
		return strings.HasPrefix(n, ".tmp-") || strings.HasPrefix(n, atomicfile.TempPrefix)
	}},
}

func leftover(path, kind string) Leftover {
	l := Leftover{Path: path, Kind: kind}
	if kind == LeftInterrupted {
		if v, err := runrecord.Read(path, runrecord.Options{}); err == nil && v.Record != nil {
			l.Status = v.Record.Status
		}
	}
	return l
}

// storeLeftovers lists the temporary files killed writers left in the
// store (store.FileStore.Leftovers; none while a write is in flight).
func storeLeftovers(storeDir string) []Leftover {
	if _, err := os.Stat(storeDir); err != nil {
		return nil
	}
	fst, err := store.OpenFileStore(storeDir)
	if err != nil {
		return nil
	}
	paths, _, err := fst.Leftovers()
	if err != nil {
		return nil
	}
	var out []Leftover
	for _, p := range paths {
		out = append(out, Leftover{Path: p, Kind: LeftTemp})
	}
	return out
}

// Description says what a leftover is, for people.
func (l Leftover) Description() string {
	switch l.Kind {
	case LeftInterrupted:
		s := "staging directory of a run that never finished"
		if l.Status != "" {
			s += " (record status " + l.Status + ")"
		}
		return s + "; not evidence"
	case LeftReplaced:
		return "previous run directory moved aside by a swap that never finished; not evidence"
	case LeftLock:
		return "lock file of a run directory's writer (in progress, or killed); not evidence"
	default:
		return "temporary file of a write that never finished; not evidence"
	}
}
