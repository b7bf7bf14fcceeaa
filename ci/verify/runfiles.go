package verify

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/harness"
	"github.com/algal-assay/assay/harness/parts"
	"github.com/algal-assay/assay/harness/rundir"
	"github.com/algal-assay/assay/harness/workload"
	"github.com/algal-assay/assay/runrecord"
)

// A run directory holds nothing but files of the kinds below, and each
// is either evidence verified on its own (a report, an exhausted
// account) or re-derived from that evidence and the workload and
// compared byte for byte: re-rendered through the functions the run
// wrote it with, so what the verifier expects and what a run writes can
// never drift apart. A file of no kind is a failure naming it.
//
// FileKinds is that table, one entry per kind: what it holds, and which
// files of a run are of it and what each must be (wants).
var FileKinds = []FileKind{
	{"record", "the run record (foundry-run.yml): strict, ordered, consistent with the directory", wantRecord},
	{"assembly", "the phase roster (_assembly.json): the roster the workload gives", wantAssembly},
	{"config", "the engine config (config.json, part-NNNN-config.json): the workload compiled; its paths name the same tree files", wantConfig},
	{"scripted-table", "a scripted table compiled from the cases' responses", wantTables},
	{"report", "a report or exhausted account (report.json, report-rNN.json, budget.json, part-NNNN-report.json): evidence, verified", wantReports},
	{"contender", "a contender's copy of its report entry (system-<id>.json, candidate-NN-<key>.json)", wantContenders},
	{"verification", "verification.json (and a run in parts' aggregate.json): re-derived from the verified evidence", wantVerification},
	{"summary", "repeats.json, gate.json, summary.md and report.html: re-rendered from the verified evidence", wantSummary},
	{"part-record", "a shard's verification record of a part it ran (part-NNNN-verified.json): re-derived by verifying the part's report in full, byte for byte; never read as evidence, and never in a run directory (ci merge takes it, and does not copy it)", wantPartRecords},
}

// FileKind is one entry of FileKinds.
type FileKind struct {
	Name, Doc string
	wants     func(rc *rerun) ([]want, error)
}

// rerun is what re-deriving a run learnt, for the kinds' wants.
type rerun struct {
	dir      string
	rec      *runrecord.Record
	compiled *workload.Compiled
	derived  *harness.Derived
	// k is the run's repeats.
	k int
	// evidence names the report files (report.json or budget.json, and
	// each repeat's).
	evidence []string
	// tree is the source tree the workload's files are in, when the runs
	// were made from another copy of it (Options.Tree); roots are the
	// workloads roots, the fallback a path is named from (treeRel).
	tree  string
	roots []string
	// shown is how the run named its workload file in messages, and
	// local how this verifier names it.
	shown, local string
	// shard is set for a shard's parts directory (checkShardParts): no
	// record, no verdict, only the parts it holds. rec and derived are
	// then nil.
	shard *shardParts
}

// parts are the parts whose files the directory holds: every part of a
// run in parts, a shard's held ones.
func (rc *rerun) parts() []workload.Part {
	if rc.shard != nil {
		return rc.shard.held
	}
	return rc.compiled.Parts
}

// want is what one file must be.
type want struct {
	name, kind string
	// phase, ids and iteration are the record row that lists the file
	// (phase 0: the file is not listed, the record and the roster).
	phase     int
	ids       []string
	iteration int
	// data are the bytes it must hold; nil when check decides, or when it
	// is evidence verified on its own.
	data  []byte
	check func(got []byte) []string
}

func wantRecord(rc *rerun) ([]want, error) {
	if rc.shard != nil {
		return nil, nil
	}
	return []want{{name: runrecord.RecordFile, kind: "record"}}, nil
}

func wantAssembly(rc *rerun) ([]want, error) {
	if rc.shard != nil {
		return nil, nil
	}
	b, err := runrecord.EncodeAssembly(harness.Assembly(rc.compiled.Workload))
	if err != nil {
		return nil, err
	}
	return []want{{name: runrecord.AssemblyFile, kind: "assembly", data: b}}, nil
}

func wantConfig(rc *rerun) ([]want, error) {
	c := rc.compiled
	if c.Parts == nil {
		return []want{{name: workload.ConfigFile, kind: "config", phase: harness.PhaseCompile, ids: []string{"config"},
			check: rc.configCheck(workload.ConfigFile, c.Config)}}, nil
	}
	var out []want
	for _, p := range rc.parts() {
		files, err := c.PartFiles(p)
		if err != nil {
			return nil, err
		}
		out = append(out, want{name: p.ConfigFile(), kind: "config", phase: harness.PhaseCompile, ids: []string{"config"}, check: rc.partConfigCheck(p, sha256.Sum256(files[p.ConfigFile()]))})
	}
	return out, nil
}

// partConfigCheck is configCheck of one part's config that holds only
// the digest of the bytes the workload compiles it to, not the parsed
// config: every part's want lives until the directory is checked, and the
// parsed configs of all parts grew with the cases (issue 31: 24 MB at 8 x
// 20,000). A stored config of exactly those bytes agrees (its canonical
// form is still checked); any other is compared field by field against
// the part's config compiled again, so the messages are configCheck's.
func (rc *rerun) partConfigCheck(p workload.Part, compiled [sha256.Size]byte) func([]byte) []string {
	name := p.ConfigFile()
	return func(got []byte) []string {
		if sha256.Sum256(got) == compiled {
			return canonical(name)(got)
		}
		files, err := rc.compiled.PartFiles(p)
		var derived any
		if err == nil {
			derived, err = canon.Parse(files[name], 0)
		}
		if err != nil {
			return []string{fmt.Sprintf("%s: %v", name, err)}
		}
		return rc.configCheck(name, derived)(got)
	}
}

func wantTables(rc *rerun) ([]want, error) {
	c := rc.compiled
	var out []want
	add := func(files map[string][]byte, skip string) {
		for _, name := range slices.Sorted(maps.Keys(files)) {
			if name != skip {
				out = append(out, want{name: name, kind: "scripted-table", phase: harness.PhaseCompile, ids: []string{"scripted-table"}, data: files[name]})
			}
		}
	}
	if c.Parts == nil {
		add(c.Files, "")
		return out, nil
	}
	for _, p := range rc.parts() {
		files, err := c.PartFiles(p)
		if err != nil {
			return nil, err
		}
		add(files, p.ConfigFile())
	}
	return out, nil
}

func wantReports(rc *rerun) ([]want, error) {
	if rc.shard != nil {
		return wantShardReports(rc), nil
	}
	var out []want
	for i, name := range rc.evidence {
		id := "report"
		if i == 0 && name == rundir.BudgetFile {
			id = "budget"
		}
		out = append(out, want{name: name, kind: "report", phase: harness.PhaseEvaluate, ids: []string{id}, check: canonical(name)})
	}
	for i, p := range rc.compiled.Parts {
		out = append(out, want{name: p.ReportFile(), kind: "report", phase: harness.PhaseEvaluate, ids: []string{"part-report", parts.ReusedReport}, iteration: i + 1, check: rc.partReportCheck(i, p.ReportFile())})
	}
	return out, nil
}

// partReportCheck is canonical of the i-th part report, whose value the
// parts' re-derivation parsed already and gave the digest of in canonical
// form: bytes of that digest are that form; any others are parsed and
// encoded again here (and named).
func (rc *rerun) partReportCheck(i int, name string) func([]byte) []string {
	full := canonical(name)
	return func(got []byte) []string {
		if d := rc.derived; d != nil && i < len(d.CanonicalParts) && d.CanonicalParts[i] != ([sha256.Size]byte{}) && sha256.Sum256(got) == d.CanonicalParts[i] {
			return nil
		}
		return full(got)
	}
}

// wantShardReports are a shard's part reports, each verified here in
// full, against its part.
func wantShardReports(rc *rerun) []want {
	s := rc.shard
	out := make([]want, 0, len(s.held))
	for _, p := range s.held {
		out = append(out, want{name: p.ReportFile(), kind: "report", check: func(got []byte) []string {
			if bad := canonical(p.ReportFile())(got); bad != nil {
				return bad
			}
			return s.verdict(rc, p).why
		}})
	}
	return out
}

// canonical holds evidence a run wrote to the form it writes (harness.JSONFile):
// what it says is verified on its own; its bytes must be the ones a run
// writes for it.
func canonical(name string) func([]byte) []string {
	return func(got []byte) []string {
		v, err := canon.Parse(got, 0)
		if err != nil {
			return []string{fmt.Sprintf("%s: %v", name, err)}
		}
		want, err := harness.JSONFile(v)
		if err != nil || !bytes.Equal(got, want) {
			return []string{fmt.Sprintf("%s is not in the canonical form a run writes (%s)", name, firstDifference(got, want))}
		}
		return nil
	}
}

func wantContenders(rc *rerun) ([]want, error) {
	if rc.compiled.Parts != nil {
		return nil, nil
	}
	files, err := harness.ContenderFiles(rc.derived.Bench, rc.derived.Foundry)
	return rendered(files, "contender"), err
}

func wantVerification(rc *rerun) ([]want, error) {
	if rc.shard != nil {
		return nil, nil
	}
	var out []want
	if rc.derived.Aggregate != nil {
		b, err := harness.JSONFile(rc.derived.Aggregate)
		if err != nil {
			return nil, err
		}
		out = append(out, want{name: workload.AggregateFile, kind: "verification", phase: harness.PhaseVerify, ids: []string{"aggregate"}, data: b})
	}
	b, err := harness.JSONFile(rc.derived.Verification.Value())
	if err != nil {
		return nil, err
	}
	return append(out, want{name: rundir.VerificationFile, kind: "verification", phase: harness.PhaseVerify, ids: []string{"verification"}, data: b}), nil
}

func wantSummary(rc *rerun) ([]want, error) {
	if rc.shard != nil {
		return nil, nil
	}
	warnings, err := harness.DerivedWarnings(rc.compiled)
	if err != nil {
		return nil, err
	}
	files, err := harness.SummaryFiles(rc.derived.Outcome(rc.compiled, warnings))
	out := rendered(files, "summary")
	for i := range out {
		// Messages name the workload file as the run showed it.
		out[i].data = bytes.ReplaceAll(out[i].data, []byte(rc.local), []byte(rc.shown))
	}
	return out, err
}

// wantPartRecords are a shard's verification records: for each part it
// holds, the bytes harness.PartRecord gives when it verifies the part's
// report again, here; a part that does not verify (or whose usage the
// report does not carry) has none.
func wantPartRecords(rc *rerun) ([]want, error) {
	s := rc.shard
	if s == nil {
		return nil, nil
	}
	out := make([]want, 0, len(s.held))
	for _, p := range s.held {
		name := parts.RecordFile(p)
		out = append(out, want{name: name, kind: "part-record", check: func(got []byte) []string {
			v := s.verdict(rc, p)
			if v.record == nil {
				return []string{fmt.Sprintf("%s records part %d as verified, but it does not verify here: %s", name, p.N, strings.Join(v.why, "; "))}
			}
			if !bytes.Equal(got, v.record) {
				return []string{fmt.Sprintf("%s differs from the record re-derived by verifying %s (%s): a forged or stale record", name, p.ReportFile(), firstDifference(got, v.record))}
			}
			return nil
		}})
	}
	return out, nil
}

func rendered(files []harness.RenderedFile, kind string) []want {
	out := make([]want, len(files))
	for i, f := range files {
		out[i] = want{name: f.Name, kind: kind, phase: f.Phase, ids: []string{f.ID}, iteration: f.Iteration, data: f.Data}
	}
	return out
}

// configCheck compares a stored config with the one the workload compiles
// to for this run directory: every member equal, except that a path (a
// manifest, a case file, a scripted: or replay: table) may be written
// from wherever the run was made, so two paths agree when they name the
// same file of the tree (the artifact side's tree, else the git work tree
// holding the workload). What each file holds is pinned anyway: its
// digest is part of the run's identity, which names the directory.
func (rc *rerun) configCheck(name string, derived any) func([]byte) []string {
	return func(got []byte) []string {
		if bad := canonical(name)(got); bad != nil {
			return bad
		}
		stored, err := canon.Parse(got, 0)
		if err != nil {
			return []string{fmt.Sprintf("%s: %v", name, err)}
		}
		var out []string
		n := 0
		diffFields(stored, derived, "", func(field string, g, w any) {
			if rc.samePath(g, w) {
				return
			}
			if n++; n <= maxFieldMismatches {
				out = append(out, fmt.Sprintf("%s: %s is %s, but %s compiles to %s", name, field, show(g), rc.compiled.Workload.Path, show(w)))
			}
		})
		if n > maxFieldMismatches {
			out = append(out, fmt.Sprintf("%s: %d more field(s) disagree with the compiled workload", name, n-maxFieldMismatches))
		}
		return out
	}
}

var scheme = regexp.MustCompile(`^([a-z]+:)?(.+)$`)

// samePath reports whether got (the stored config's string) names the
// tree file want (the compiled config's path, relative to this run
// directory) does.
func (rc *rerun) samePath(got, want any) bool {
	g, ok1 := got.(string)
	w, ok2 := want.(string)
	if !ok1 || !ok2 {
		return false
	}
	gm, wm := scheme.FindStringSubmatch(g), scheme.FindStringSubmatch(w)
	if gm == nil || wm == nil || gm[1] != wm[1] || filepath.IsAbs(wm[2]) {
		return false
	}
	return namesSame(path.Clean(filepath.ToSlash(gm[2])), rc.treeRels(filepath.Join(rc.dir, filepath.FromSlash(wm[2]))))
}

// treeRels names a file from each root its tree may have: the side's
// tree when one is given, the git work tree holding it, the workloads
// roots (--workloads) it is under, and the nearest directory holding it
// and the workload file. A path written from elsewhere agrees when it
// names the file as one of them does.
func (rc *rerun) treeRels(target string) []string {
	abs, err := filepath.Abs(target)
	if err != nil {
		return nil
	}
	var out []string
	if rel, ok := rc.sideTreeRel(abs); ok {
		out = append(out, rel)
	}
	if d := workload.DisplayPath(abs); !filepath.IsAbs(d) {
		out = append(out, d)
	}
	for _, r := range rc.roots {
		if rel, ok := relInside(r, abs); ok {
			out = append(out, rel)
		}
	}
	if rel, ok := rc.workloadRel(abs); ok {
		out = append(out, rel)
	}
	return out
}

// sideTreeRel names abs from the side's tree, when one is given.
func (rc *rerun) sideTreeRel(abs string) (string, bool) {
	if rc.tree == "" {
		return "", false
	}
	root, err := filepath.Abs(rc.tree)
	if err != nil {
		return "", false
	}
	return relInside(root, abs)
}

// workloadRel names abs from the nearest directory holding both it and
// the workload file.
func (rc *rerun) workloadRel(abs string) (string, bool) {
	wdir, err := filepath.Abs(filepath.Dir(rc.compiled.Workload.Path))
	if err != nil {
		return "", false
	}
	for dir := wdir; ; dir = filepath.Dir(dir) {
		if rel, ok := relInside(dir, abs); ok {
			return rel, true
		}
		if dir == filepath.Dir(dir) {
			return "", false
		}
	}
}

// namesSame reports whether path s (cleaned, slash-separated) names the
// file some of rels name.
func namesSame(s string, rels []string) bool {
	for _, rel := range rels {
		if s == rel || strings.HasSuffix(s, "/"+rel) {
			return true
		}
	}
	return false
}

func relInside(root, p string) (string, bool) {
	r, err := filepath.Rel(root, p)
	if err != nil || r == ".." || strings.HasPrefix(r, "../") || filepath.IsAbs(r) {
		return "", false
	}
	return filepath.ToSlash(r), true
}

// plainPath is a path that reads the same in JSON, Markdown and HTML.
var plainPath = regexp.MustCompile(`^[A-Za-z0-9._/+~-]+$`)

// positionSuffix ends a gate rule's "at".
var positionSuffix = regexp.MustCompile(`:[0-9]+:[0-9]+$`)

// learnShown finds how the run named its workload file: from gate.json's
// first rule position, which must name the same file (the tree-relative
// path, under whatever directory the run was made in). Everything else
// in the derived files is then compared byte for byte.
func (rc *rerun) learnShown(has func(string) bool) string {
	w := rc.compiled.Workload
	rc.local = workload.DisplayPath(w.Path)
	rc.shown = rc.local
	if !has(rundir.GateFile) {
		return ""
	}
	v, err := canon.ReadFile(filepath.Join(rc.dir, rundir.GateFile), 0)
	if err != nil {
		return "" // the byte comparison reports it
	}
	rules, _ := v.(map[string]any)["rules"].([]any)
	if len(rules) == 0 {
		return ""
	}
	at, _ := rules[0].(map[string]any)["at"].(string)
	shown := positionSuffix.ReplaceAllString(at, "")
	if shown == rc.local {
		return ""
	}
	if !plainPath.MatchString(rc.local) {
		return fmt.Sprintf("%s: the workload is at %q, a path that does not read the same in every format; verify it from a path of plain characters", rundir.GateFile, rc.local)
	}
	if !plainPath.MatchString(shown) || !namesSame(shown, rc.treeRels(w.Path)) {
		return fmt.Sprintf("%s: rules[0].at names %s, not the workload %s the run was re-derived against", rundir.GateFile, show(at), w.Path)
	}
	rc.shown = shown
	return ""
}

// checkFiles lays the run directory beside what re-deriving it says it
// must hold: every file of a known kind, listed in the record as the run
// lists it, holding the bytes re-derived for it; nothing else.
func (rc *rerun) checkFiles(named func(file string) bool, fail func(string, ...any)) error {
	wants, byKind, err := rc.wanted()
	if err != nil {
		return err
	}
	entries, err := os.ReadDir(rc.dir)
	if err != nil {
		fail("cannot list the run directory: %v", pathErr(err))
		return nil
	}
	present := map[string]bool{}
	for _, e := range entries {
		present[e.Name()] = true
		rc.checkEntry(e, wants, named, fail)
	}
	if rc.shard != nil {
		rc.checkShardMissing(wants, present, fail)
		return nil
	}
	if rc.rec.Status == runrecord.RunComplete {
		for _, name := range slices.Sorted(maps.Keys(wants)) {
			if !present[name] {
				fail("%s is missing: a complete run of this workload writes it (%s)", name, wants[name].kind)
			}
		}
	}
	rc.checkRows(wants, writeOrder(rc, byKind), fail)
	return nil
}

// wanted is every file the run must hold, by name and by kind.
func (rc *rerun) wanted() (map[string]want, map[string][]want, error) {
	wants := map[string]want{}
	byKind := map[string][]want{}
	for _, k := range FileKinds {
		ws, err := k.wants(rc)
		if err != nil {
			return nil, nil, err
		}
		byKind[k.Name] = ws
		for _, w := range ws {
			wants[w.name] = w
		}
	}
	return wants, byKind, nil
}

// checkEntry holds one file of the directory to what the run must have
// written there; a file a comparison already named is not named again.
func (rc *rerun) checkEntry(e os.DirEntry, wants map[string]want, named func(file string) bool, fail func(string, ...any)) {
	w, ok := wants[e.Name()]
	if !ok {
		fail("%s is not a file this run writes (no kind of run-directory file Assay knows), so it is neither evidence nor re-derivable", e.Name())
		return
	}
	if !e.Type().IsRegular() || (w.data == nil && w.check == nil) || named(e.Name()) {
		return
	}
	got, err := canon.ReadBounded(filepath.Join(rc.dir, e.Name()), 0)
	if err != nil {
		fail("%s: %v", e.Name(), err)
		return
	}
	w.compare(e.Name(), got, fail)
}

// compare holds a file's bytes to the want: its check, else the bytes
// re-derived for it.
func (w want) compare(name string, got []byte, fail func(string, ...any)) {
	if w.check != nil {
		for _, m := range w.check(got) {
			fail("%s", m)
		}
		return
	}
	if !bytes.Equal(got, w.data) {
		fail("%s differs from the %s re-derived from the verified evidence (%s)", name, w.kind, firstDifference(got, w.data))
	}
}

// checkShardMissing wants every file of each part a shard holds but its
// record: a part whose usage the report does not carry has none (the
// merge verifies it).
func (rc *rerun) checkShardMissing(wants map[string]want, present map[string]bool, fail func(string, ...any)) {
	for _, name := range slices.Sorted(maps.Keys(wants)) {
		if !present[name] && wants[name].kind != "part-record" {
			fail("%s is missing: a shard writes it for each part it holds (%s)", name, wants[name].kind)
		}
	}
}

// checkRows holds the record's rows to the files: each listed once, in
// the phase and under the id the run writes it, in the order it writes.
func (rc *rerun) checkRows(wants map[string]want, seq map[string]int, fail func(string, ...any)) {
	listed := map[string]bool{}
	for _, p := range rc.rec.Phases {
		prev, prevFile := -1, ""
		for _, a := range p.Artifacts {
			if listed[a.File] {
				fail("%s lists %s twice: a run writes each file once", runrecord.RecordFile, a.File)
				continue
			}
			listed[a.File] = true
			w, ok := wants[a.File]
			if !ok || !rowAsWritten(p, a, w, fail) {
				continue // an unknown file is reported as unknown, or as listed and missing
			}
			if s := seq[a.File]; s < prev {
				fail("%s lists %s after %s in phase %d, but a run writes it before (rows are listed in the order the run writes its files)", runrecord.RecordFile, a.File, prevFile, p.N)
			} else {
				prev, prevFile = s, a.File
			}
		}
	}
}

// rowAsWritten reports whether a row lists its file in the phase, under
// the id and at the iteration the run writes it, and fails it if not.
func rowAsWritten(p runrecord.Phase, a runrecord.Artifact, w want, fail func(string, ...any)) bool {
	if w.phase != 0 && p.N == w.phase && slices.Contains(w.ids, a.ID) && a.Iteration == w.iteration {
		return true
	}
	fail("%s lists %s in phase %d as %s%s, but a run writes it in phase %d as %s%s", runrecord.RecordFile, a.File, p.N, a.ID, iteration(a.Iteration), w.phase, strings.Join(w.ids, " or "), iteration(w.iteration))
	return false
}

// writeOrder numbers the files a run writes in the order it writes (and
// lists) them within their phase: the compiled tables by name, then
// config.json (a run in parts writes each part's files by name, part after
// part); the contenders' copies by iteration, then the reports; then the
// verification and the summary files as re-derived.
func writeOrder(rc *rerun, byKind map[string][]want) map[string]int {
	var names []string
	add := func(ws []want) {
		for _, w := range ws {
			names = append(names, w.name)
		}
	}
	compiled := append(slices.Clone(byKind["scripted-table"]), byKind["config"]...)
	if rc.compiled.Parts != nil {
		slices.SortFunc(compiled, func(a, b want) int { return strings.Compare(a.name, b.name) })
	}
	add(compiled)
	for _, k := range []string{"contender", "report", "verification", "summary"} {
		add(byKind[k])
	}
	seq := make(map[string]int, len(names))
	for i, n := range names {
		if _, ok := seq[n]; !ok {
			seq[n] = i
		}
	}
	return seq
}

func iteration(i int) string {
	if i == 0 {
		return ""
	}
	return fmt.Sprintf(" (iteration %d)", i)
}

// firstDifference says where two files part: the line, and what each
// holds there, shortened.
func firstDifference(got, want []byte) string {
	line := 1
	for i := 0; i < len(got) && i < len(want); i++ {
		if got[i] != want[i] {
			return fmt.Sprintf("line %d: %s where it must be %s", line, excerpt(got[i:]), excerpt(want[i:]))
		}
		if got[i] == '\n' {
			line++
		}
	}
	if len(got) > len(want) {
		return fmt.Sprintf("line %d: %d extra byte(s) at the end: %s", line, len(got)-len(want), excerpt(got[len(want):]))
	}
	return fmt.Sprintf("line %d: it ends %d byte(s) early", line, len(want)-len(got))
}

func excerpt(b []byte) string {
	s := oneLine(string(b[:min(len(b), 60)]))
	return fmt.Sprintf("%q", s)
}
