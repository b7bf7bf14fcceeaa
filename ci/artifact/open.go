package artifact

import (
	"cmp"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/algal-assay/assay/ci/diff"
	"github.com/algal-assay/assay/ci/verify"
	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/vm"
	"github.com/algal-assay/assay/harness/workload"
)

// Open admits an artifact directory: the marker must name this layout,
// every entry must be a regular file or a directory (a symbolic link could
// make a reader publish a file from the machine it runs on), and the
// directory stays within the file-count and byte bounds. Nothing else is
// trusted by opening it.
func Open(dir string) (*Artifact, error) {
	st, err := os.Lstat(dir)
	if err != nil {
		return nil, &Error{Code: CodeInvalid, Message: "artifact " + dir, Err: err}
	}
	if !st.IsDir() {
		return nil, errorf(CodeInvalid, "artifact %s is not a directory", dir)
	}
	if err := admitEntries(dir); err != nil {
		return nil, err
	}
	a := &Artifact{Dir: dir}
	if err := a.readMarker(); err != nil {
		return nil, err
	}
	if err := a.checkSideDirs(); err != nil {
		return nil, err
	}
	return a, nil
}

// checkSideDirs requires each side's runs, store and tree directories.
func (a *Artifact) checkSideDirs() error {
	for _, side := range []string{Base, Head} {
		sd := a.Side(side)
		for _, d := range []string{sd.Runs, sd.Store, sd.Tree} {
			if st, err := os.Stat(d); err != nil || !st.IsDir() {
				return errorf(CodeInvalid, "artifact %s has no directory %s", a.Dir, relTo(a.Dir, d))
			}
		}
	}
	return nil
}

// admitEntries holds every entry under dir to a regular file or a
// directory, within the file-count and byte bounds.
func admitEntries(dir string) error {
	files, total := 0, int64(0)
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return &Error{Code: CodeInvalid, Message: "artifact " + p, Err: err}
		}
		if d.IsDir() {
			return nil
		}
		if !d.Type().IsRegular() {
			return errorf(CodeInvalid, "artifact entry %s is not a regular file (%s); an artifact holds only files and directories", p, d.Type())
		}
		info, err := d.Info()
		if err != nil {
			return &Error{Code: CodeInvalid, Message: "artifact " + p, Err: err}
		}
		files++
		total += info.Size()
		if files > maxFiles || total > maxTotalBytes {
			return errorf(CodeInvalid, "artifact %s holds more than %d files or %d bytes", dir, maxFiles, int64(maxTotalBytes))
		}
		return nil
	})
}

// readMarker reads artifact.json into a: its members, each checked, and
// the canonical form the check writes.
func (a *Artifact) readMarker() error {
	data, err := canon.ReadBounded(filepath.Join(a.Dir, MarkerFile), maxMarker)
	if err != nil {
		return &Error{Code: CodeInvalid, Message: "artifact marker " + MarkerFile, Err: err}
	}
	v, err := canon.Parse(data, maxMarker)
	if err != nil {
		return &Error{Code: CodeInvalid, Message: MarkerFile, Err: err}
	}
	m, _ := v.(map[string]any)
	if err := onlyMembers(m, markerMembers, MarkerFile); err != nil {
		return err
	}
	if m["layout"] != Layout {
		return errorf(CodeInvalid, "%s: layout %v is not %s", MarkerFile, m["layout"], Layout)
	}
	for _, read := range []func(map[string]any) error{a.markerPaths, a.markerArchive, a.markerCommits} {
		if err := read(m); err != nil {
			return err
		}
	}
	for _, k := range markerMembers {
		if _, ok := m[k]; !ok {
			return errorf(CodeInvalid, "%s: member %q is missing", MarkerFile, k)
		}
	}
	if a.Presentation, err = parsePresentation(m["presentation"]); err != nil {
		return err
	}
	// The marker is in the one form the check writes.
	if b, err := canon.Encode(v); err != nil || string(append(b, '\n')) != string(data) {
		return errorf(CodeInvalid, "%s is not in the canonical form the check writes", MarkerFile)
	}
	return nil
}

// onlyMembers refuses the first member of m (in key order) that allowed
// does not list; where names the object in the message.
func onlyMembers(m map[string]any, allowed []string, where string) error {
	for _, k := range canon.SortedKeys(m) {
		if !slices.Contains(allowed, k) {
			return errorf(CodeInvalid, "%s: unknown member %q", where, k)
		}
	}
	return nil
}

// markerPaths reads the workload paths: at least one, each relative and
// inside the tree.
func (a *Artifact) markerPaths(m map[string]any) error {
	ps, _ := m["paths"].([]any)
	for _, p := range ps {
		s, ok := p.(string)
		if !ok || !relativeInside(s) {
			return errorf(CodeInvalid, "%s: paths: %v is not a relative path inside the tree", MarkerFile, p)
		}
		a.Paths = append(a.Paths, s)
	}
	if len(a.Paths) == 0 {
		return errorf(CodeInvalid, "%s: paths names no workload path", MarkerFile)
	}
	return nil
}

// markerArchive reads the receipt archive ("" for none): a directory of
// the head tree.
func (a *Artifact) markerArchive(m map[string]any) error {
	s, _ := m["archive"].(string)
	if s == "" {
		return nil
	}
	if !relativeInside(s) {
		return errorf(CodeInvalid, "%s: archive %q is not a relative path inside the tree", MarkerFile, s)
	}
	a.Archive = s
	if st, err := os.Lstat(filepath.Join(a.Dir, Head, TreeDir, filepath.FromSlash(s))); err != nil || !st.IsDir() {
		return errorf(CodeInvalid, "%s: archive %q is not a directory of the head tree", MarkerFile, s)
	}
	return nil
}

// markerCommits reads the commits the sides claim: null, or 40
// lowercase hex digits.
func (a *Artifact) markerCommits(m map[string]any) error {
	for key, dst := range map[string]*string{"head_commit": &a.HeadCommit, "base_commit": &a.BaseCommit} {
		c, present := m[key]
		if !present {
			continue
		}
		s, _ := c.(string)
		if s != "" && !commitPattern.MatchString(s) {
			return errorf(CodeInvalid, "%s: %s %v is not 40 lowercase hex digits", MarkerFile, key, c)
		}
		*dst = s
	}
	return nil
}

// markerMembers are artifact.json's members, every one required.
var markerMembers = []string{"layout", "paths", "archive", "head_commit", "base_commit", "presentation"}

func relativeInside(p string) bool {
	c := filepath.Clean(filepath.FromSlash(p))
	return p != "" && !filepath.IsAbs(c) && c != ".." && !strings.HasPrefix(c, ".."+string(filepath.Separator))
}

func relTo(base, p string) string {
	if r, err := filepath.Rel(base, p); err == nil {
		return filepath.ToSlash(r)
	}
	return p
}

// Evidence is what one side is verified and re-derived against: its own
// store and the workloads in its own tree, made once per opened artifact.
// Its workbench remembers the receipts it has replayed clean
// (vm.VerifiedReceipts), so the diff re-derived after Verify replays no
// receipt a second time. The memo spans this artifact's side alone and is
// keyed by the digest of the bytes its store read, so nothing verified
// elsewhere, and no file rewritten since, is taken on trust.
func (a *Artifact) Evidence(side string) (diff.Evidence, *verify.Workloads, error) {
	a.evidenceMu.Lock()
	defer a.evidenceMu.Unlock()
	if e, ok := a.evidence[side]; ok {
		return e.ev, e.ws, nil
	}
	sd := a.Side(side)
	wb, err := vm.NewWorkbench(sd.Store)
	if err != nil {
		return diff.Evidence{}, nil, err
	}
	wb.Verified = &vm.VerifiedReceipts{}
	var roots []string
	for _, p := range a.Paths {
		roots = append(roots, filepath.Join(sd.Tree, filepath.FromSlash(p)))
	}
	ws, err := verify.LoadWorkloads(roots...)
	if err != nil {
		return diff.Evidence{}, nil, err
	}
	ev := diff.Evidence{Store: wb, StoreDir: sd.Store, Workloads: ws}
	if a.evidence == nil {
		a.evidence = map[string]sideEvidence{}
	}
	a.evidence[side] = sideEvidence{ev, ws}
	return ev, ws, nil
}

// Checked is the verification of an artifact.
type Checked struct {
	Base, Head *verify.Report
	// Problems are head-side failures no file states: a workload that did
	// not load, or one with no run directory (it never ran, or its run
	// directory was taken out of the artifact).
	Problems []string
	// Root are the artifact root's own failures: an entry the check never
	// writes, a pr.json that does not read.
	Root []string
}

// OK reports whether every run directory of both sides verifies and no
// head workload is missing its run.
func (c *Checked) OK() bool {
	return c.Base.Failed() == 0 && c.Head.Failed() == 0 && len(c.Problems) == 0 && len(c.Root) == 0
}

// Failures lists every failure, one line each, paths relative to the
// artifact.
func (c *Checked) Failures(dir string) []string {
	var out []string
	for _, side := range []struct {
		name string
		rep  *verify.Report
	}{{Base, c.Base}, {Head, c.Head}} {
		for _, r := range side.rep.Results {
			if r.OK {
				continue
			}
			// One line per mismatch, disagreements between the run's own
			// files first: they are what an edit of the artifact leaves.
			for _, m := range append(r.Disagreements(), r.Evidence...) {
				out = append(out, fmt.Sprintf("%s (%s): %s", relTo(dir, r.Path), r.Kind, m))
			}
			if len(r.Mismatches) == 0 {
				out = append(out, fmt.Sprintf("%s (%s): does not verify", relTo(dir, r.Path), r.Kind))
			}
		}
	}
	return append(append(out, c.Problems...), c.Root...)
}

// VerifyOptions say what an artifact is verified against besides
// itself.
type VerifyOptions struct {
	// Tree lists a commit's files (GitTree, or the git trees API): each
	// side's workloads are the ones its commit holds under the
	// artifact's paths, never the ones the artifact carries. nil cannot
	// list, and so fails.
	Tree Tree
	// HeadCommit and BaseCommit are the commits the sides must be, from
	// a trusted source (the workflow_run event, the pull request); ""
	// takes the artifact's own claim (artifact.json), which a listing
	// still confirms its tree against.
	HeadCommit, BaseCommit string
	// AllowEmpty accepts a head commit with no workloads under the paths;
	// otherwise that is a failure, since a check of nothing proves nothing.
	AllowEmpty bool
	// Paths are the check's workload paths, from a trusted source (the
	// comment workflow's own flags): the artifact's claim must be them.
	// nil takes the artifact's claim.
	Paths []string
}

// Verify verifies both sides, each against its own store and workloads
// (ci/verify), and holds each side to its commit: the side's tree files
// must be the commit's, and every workload the commit holds under the
// artifact's paths must have a run that verifies; one without is
// "evidence missing for PATH", never a smaller pass.
func (a *Artifact) Verify(ctx context.Context, o VerifyOptions) (*Checked, error) {
	c := &Checked{}
	if o.Paths != nil && !slices.Equal(o.Paths, a.Paths) {
		c.Problems = append(c.Problems, fmt.Sprintf("the artifact's check covered %s, but the check's paths are %s: workloads outside what it covered would go unchecked", strings.Join(a.Paths, ", "), strings.Join(o.Paths, ", ")))
	}
	var err error
	if c.Base, err = a.verifySide(ctx, Base, o, c); err != nil {
		return nil, err
	}
	if c.Head, err = a.verifySide(ctx, Head, o, c); err != nil {
		return nil, err
	}
	c.Root = a.strays()
	slices.Sort(c.Problems)
	return c, nil
}

// verifySide verifies one side against its own store and workloads and
// its commit, adding the problems found to c.
func (a *Artifact) verifySide(ctx context.Context, side string, o VerifyOptions, c *Checked) (*verify.Report, error) {
	ev, ws, err := a.Evidence(side)
	if err != nil {
		return nil, err
	}
	sd := a.Side(side)
	commit := a.commit(side, o)
	rep, err := verify.Verify(ctx, []string{sd.Runs}, verify.Options{Evidence: ev.Store, StoreDir: sd.Store, AllowEmpty: true, Workloads: ws, Tree: sd.Tree, Commit: commit})
	if err != nil {
		return nil, err
	}
	for _, p := range ws.Problems {
		c.Problems = append(c.Problems, side+" workload does not load: "+strings.ReplaceAll(p, sd.Tree+string(filepath.Separator), ""))
	}
	c.Problems = append(c.Problems, a.listed(ctx, side, commit, rep, o)...)
	c.Problems = append(c.Problems, storeObjects(side, sd.Store)...)
	return rep, nil
}

// commit is the commit side must be: the trusted one when given, else
// the artifact's claim.
func (a *Artifact) commit(side string, o VerifyOptions) string {
	if side == Head {
		return cmp.Or(o.HeadCommit, a.HeadCommit)
	}
	return cmp.Or(o.BaseCommit, a.BaseCommit)
}

// unlistable says why side's commit cannot be listed ("" when it can):
// none is known, the artifact claims another, or there is nothing to
// list it with.
func (a *Artifact) unlistable(side, commit string, tree Tree) string {
	claim := a.HeadCommit
	if side == Base {
		claim = a.BaseCommit
	}
	switch {
	case commit == "":
		return fmt.Sprintf("the artifact names no %s commit, so the workloads that need evidence cannot be listed", side)
	case claim != "" && claim != commit:
		return fmt.Sprintf("the artifact's %s tree is of commit %s, not %s, the commit the check ran on (the check must check out the pull request's head commit, not the test merge)", side, claim, commit)
	case tree == nil:
		return fmt.Sprintf("the workloads at %s commit %s cannot be listed: no repository to list it from", side, commit)
	}
	return ""
}

// listed holds side to its commit's listing: the problems found.
func (a *Artifact) listed(ctx context.Context, side, commit string, rep *verify.Report, o VerifyOptions) []string {
	if why := a.unlistable(side, commit, o.Tree); why != "" {
		return []string{why}
	}
	blobs, err := o.Tree(ctx, commit)
	if err != nil {
		return []string{fmt.Sprintf("the workloads at %s commit %s cannot be listed: %v", side, commit, err)}
	}
	out, err := a.ConfirmTree(side, commit, blobs)
	if err != nil {
		return []string{fmt.Sprintf("the %s tree cannot be read: %v", side, err)}
	}
	files := make([]string, 0, len(blobs))
	for f := range blobs {
		files = append(files, f)
	}
	workloads := workload.DiscoverListed(a.Paths, files)
	if len(workloads) == 0 && side == Head && !o.AllowEmpty {
		out = append(out, fmt.Sprintf("no workloads under %s at head commit %s: a check of nothing proves nothing (a workflow that means it passes --allow-empty)", strings.Join(a.Paths, ", "), commit))
	}
	return append(out, a.unevidenced(side, commit, rep, workloads)...)
}

// unevidenced says, for each workload the commit lists that no run of
// the side's report re-derives to, that its evidence is missing and why.
func (a *Artifact) unevidenced(side, commit string, rep *verify.Report, workloads []string) []string {
	tree := a.Side(side).Tree
	ran := ranWorkloads(tree, rep)
	var out []string
	for _, w := range workloads {
		if ran[w] {
			continue
		}
		why := fmt.Sprintf("no run directory under %s re-derives to it", relTo(a.Dir, a.Side(side).Runs))
		if _, err := os.Lstat(filepath.Join(tree, filepath.FromSlash(w))); err != nil {
			why = fmt.Sprintf("the artifact's %s tree does not carry it", side)
		}
		out = append(out, fmt.Sprintf("evidence missing for %s (%s commit %s): %s", w, side, shortCommit(commit), why))
	}
	return out
}

// ranWorkloads are the workload files (relative to tree, slash-separated)
// a run of rep was re-derived against.
func ranWorkloads(tree string, rep *verify.Report) map[string]bool {
	ran := map[string]bool{}
	for _, r := range rep.Results {
		if r.Run == nil || r.Run.Workload == nil {
			continue
		}
		if rel, ok := inside(tree, r.Run.Workload.Path); ok {
			ran[filepath.ToSlash(rel)] = true
		}
	}
	return ran
}

// storeObjects holds every file of a side's store to what the store
// writes: <namespace>/<64 hex>.json whose bytes are the canonical JSON
// that hashes to its name. The store's readers accept any spelling of
// the value; the artifact carries exactly the bytes.
func storeObjects(side, dir string) []string {
	var out []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel := relTo(dir, p)
		m := storeName.FindStringSubmatch(rel)
		if m == nil {
			out = append(out, fmt.Sprintf("%s/store/%s is not a store object", side, rel))
			return nil
		}
		data, err := canon.ReadBounded(p, 0)
		if err != nil || canon.DigestBytes(data) != "sha256:"+m[1] {
			out = append(out, fmt.Sprintf("%s/store/%s is not the canonical bytes of its digest", side, rel))
		}
		return nil
	})
	return out
}

var storeName = regexp.MustCompile(`^(?:manifests|values|runs|effects)/([0-9a-f]{64})\.json$`)

func shortCommit(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

// Diff compares the two sides from the evidence alone: each run read
// through ci/diff.LoadSet (verdicts re-derived), archived receipts
// replayed against the head tree's manifests, the head's problems added.
// It does not verify first; call Verify and look at OK.
func (a *Artifact) Diff(ctx context.Context, checked *Checked, opts diff.Options) (*diff.Diff, error) {
	baseSet, err := a.loadSet(ctx, Base)
	if err != nil {
		return nil, err
	}
	headSet, err := a.loadSet(ctx, Head)
	if err != nil {
		return nil, err
	}
	b, h := a.Side(Base), a.Side(Head)
	// Gate messages name workload files as the harness displays them:
	// relative to the git work tree when the artifact sits inside one.
	opts.Trim = append(opts.Trim, b.Tree, h.Tree, b.Runs, h.Runs, a.Dir, workload.DisplayPath(b.Tree), workload.DisplayPath(h.Tree))
	if a.Archive != "" {
		opts.Replay = &diff.ReplayInput{Archive: filepath.Join(h.Tree, filepath.FromSlash(a.Archive)), BaseTree: b.Tree, HeadTree: h.Tree}
	}
	d, err := diff.Compute(baseSet, headSet, opts)
	if err != nil {
		return nil, err
	}
	if checked != nil {
		d.Problems = append(d.Problems, checked.Problems...)
	}
	d.Settle()
	return d, nil
}

// loadSet reads one side's runs through ci/diff.LoadSet, every verdict
// re-derived from the side's own evidence.
func (a *Artifact) loadSet(ctx context.Context, side string) (*diff.Set, error) {
	ev, _, err := a.Evidence(side)
	if err != nil {
		return nil, err
	}
	return diff.LoadSet(ctx, a.Side(side).Runs, ev)
}

// KindWorkload labels a head workload problem in Report, KindRoot one
// of the artifact's root.
const (
	KindWorkload = "workload"
	KindRoot     = "artifact"
)

// Report merges both sides and the problems into one ci/verify report, as
// `assay ci verify` prints it for an artifact root.
func (c *Checked) Report(dir string) *verify.Report {
	rep := &verify.Report{Roots: []string{dir}, AllowEmpty: true}
	for _, r := range []*verify.Report{c.Base, c.Head} {
		rep.Results = append(rep.Results, r.Results...)
		rep.Leftovers = append(rep.Leftovers, r.Leftovers...)
	}
	for _, p := range c.Problems {
		rep.Results = append(rep.Results, verify.Result{Path: filepath.Join(dir, Head), Kind: KindWorkload, Mismatches: []string{p}})
	}
	for _, p := range c.Root {
		rep.Results = append(rep.Results, verify.Result{Path: dir, Kind: KindRoot, Mismatches: []string{p}})
	}
	return rep
}

// ConfirmTree compares every file of side's tree with blobs, the git blob
// SHA-1 by path of the commit the tree claims to be (ci/github.CommitBlobs):
// it returns one line per file the commit does not hold as it is. An
// artifact could otherwise carry a workload, and so a gate, that the pull
// request never committed.
func (a *Artifact) ConfirmTree(side string, commit string, blobs map[string]string) ([]string, error) {
	tree := a.Side(side).Tree
	var bad []string
	err := filepath.WalkDir(tree, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(tree, p)
		rel = filepath.ToSlash(rel)
		data, err := canon.ReadBounded(p, 0)
		if err != nil {
			bad = append(bad, fmt.Sprintf("%s/tree/%s: %v", side, rel, err))
			return nil
		}
		want, ok := blobs[rel]
		switch {
		case !ok:
			bad = append(bad, fmt.Sprintf("%s/tree/%s is not in commit %s", side, rel, commit))
		case want != blobSHA(data):
			bad = append(bad, fmt.Sprintf("%s/tree/%s differs from %s at commit %s", side, rel, rel, commit))
		}
		return nil
	})
	return bad, err
}

// blobSHA is git's object name for a file's content.
func blobSHA(data []byte) string {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(data))
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}
