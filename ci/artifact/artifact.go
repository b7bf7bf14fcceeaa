// Package artifact is the PR check's self-contained evidence bundle: the
// run directories of the base and the head, exactly the store objects
// (manifests, receipts, values) their verification reads, and the files
// their workloads read, laid out so that `assay ci verify DIR` verifies it
// alone, on another machine, without the repository or its .algal store,
// and so that the comment workflow can re-derive every number it posts
// from it with its own binary.
//
// # Layout
//
//	artifact.json          {"layout":"assay.pr-artifact.v1","paths":[...],"archive":"...",
//	                        "head_commit":"<40 hex>","base_commit":"<40 hex>",
//	                        "presentation":{...}}
//	pr.json                {"number": N, "head_sha": "..."} (ci/github;
//	                       pr-number, its older form, is accepted too)
//	diff.json, report.md, pr.html, comment.md
//	                       what the check rendered (Render) from its diff
//	                       and the presentation: for people and the job
//	                       summary, never read back as evidence; `assay ci
//	                       verify` renders them again from the evidence and
//	                       requires the same bytes
//	base/ head/            one side each:
//	  runs/<workload>/<run-slug>/   the run directories
//	  store/<namespace>/<hex>.json  the store objects verification read
//	  tree/<path>                   the workload files (under paths), the
//	                                manifests, case files and scripted
//	                                tables they read, every *.algal.json,
//	                                and (head) the receipt archive
//
// Nothing else may sit at its root. Everything in it came from
// pull-request code, so [Open] admits only regular files and directories
// (no symbolic links), within bounds, and every reader treats it as data.
package artifact

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/algal-assay/assay/ci/diff"
	"github.com/algal-assay/assay/ci/verify"
	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/store"
	"github.com/algal-assay/assay/engine/vm"
	"github.com/algal-assay/assay/harness/workload"
)

// Names in the layout.
const (
	MarkerFile = "artifact.json"
	Layout     = "assay.pr-artifact.v1"
	Base       = "base"
	Head       = "head"
	RunsDir    = "runs"
	StoreDir   = "store"
	TreeDir    = "tree"
)

// Bounds on what Open admits.
const (
	maxFiles      = 100_000
	maxTotalBytes = 2 << 30
	maxMarker     = 8 << 20 // the presentation carries the check's problems
)

// Error codes.
const (
	CodeInvalid = "ARTIFACT_INVALID" // the directory breaks the layout or its bounds
	CodeIO      = fault.IOFailed     // it cannot be read or written
)

// Error is the coded error every Assay package returns.
type Error = fault.Error

func errorf(code, format string, a ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, a...)}
}

var commitPattern = regexp.MustCompile(`^[0-9a-f]{40}$`)

// Source is one side as the check has it on disk.
type Source struct {
	// Runs is the runs root, Store the store the runs wrote, Tree the
	// source tree they ran in.
	Runs, Store, Tree string
	// Commit is the commit Tree is checked out at ("" when unknown; the
	// head's is Write's headCommit).
	Commit string
}

// Artifact is an opened artifact directory.
type Artifact struct {
	Dir string
	// Paths are the workload paths, relative to each side's tree.
	Paths []string
	// Archive is the receipt archive relative to the head tree ("" for
	// none).
	Archive string
	// HeadCommit is the commit the head tree was checked out at ("" when
	// unknown): the comment workflow confirms the head tree's files
	// against it, since the artifact's copy of a workload (its gate) is
	// pull-request output too.
	HeadCommit string
	// BaseCommit is the commit the base tree was checked out at ("" when
	// unknown).
	BaseCommit string
	// Presentation is what the check rendered its files with besides the
	// evidence.
	Presentation Presentation

	// evidence holds each side's Evidence once made, so verifying the
	// artifact and re-deriving its diff read one workbench per side.
	evidenceMu sync.Mutex
	evidence   map[string]sideEvidence
}

type sideEvidence struct {
	ev diff.Evidence
	ws *verify.Workloads
}

// Side is one side's directories inside the artifact.
type Side struct{ Runs, Store, Tree string }

// Side returns the directories of side (Base or Head).
func (a *Artifact) Side(side string) Side {
	d := filepath.Join(a.Dir, side)
	return Side{Runs: filepath.Join(d, RunsDir), Store: filepath.Join(d, StoreDir), Tree: filepath.Join(d, TreeDir)}
}

// IsArtifact reports whether dir looks like an artifact (holds the marker).
func IsArtifact(dir string) bool {
	st, err := os.Lstat(filepath.Join(dir, MarkerFile))
	return err == nil && st.Mode().IsRegular()
}

// Write lays base and head out in dir (see the package doc), replacing the
// sides and the marker of an earlier artifact there. paths are the
// workload paths relative to each tree; archive is the receipt archive
// (an absolute path or relative to the head tree; "" for none); pres is
// what the check renders its files with besides the evidence (the files
// themselves are WriteRendered's).
func Write(ctx context.Context, dir string, base, head Source, paths []string, archive, headCommit string, pres Presentation) error {
	if err := checkCommits(headCommit, base.Commit); err != nil {
		return err
	}
	a := &Artifact{Dir: dir, Paths: paths, HeadCommit: headCommit, BaseCommit: base.Commit, Presentation: pres}
	if archive != "" {
		rel, ok := inside(head.Tree, absIn(head.Tree, archive))
		if !ok {
			return errorf(CodeInvalid, "archive %s is outside the head tree %s", archive, head.Tree)
		}
		a.Archive = rel
	}
	for _, side := range []string{Base, Head} {
		if err := os.RemoveAll(filepath.Join(dir, side)); err != nil {
			return &Error{Code: CodeIO, Message: "artifact " + dir, Err: err}
		}
	}
	if err := writeSide(ctx, a.Side(Base), base, paths, "", dir); err != nil {
		return err
	}
	if err := writeSide(ctx, a.Side(Head), head, paths, a.Archive, dir); err != nil {
		return err
	}
	return a.writeMarker(pres)
}

// checkCommits holds each commit given to 40 lowercase hex digits.
func checkCommits(commits ...string) error {
	for _, c := range commits {
		if c != "" && !commitPattern.MatchString(c) {
			return errorf(CodeInvalid, "commit %q is not 40 lowercase hex digits", c)
		}
	}
	return nil
}

// absIn is p as an absolute path, a relative one taken from dir.
func absIn(dir, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dir, p)
}

// writeMarker writes artifact.json, in the canonical form Open holds it
// to.
func (a *Artifact) writeMarker(pres Presentation) error {
	dir := a.Dir
	marker := map[string]any{"layout": Layout, "paths": canon.Strings(a.Paths), "archive": a.Archive, "head_commit": a.HeadCommit, "base_commit": a.BaseCommit, "presentation": pres.value()}
	b, err := canon.Encode(marker)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, MarkerFile), append(b, '\n'), 0o644); err != nil {
		return &Error{Code: CodeIO, Message: "artifact " + dir, Err: err}
	}
	return nil
}

// writeSide copies one side: its run directories (hidden leftovers
// excluded), the store objects verification reads, and its tree files.
func writeSide(ctx context.Context, dst Side, src Source, paths []string, archive, artifactDir string) error {
	for _, d := range []string{dst.Runs, dst.Tree} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return &Error{Code: CodeIO, Message: "artifact " + d, Err: err}
		}
	}
	if _, err := os.Stat(src.Runs); err == nil {
		if err := copyTree(src.Runs, dst.Runs); err != nil {
			return err
		}
	}
	ws, err := copySideTree(dst, src, paths, archive, artifactDir)
	if err != nil {
		return err
	}
	if src.Store == "" {
		return nil
	}
	return copyReadObjects(ctx, dst, src, ws)
}

// copySideTree copies the tree files the side's workloads read, and the
// receipt archive when there is one; it returns the workloads.
func copySideTree(dst Side, src Source, paths []string, archive, artifactDir string) (*verify.Workloads, error) {
	ws, files, err := treeFiles(src.Tree, paths, artifactDir)
	if err != nil {
		return nil, err
	}
	if archive != "" {
		if err := copyTree(filepath.Join(src.Tree, archive), filepath.Join(dst.Tree, archive)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	for _, rel := range files {
		if err := copyFile(filepath.Join(src.Tree, rel), filepath.Join(dst.Tree, rel)); err != nil {
			return nil, err
		}
	}
	return ws, nil
}

// copyReadObjects copies the store objects: whatever verifying this side
// reads, found by verifying it against the source store through a
// recording store.
func copyReadObjects(ctx context.Context, dst Side, src Source, ws *verify.Workloads) error {
	fst, err := store.OpenFileStore(src.Store)
	if err != nil {
		return err
	}
	rec := &recording{Store: fst, read: map[string]bool{}}
	wb := &vm.Workbench{Store: rec}
	if _, err := os.Stat(src.Runs); err == nil {
		if _, err := verify.Verify(ctx, []string{src.Runs}, verify.Options{Evidence: wb, StoreDir: src.Store, AllowEmpty: true, Workloads: ws}); err != nil {
			return err
		}
	}
	for _, k := range slices.Sorted(maps.Keys(rec.read)) {
		if err := copyFile(filepath.Join(src.Store, k), filepath.Join(dst.Store, k)); err != nil {
			return err
		}
	}
	return os.MkdirAll(dst.Store, 0o755)
}

// recording is a store that remembers which immutable objects were read
// ("<namespace>/<hex>.json"). Verification reads cases concurrently
// (bench.Verify), so the set is guarded.
type recording struct {
	store.Store
	mu   sync.Mutex
	read map[string]bool
}

func (r *recording) note(ns store.Namespace, digest string) {
	r.mu.Lock()
	r.read[string(ns)+"/"+strings.TrimPrefix(digest, "sha256:")+".json"] = true
	r.mu.Unlock()
}

func (r *recording) Get(ns store.Namespace, digest string) (any, bool, error) {
	v, ok, err := r.Store.Get(ns, digest)
	if ok && err == nil {
		r.note(ns, digest)
	}
	return v, ok, err
}

func (r *recording) Has(ns store.Namespace, digest string) (bool, error) {
	ok, err := r.Store.Has(ns, digest)
	if ok && err == nil {
		r.note(ns, digest)
	}
	return ok, err
}

// treeFiles lists, relative to tree, every file the side's workloads read:
// each workload file under paths (also one that does not load, so the
// reader sees it fail), and for each that loads its manifests, case files,
// scripted tables and replay directories; plus every *.algal.json in the
// tree (child modules, and the manifests archived receipts are matched
// against). Files outside the tree are left out: the artifact cannot carry
// them, and re-deriving such a workload from it then fails.
func treeFiles(tree string, paths []string, artifactDir string) (*verify.Workloads, []string, error) {
	skip, _ := filepath.Abs(artifactDir)
	var roots []string
	for _, p := range paths {
		roots = append(roots, filepath.Join(tree, p))
	}
	ws, err := verify.LoadWorkloads(roots...)
	if err != nil {
		return nil, nil, err
	}
	t := &treeSet{tree: tree, seen: map[string]bool{}}
	if err := t.addWorkloadFiles(roots); err != nil {
		return nil, nil, err
	}
	for _, w := range ws.All() {
		t.addReadBy(w)
	}
	t.addModules(skip)
	slices.Sort(t.out)
	return ws, t.out, nil
}

// treeSet collects files of a tree, relative to it, each once.
type treeSet struct {
	tree string
	seen map[string]bool
	out  []string
}

// add adds the file p, or every regular file under the directory p, when
// it is inside the tree; "" adds nothing.
func (t *treeSet) add(p string) {
	if p == "" {
		return
	}
	rel, ok := inside(t.tree, p)
	if !ok || t.seen[rel] {
		return
	}
	st, err := os.Lstat(p)
	if err != nil {
		return
	}
	if st.IsDir() {
		t.addDir(p)
		return
	}
	if st.Mode().IsRegular() {
		t.addRegular(p)
	}
}

// addDir adds every regular file under the directory p.
func (t *treeSet) addDir(p string) {
	_ = filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			t.addRegular(q)
		}
		return nil
	})
}

// addRegular adds a regular file p when it is inside the tree.
func (t *treeSet) addRegular(p string) {
	if r, ok := inside(t.tree, p); ok && !t.seen[r] {
		t.seen[r] = true
		t.out = append(t.out, r)
	}
}

// addWorkloadFiles adds every workload file under the roots that exist,
// also one that does not load, so the reader sees it fail.
func (t *treeSet) addWorkloadFiles(roots []string) error {
	var existing []string
	for _, r := range roots {
		if _, err := os.Stat(r); err == nil {
			existing = append(existing, r)
		}
	}
	if len(existing) == 0 {
		return nil
	}
	files, err := workload.Discover(existing...)
	if err != nil {
		return &Error{Code: CodeIO, Message: "workloads", Err: err}
	}
	for _, f := range files {
		t.add(f)
	}
	return nil
}

// addReadBy adds what a workload that loads reads: its file, manifests,
// case files, candidates, and its executors' scripted tables and replay
// directories.
func (t *treeSet) addReadBy(w *workload.Workload) {
	t.add(w.Path)
	for _, f := range w.CaseFiles {
		t.add(f)
	}
	execs := append([]workload.Executor{}, w.Executors...)
	for _, s := range w.Systems {
		t.add(s.Manifest.Path)
		execs = append(execs, s.Executors...)
	}
	for _, c := range w.Candidates {
		t.add(c.Path)
	}
	if g := w.Generator; g != nil {
		t.add(g.Manifest.Path)
		execs = append(execs, g.Executors...)
	}
	for _, e := range execs {
		t.add(executorFile(e.Spec))
	}
}

// executorFile is the file or directory an executor reads: a scripted
// table, a replay directory ("" for none).
func executorFile(spec string) string {
	for _, prefix := range []string{"scripted:", "replay:"} {
		if p, ok := strings.CutPrefix(spec, prefix); ok {
			return p
		}
	}
	return ""
}

// addModules adds every *.algal.json in the tree (child modules, and the
// manifests archived receipts are matched against), outside hidden,
// testdata and node_modules directories and outside artifacts.
func (t *treeSet) addModules(skip string) {
	_ = filepath.WalkDir(t.tree, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			return t.skipDir(p, d, skip)
		}
		if strings.HasSuffix(d.Name(), ".algal.json") {
			t.add(p)
		}
		return nil
	})
}

// skipDir says whether the module walk skips a directory: hidden ones,
// testdata and node_modules, and the artifact being written
// (out/assay-pr-check inside the working tree, skip) and any earlier
// one: they are outputs, not sources.
func (t *treeSet) skipDir(p string, d fs.DirEntry, skip string) error {
	if p != t.tree && holdsNoSources(d.Name()) {
		return filepath.SkipDir
	}
	if abs, err := filepath.Abs(p); err == nil && (abs == skip || IsArtifact(p)) {
		return filepath.SkipDir
	}
	return nil
}

// holdsNoSources reports whether a directory of that name holds no
// sources: a hidden one, testdata, node_modules.
func holdsNoSources(name string) bool {
	return strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules"
}

// inside returns target relative to root when it is inside root.
func inside(root, target string) (string, bool) {
	r, err1 := filepath.Abs(root)
	t, err2 := filepath.Abs(target)
	if err1 != nil || err2 != nil {
		return "", false
	}
	rel, err := filepath.Rel(r, t)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return rel, true
}

// copyTree copies the regular files under src to dst, skipping hidden
// entries (staging directories, temporary files) and symbolic links.
func copyTree(src, dst string) error {
	if _, err := os.Stat(src); err != nil {
		return err
	}
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return &Error{Code: CodeIO, Message: "copy " + p, Err: err}
		}
		if p != src && strings.HasPrefix(d.Name(), ".") {
			return skipEntry(d)
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		return copyFile(p, filepath.Join(dst, rel))
	})
}

// skipEntry passes over a walked entry: a directory's contents too.
func skipEntry(d fs.DirEntry) error {
	if d.IsDir() {
		return filepath.SkipDir
	}
	return nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return &Error{Code: CodeIO, Message: "copy " + src, Err: err}
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return &Error{Code: CodeIO, Message: "copy " + dst, Err: err}
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return &Error{Code: CodeIO, Message: "copy " + dst, Err: err}
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return &Error{Code: CodeIO, Message: "copy " + dst, Err: err}
	}
	if err := out.Close(); err != nil {
		return &Error{Code: CodeIO, Message: "copy " + dst, Err: err}
	}
	return nil
}
