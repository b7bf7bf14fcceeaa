package artifact

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/algal-assay/assay/ci/diff"
	"github.com/algal-assay/assay/ci/verify"
	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/vm"
	"github.com/algal-assay/assay/harness"
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
	files, total := 0, int64(0)
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
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
	if err != nil {
		return nil, err
	}
	data, err := canon.ReadBounded(filepath.Join(dir, MarkerFile), maxMarker)
	if err != nil {
		return nil, &Error{Code: CodeInvalid, Message: "artifact marker " + MarkerFile, Err: err}
	}
	v, err := canon.Parse(data, maxMarker)
	if err != nil {
		return nil, &Error{Code: CodeInvalid, Message: MarkerFile, Err: err}
	}
	m, _ := v.(map[string]any)
	for _, k := range canon.SortedKeys(m) {
		if k != "layout" && k != "paths" && k != "archive" && k != "head_commit" {
			return nil, errorf(CodeInvalid, "%s: unknown member %q", MarkerFile, k)
		}
	}
	if m["layout"] != Layout {
		return nil, errorf(CodeInvalid, "%s: layout %v is not %s", MarkerFile, m["layout"], Layout)
	}
	a := &Artifact{Dir: dir}
	ps, _ := m["paths"].([]any)
	for _, p := range ps {
		s, ok := p.(string)
		if !ok || !relativeInside(s) {
			return nil, errorf(CodeInvalid, "%s: paths: %v is not a relative path inside the tree", MarkerFile, p)
		}
		a.Paths = append(a.Paths, s)
	}
	if len(a.Paths) == 0 {
		return nil, errorf(CodeInvalid, "%s: paths names no workload path", MarkerFile)
	}
	if s, _ := m["archive"].(string); s != "" {
		if !relativeInside(s) {
			return nil, errorf(CodeInvalid, "%s: archive %q is not a relative path inside the tree", MarkerFile, s)
		}
		a.Archive = s
	}
	if c, present := m["head_commit"]; present {
		s, _ := c.(string)
		if s != "" && !commitPattern.MatchString(s) {
			return nil, errorf(CodeInvalid, "%s: head_commit %v is not 40 lowercase hex digits", MarkerFile, c)
		}
		a.HeadCommit = s
	}
	for _, side := range []string{Base, Head} {
		sd := a.Side(side)
		for _, d := range []string{sd.Runs, sd.Store, sd.Tree} {
			if st, err := os.Stat(d); err != nil || !st.IsDir() {
				return nil, errorf(CodeInvalid, "artifact %s has no directory %s", dir, relTo(dir, d))
			}
		}
	}
	return a, nil
}

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
// store and the workloads in its own tree.
func (a *Artifact) Evidence(side string) (diff.Evidence, *verify.Workloads, error) {
	sd := a.Side(side)
	wb, err := vm.NewWorkbench(sd.Store)
	if err != nil {
		return diff.Evidence{}, nil, err
	}
	var roots []string
	for _, p := range a.Paths {
		roots = append(roots, filepath.Join(sd.Tree, filepath.FromSlash(p)))
	}
	ws, err := verify.LoadWorkloads(roots...)
	if err != nil {
		return diff.Evidence{}, nil, err
	}
	return diff.Evidence{Store: wb, StoreDir: sd.Store, Workloads: ws}, ws, nil
}

// Checked is the verification of an artifact.
type Checked struct {
	Base, Head *verify.Report
	// Problems are head-side failures no file states: a workload that did
	// not load, or one with no run directory (it never ran, or its run
	// directory was taken out of the artifact).
	Problems []string
}

// OK reports whether every run directory of both sides verifies and no
// head workload is missing its run.
func (c *Checked) OK() bool {
	return c.Base.Failed() == 0 && c.Head.Failed() == 0 && len(c.Problems) == 0
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
	return append(out, c.Problems...)
}

// Verify verifies both sides, each against its own store and workloads
// (ci/verify), and checks that every head workload that loads has its run
// directory.
func (a *Artifact) Verify(ctx context.Context) (*Checked, error) {
	c := &Checked{}
	for _, side := range []string{Base, Head} {
		ev, ws, err := a.Evidence(side)
		if err != nil {
			return nil, err
		}
		sd := a.Side(side)
		rep, err := verify.Verify(ctx, []string{sd.Runs}, verify.Options{Evidence: ev.Store, StoreDir: sd.Store, AllowEmpty: true, Workloads: ws})
		if err != nil {
			return nil, err
		}
		if side == Base {
			c.Base = rep
			continue
		}
		c.Head = rep
		for _, p := range ws.Problems {
			c.Problems = append(c.Problems, "head workload does not load: "+strings.ReplaceAll(p, sd.Tree+string(filepath.Separator), ""))
		}
		ran := map[string]bool{}
		for _, r := range rep.Results {
			if r.Run != nil && r.Run.Record != nil {
				ran[r.Run.Record.Pipeline] = true
			}
		}
		for _, w := range ws.All() {
			if !ran[w.Name] {
				c.Problems = append(c.Problems, fmt.Sprintf("head workload %s (%s) has no run directory under %s: it never ran, or its run was left out", w.Name, relTo(sd.Tree, w.Path), relTo(a.Dir, filepath.Join(sd.Runs, w.Name))))
			}
		}
	}
	slices.Sort(c.Problems)
	return c, nil
}

// Diff compares the two sides from the evidence alone: each run read
// through ci/diff.LoadSet (verdicts re-derived), archived receipts
// replayed against the head tree's manifests, the head's problems added.
// It does not verify first; call Verify and look at OK.
func (a *Artifact) Diff(ctx context.Context, checked *Checked, opts diff.Options) (*diff.Diff, error) {
	baseEv, _, err := a.Evidence(Base)
	if err != nil {
		return nil, err
	}
	headEv, _, err := a.Evidence(Head)
	if err != nil {
		return nil, err
	}
	b, h := a.Side(Base), a.Side(Head)
	baseSet, err := diff.LoadSet(ctx, b.Runs, baseEv)
	if err != nil {
		return nil, err
	}
	headSet, err := diff.LoadSet(ctx, h.Runs, headEv)
	if err != nil {
		return nil, err
	}
	// Gate messages name workload files as the harness displays them:
	// relative to the git work tree when the artifact sits inside one.
	opts.Trim = append(opts.Trim, b.Tree, h.Tree, b.Runs, h.Runs, a.Dir, harness.DisplayPath(b.Tree), harness.DisplayPath(h.Tree))
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

// KindWorkload labels a head workload problem in Report.
const KindWorkload = "workload"

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
