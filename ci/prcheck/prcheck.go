// Package prcheck is the whole Assay pull-request check in one call: run
// the workloads at the head (the working tree) and at the base (a detached
// git worktree of the base ref), verify them (the harness's verify phase,
// then an independent offline pass of ci/verify over the head run
// directories), diff the two run sets (ci/diff), compose the sticky comment (ci/github),
// write the artifact directory the comment workflow posts from, append the
// report to the job summary, and say whether the check fails: it fails when
// a head run does not verify, a head gate fails, a head run fails, or a
// head workload cannot be loaded. The base's results never fail the check;
// they are only the reference.
//
// Posting is not done here: the check runs pull-request code with a
// read-only token, and the separate assay-comment workflow posts the
// artifact (see ci/github and docs/ci.md).
//
// # Artifact directory
//
//	comment.md   the comment the check composed (marker first, at most
//	             65,536 characters); for people: the comment workflow
//	             re-derives its own from the evidence and never posts this
//	pr.json      {"number": N, "head_sha": "..."} when the event names a pull request
//	diff.json    the structured diff (ci/diff)
//	report.md    the full Markdown report (also appended to the job summary)
//	pr.html      the drawn report: base and head on one Pareto plot (ci/diff.HTML)
//	artifact.json, base/, head/
//	             the evidence, self-contained (ci/artifact): each side's
//	             run directories, the store objects they reference and the
//	             workload files they were made from; artifact.json also
//	             carries the presentation the four files were rendered with
//
// The four rendered files come from one call, ci/artifact.Render, of the
// diff and the presentation; `assay ci verify` of the artifact renders
// them again from the evidence and requires the same bytes.
package prcheck

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/algal-assay/assay/ci/artifact"
	"github.com/algal-assay/assay/ci/diff"
	ghci "github.com/algal-assay/assay/ci/github"
	"github.com/algal-assay/assay/ci/verify"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/vm"
	"github.com/algal-assay/assay/harness"
	"github.com/algal-assay/assay/harness/archive"
	"github.com/algal-assay/assay/harness/workload"
)

// Error codes carried by [Error].
const (
	CodeGit   = "GIT_FAILED"    // a git command failed (unknown ref, not a repository)
	CodeInput = "INPUT_INVALID" // options that cannot work (no base ref, bad paths)
	// CodeCancelled: the check was interrupted (signal, cancelled job).
	CodeCancelled = "CANCELLED"
)

// Artifact file names besides ci/github's comment.md and pr.json.
const (
	ArtifactDiff   = "diff.json"
	ArtifactReport = "report.md"
	// ArtifactName is the name the workflows upload the directory under.
	ArtifactName = "assay-pr-check"
)

// DefaultPaths are the workload paths when none are given.
var DefaultPaths = []string{"suites"}

// Options configure a check.
type Options struct {
	// Made, when set, diffs runs made beforehand instead of running.
	Made *MadeRuns
	// Dir is the repository's working tree, the head side; default ".".
	Dir string
	// BaseRef is the git ref of the base; default origin/$GITHUB_BASE_REF.
	BaseRef string
	// Paths are the workload files and directories, relative to Dir (and
	// to the base worktree); default suites.
	Paths []string
	// Archive is the receipt archive relative to Dir; "" means receipts/
	// when it exists; "-" disables the archive comparison.
	Archive string
	// Redact, when set, is applied to what the check shows (the job
	// summary, and the Result's Report, Comment and HTML a caller prints
	// or posts): a case's answer in the evidence may quote a secret, and
	// those are read in public. The artifact's files are not: they are
	// what its evidence renders to, byte for byte (`ci verify` re-derives
	// them), and the evidence beside them is uploaded as it is.
	Redact func(string) string
	// Artifact is the directory to write (see the package doc); "" writes
	// none.
	Artifact string
	// EventPath is the Actions event payload (GITHUB_EVENT_PATH), read for
	// pr.json.
	EventPath string
	// StepSummary is the job summary file (GITHUB_STEP_SUMMARY); "" skips.
	StepSummary string
	// Pointer says where the full report is; "" derives it from the
	// Actions environment.
	Pointer     string
	Concurrency int
	// Log receives one progress line per workload; nil discards.
	Log io.Writer
	// Record is the head's record mode for live backends (default none).
	Record archive.Mode
	// AllowEmpty accepts a head with no workloads under Paths; otherwise
	// that fails the check, since a check of nothing proves nothing.
	AllowEmpty bool
}

// Result is a finished check.
type Result struct {
	Diff     *diff.Diff
	Report   string // full Markdown
	HTML     []byte // pr.html
	Comment  string // the comment body, marker first
	Failed   bool
	PR       int
	HeadSHA  string
	BaseSHA  string
	Artifact string
}

// Run performs the check. An error means the check could not be carried
// out (no base ref, git failure, unwritable artifact); a failing workload
// is Result.Failed, not an error.
func Run(ctx context.Context, opts Options) (*Result, error) {
	sides, err := RunSides(ctx, SideOptions{
		Made: opts.Made,
		Dir:  opts.Dir, BaseRef: opts.BaseRef, Paths: opts.Paths, Archive: opts.Archive,
		Concurrency: opts.Concurrency, Log: opts.Log, Record: opts.Record,
		AssayDirs: []string{opts.Artifact},
	})
	if err != nil {
		return nil, err
	}
	defer sides.Close()
	d := sides.Diff
	artifact.RequireWorkloads(d, sides.Paths, opts.AllowEmpty)
	res := &Result{Diff: d, Failed: !d.Verdict.Passed, BaseSHA: sides.BaseSHA, Artifact: opts.Artifact}

	if opts.EventPath != "" {
		if res.PR, res.HeadSHA, err = readPR(opts.EventPath); err != nil {
			return nil, err
		}
	}
	ro := renderOptions(opts, res.HeadSHA)
	// What the files are rendered with besides the evidence travels in the
	// artifact, so `assay ci verify` renders the same bytes from it.
	pres := artifact.Presentation{
		BaseLabel: d.Base, HeadLabel: d.Head,
		Pointer: ro.Pointer, Command: ro.Command, BlobBase: ro.BlobBase, Drawn: ro.Drawn,
		AllowEmpty: opts.AllowEmpty, Problems: sides.Problems, Notes: sides.Notes,
	}
	marker, _ := ghci.Marker(ghci.DefaultKey)
	files, err := artifact.Render(d, pres, marker, "")
	if err != nil {
		return nil, err
	}
	res.show(files, opts.Redact)
	if opts.Artifact != "" {
		if err := writeEvidence(ctx, opts.Artifact, sides, pres, res, files); err != nil {
			return nil, err
		}
	}
	if opts.StepSummary != "" {
		if err := ghci.AppendStepSummary(opts.StepSummary, res.Report); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// show sets the report, the drawn report and the comment as rendered,
// redacted when redact is set.
func (res *Result) show(files *artifact.Rendered, redact func(string) string) {
	res.Report, res.HTML, res.Comment = string(files.Report), files.HTML, string(files.Comment)
	if redact != nil {
		res.Report, res.Comment, res.HTML = redact(res.Report), redact(res.Comment), []byte(redact(string(res.HTML)))
	}
}

// writeEvidence writes the artifact: the evidence first, while the base
// worktree still exists; then what the check rendered from it.
func writeEvidence(ctx context.Context, dir string, sides *Sides, pres artifact.Presentation, res *Result, files *artifact.Rendered) error {
	if err := os.RemoveAll(filepath.Join(dir, "runs")); err != nil {
		return &fault.Error{Code: fault.IOFailed, Message: "artifact " + dir, Err: err}
	}
	err := artifact.Write(ctx, dir,
		artifact.Source{Runs: sides.BaseOut, Store: sides.BaseStore, Tree: sides.BaseTree, Commit: sides.BaseSHA},
		artifact.Source{Runs: sides.HeadOut, Store: sides.HeadStore, Tree: sides.HeadTree},
		sides.Paths, sides.Archive, sides.HeadCommit, pres)
	if err != nil {
		return err
	}
	return writeArtifact(dir, res, files)
}

// DefaultPointer says where the rest of the report is, naming the run when
// the Actions environment identifies it.
func DefaultPointer() string {
	where := "the check run"
	if u := checkRunURL(); u != "" {
		where = "[the check run](" + u + ")"
	}
	return "Full report: the job summary of " + where + "; data (diff.json, head run directories): its `" + ArtifactName + "` artifact."
}

// checkRunURL is the Actions run's page, when the environment names it
// ("" otherwise).
func checkRunURL() string {
	server, repo, id := os.Getenv("GITHUB_SERVER_URL"), os.Getenv("GITHUB_REPOSITORY"), os.Getenv("GITHUB_RUN_ID")
	if server == "" || repo == "" || id == "" {
		return ""
	}
	return server + "/" + repo + "/actions/runs/" + id
}

var shaPattern = regexp.MustCompile(`^(?:[0-9a-f]{40}|[0-9a-f]{64})$`)

// readPR takes the pull request's number and head commit from the event.
func readPR(path string) (int, string, error) {
	ev, err := ghci.ReadEvent(path)
	if err != nil {
		return 0, "", err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, "", &fault.Error{Code: fault.IOFailed, Message: "event payload " + path, Err: err}
	}
	var raw struct {
		PullRequest *struct {
			Head struct {
				SHA string `json:"sha"`
			} `json:"head"`
		} `json:"pull_request"`
	}
	sha := ""
	if json.Unmarshal(data, &raw) == nil && raw.PullRequest != nil && shaPattern.MatchString(raw.PullRequest.Head.SHA) {
		sha = raw.PullRequest.Head.SHA
	}
	return ev.PR, sha, nil
}

func writeArtifact(dir string, res *Result, files *artifact.Rendered) error {
	if err := artifact.WriteRendered(dir, files); err != nil {
		return err
	}
	if res.PR == 0 {
		// A stale pr.json from an earlier run must not name another PR.
		_ = os.Remove(filepath.Join(dir, ghci.ArtifactPRJSON))
		return nil
	}
	pr := map[string]any{"number": res.PR}
	if res.HeadSHA != "" {
		pr["head_sha"] = res.HeadSHA
	}
	b, _ := json.Marshal(pr)
	if err := os.WriteFile(filepath.Join(dir, ghci.ArtifactPRJSON), append(b, '\n'), 0o644); err != nil {
		return &fault.Error{Code: fault.IOFailed, Message: "artifact " + dir, Err: err}
	}
	return nil
}

// MadeRuns names evidence made beforehand (e.g. by `assay ci merge` of
// sharded runs): each side's runs root and the store its runs wrote. The
// check then runs nothing itself; it still checks the base out for its
// workloads, re-verifies the head and diffs, exactly as after its own runs.
type MadeRuns struct {
	BaseRuns, BaseStore, HeadRuns, HeadStore string
}

// SideOptions configure RunSides.
type SideOptions struct {
	// Made, when set, is used instead of running either side.
	Made         *MadeRuns
	Dir, BaseRef string
	Paths        []string
	Archive      string
	// HeadOut is where the head run directories go; "" uses a temporary
	// directory removed by Close.
	HeadOut     string
	Concurrency int
	Log         io.Writer
	// Record is the head's record mode for live backends (default none:
	// the tree's archive answers); the base always replays.
	Record archive.Mode
	// AssayDirs are directories of the check's own output that may be in
	// the head's checkout (the artifact, an earlier check's copy of it):
	// like the runs and the stores, their untracked files do not make the
	// head's runs foundry_modified (harness.Options).
	AssayDirs []string
}

// Live says how a tree's live backends are answered: its archive
// (Archive relative to the tree; "" or "-" mean receipts/) in mode Record.
type Live struct {
	Record  archive.Mode
	Archive string
}

func (l Live) dir(tree string) string {
	a := l.Archive
	if a == "" || a == "-" {
		a = archive.DefaultDir
	}
	if filepath.IsAbs(a) {
		return a
	}
	return filepath.Join(tree, a)
}

// Sides are the two runs and their diff. Close removes the temporary
// directories and the base worktree.
type Sides struct {
	Diff    *diff.Diff
	BaseSHA string
	HeadOut string
	BaseOut string
	// The stores the runs wrote and the trees they ran in (the base's is a
	// temporary worktree, removed by Close), and the workload paths.
	BaseStore, HeadStore string
	BaseTree, HeadTree   string
	Paths                []string
	// HeadCommit is the commit checked out in the head tree ("" outside
	// git).
	HeadCommit string
	// Archive is the receipt archive replayed ("" for none).
	Archive string
	// Problems and Notes are what RunSides added to Diff besides its
	// comparison of the run directories: head workloads that did not load,
	// runs that could not start or replay, failed re-verification; notes
	// on the base and on the re-verification.
	Problems, Notes []string
	close           []func() error
}

// Close releases the base worktree and temporary directories.
func (s *Sides) Close() error {
	var errs []error
	for i := len(s.close) - 1; i >= 0; i-- {
		errs = append(errs, s.close[i]())
	}
	s.close = nil
	return errors.Join(errs...)
}

// RunSides runs the workloads at the head (Dir) and at BaseRef (a git
// worktree), and diffs them.
func RunSides(ctx context.Context, o SideOptions) (_ *Sides, err error) {
	head, err := o.resolve()
	if err != nil {
		return nil, err
	}
	log := o.Log
	if log == nil {
		log = io.Discard
	}

	s := &Sides{}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	tmp, err := os.MkdirTemp("", "assay-pr-*")
	if err != nil {
		return nil, &fault.Error{Code: fault.IOFailed, Message: "temporary directory", Err: err}
	}
	s.close = append(s.close, func() error { return os.RemoveAll(tmp) })
	base, err := s.checkoutBase(ctx, head, o.BaseRef, tmp)
	if err != nil {
		return nil, err
	}
	runs, err := s.makeRuns(ctx, o, base, head, tmp, log)
	if err != nil {
		return nil, err
	}
	if err := s.compare(ctx, o, base, head, tmp, runs); err != nil {
		return nil, err
	}
	return s, nil
}

// resolve fills in the defaults (the current directory, DefaultPaths,
// the pull request's base) and checks the options, returning the head
// tree's absolute path.
func (o *SideOptions) resolve() (string, error) {
	if o.Dir == "" {
		o.Dir = "."
	}
	if len(o.Paths) == 0 {
		o.Paths = DefaultPaths
	}
	o.BaseRef = baseRef(o.BaseRef)
	if o.BaseRef == "" {
		return "", &fault.Error{Code: CodeInput, Message: "no base ref: pass --base-ref REF, or run on a pull_request event (GITHUB_BASE_REF)"}
	}
	if err := checkPaths(o.Paths); err != nil {
		return "", err
	}
	head, err := filepath.Abs(o.Dir)
	if err != nil {
		return "", &fault.Error{Code: CodeInput, Message: "repository " + o.Dir, Err: err}
	}
	return head, nil
}

// checkPaths holds workload paths inside the repository.
func checkPaths(paths []string) error {
	for _, p := range paths {
		if filepath.IsAbs(p) || strings.HasPrefix(filepath.Clean(p), "..") {
			return &fault.Error{Code: CodeInput, Message: fmt.Sprintf("workload path %q must be relative to the repository and inside it", p)}
		}
	}
	return nil
}

// baseRef is ref, or else the pull request's base branch when the
// Actions event names one ("" when neither does).
func baseRef(ref string) string {
	if ref != "" {
		return ref
	}
	if b := os.Getenv("GITHUB_BASE_REF"); b != "" {
		return "origin/" + b
	}
	return ""
}

// baseCheckout is the base side checked out in a temporary worktree.
type baseCheckout struct {
	sha string
	// headLabel names the head side for the log and the comment.
	headLabel string
	// tree is the worktree, root the directory in it the head's Dir is.
	tree, root string
}

// checkoutBase resolves the base ref and the head commit and checks the
// base out in a worktree under tmp, which Close removes.
func (s *Sides) checkoutBase(ctx context.Context, head, baseRef, tmp string) (*baseCheckout, error) {
	baseSHA, err := git(ctx, head, "rev-parse", "--verify", "--end-of-options", baseRef+"^{commit}")
	if err != nil {
		return nil, err
	}
	s.BaseSHA = baseSHA
	// The commit the head tree is, for the comment workflow to confirm the
	// artifact's copies of its files against.
	if sha, err := git(ctx, head, "rev-parse", "--verify", "HEAD^{commit}"); err == nil && len(sha) == 40 {
		s.HeadCommit = sha
	}
	b := &baseCheckout{sha: baseSHA, headLabel: "working tree", tree: filepath.Join(tmp, "base")}
	if sha, err := git(ctx, head, "rev-parse", "--short", "HEAD"); err == nil {
		b.headLabel = "HEAD " + sha
	}
	if _, err := git(ctx, head, "worktree", "add", "--detach", "--quiet", b.tree, baseSHA); err != nil {
		return nil, err
	}
	s.close = append(s.close, func() error {
		_, err := git(context.Background(), head, "worktree", "remove", "--force", b.tree)
		_, _ = git(context.Background(), head, "worktree", "prune")
		return err
	})
	// Dir may be a subdirectory of the repository: the base side is the
	// same subdirectory of the worktree.
	prefix, err := git(ctx, head, "rev-parse", "--show-prefix")
	if err != nil {
		return nil, err
	}
	b.root = filepath.Join(b.tree, filepath.FromSlash(prefix))
	return b, nil
}

// sideRuns are the stores each side's runs wrote, and the problems
// running them met.
type sideRuns struct {
	baseStore, headStore       string
	baseProblems, headProblems []string
}

// makeRuns runs both sides (the base first), or takes the runs made
// beforehand (Made).
func (s *Sides) makeRuns(ctx context.Context, o SideOptions, base *baseCheckout, head, tmp string, log io.Writer) (*sideRuns, error) {
	if o.Made != nil {
		return s.takeMade(o, base, log)
	}
	r := &sideRuns{baseStore: filepath.Join(tmp, "base-store"), headStore: filepath.Join(tmp, "head-store")}
	s.HeadOut = o.HeadOut
	if s.HeadOut == "" {
		s.HeadOut = filepath.Join(tmp, "head-runs")
	} else if err := os.RemoveAll(s.HeadOut); err != nil {
		// Stale run directories from an earlier check would be diffed.
		return nil, &fault.Error{Code: fault.IOFailed, Message: "clear " + s.HeadOut, Err: err}
	}
	s.BaseOut = filepath.Join(tmp, "base-runs")

	var err error
	fmt.Fprintf(log, "assay ci: base %s (%s)\n", o.BaseRef, shortSHA(base.sha))
	if r.baseProblems, err = RunTreeLive(ctx, base.root, o.Paths, s.BaseOut, r.baseStore, o.Concurrency, prefixed(log, "base: "), Live{Record: archive.None, Archive: o.Archive}); err != nil {
		return nil, err
	}
	if err := cancelled(ctx); err != nil {
		return nil, err
	}
	fmt.Fprintf(log, "assay ci: head %s\n", base.headLabel)
	if r.headProblems, err = RunTreeLive(ctx, head, o.Paths, s.HeadOut, r.headStore, o.Concurrency, prefixed(log, "head: "), Live{Record: o.Record, Archive: o.Archive}, o.AssayDirs...); err != nil {
		return nil, err
	}
	return r, cancelled(ctx)
}

// takeMade takes the runs made beforehand (Made) as both sides'.
func (s *Sides) takeMade(o SideOptions, base *baseCheckout, log io.Writer) (*sideRuns, error) {
	made, err := o.Made.absolute()
	if err != nil {
		return nil, err
	}
	s.BaseOut, s.HeadOut = made.BaseRuns, made.HeadRuns
	fmt.Fprintf(log, "assay ci: base %s (%s), head %s: runs made beforehand\n", o.BaseRef, shortSHA(base.sha), base.headLabel)
	return &sideRuns{baseStore: made.BaseStore, headStore: made.HeadStore}, nil
}

// compare re-verifies the head's runs, loads both sides and diffs them,
// with the problems and notes the runs left.
func (s *Sides) compare(ctx context.Context, o SideOptions, base *baseCheckout, head, tmp string, runs *sideRuns) error {
	baseEv, err := sideEvidence(base.root, o.Paths, runs.baseStore)
	if err != nil {
		return err
	}
	headEv, err := sideEvidence(head, o.Paths, runs.headStore)
	if err != nil {
		return err
	}
	verified, failures, err := VerifyRuns(ctx, s.HeadOut, runs.headStore, headEv.Workloads)
	if err != nil {
		return err
	}
	runs.headProblems = append(runs.headProblems, failures...)
	s.BaseStore, s.HeadStore, s.BaseTree, s.HeadTree = runs.baseStore, runs.headStore, base.root, head
	s.Paths = o.Paths

	baseSet, err := diff.LoadSet(ctx, s.BaseOut, baseEv)
	if err != nil {
		return err
	}
	headSet, err := diff.LoadSet(ctx, s.HeadOut, headEv)
	if err != nil {
		return err
	}
	dopts := diff.Options{BaseLabel: o.BaseRef + " " + shortSHA(base.sha), HeadLabel: headLabel(base.headLabel, headSet), Trim: []string{base.root, base.tree, head, tmp, s.HeadOut}}
	if s.Archive = archivePath(o.Archive, head); s.Archive != "" {
		dopts.Replay = &diff.ReplayInput{Archive: s.Archive, BaseTree: base.root, HeadTree: head}
	}
	d, err := diff.Compute(baseSet, headSet, dopts)
	if err != nil {
		return err
	}
	s.note(base.root, head, runs, verified, len(failures))
	d.Problems = append(d.Problems, s.Problems...)
	d.Notes = append(d.Notes, s.Notes...)
	d.Settle()
	s.Diff = d
	return nil
}

// headLabel is the head side's label, saying so when a head run was made
// on uncommitted changes: it is not what its commit holds (the run
// records carry the flag).
func headLabel(label string, headSet *diff.Set) string {
	for _, r := range headSet.Runs {
		if r.Modified {
			return label + " with uncommitted changes"
		}
	}
	return label
}

// archivePath is the receipt archive replayed: "-" for none, "" for the
// head's default, else relative to the head.
func archivePath(a, head string) string {
	switch {
	case a == "-":
		return ""
	case a == "":
		return diff.DefaultArchive(head)
	case !filepath.IsAbs(a):
		return filepath.Join(head, a)
	}
	return a
}

// note sets Problems (the head's) and Notes (the base's problems and the
// re-verification), with the trees' paths trimmed.
func (s *Sides) note(baseRoot, head string, runs *sideRuns, verified, failed int) {
	trimmer := strings.NewReplacer(baseRoot+string(filepath.Separator), "", head+string(filepath.Separator), "")
	s.Problems, s.Notes = []string{}, []string{}
	for _, p := range runs.headProblems {
		s.Problems = append(s.Problems, trimmer.Replace(p))
	}
	for _, p := range runs.baseProblems {
		s.Notes = append(s.Notes, "at base: "+trimmer.Replace(p))
	}
	if verified > 0 {
		s.Notes = append(s.Notes, fmt.Sprintf("head evidence re-verified offline (assay ci verify): %d items, %d failed", verified, failed))
	}
}

// absolute resolves every directory, refusing one that is missing: a
// check over absent evidence would diff nothing and pass.
func (m *MadeRuns) absolute() (MadeRuns, error) {
	out := *m
	for _, d := range []*string{&out.BaseRuns, &out.BaseStore, &out.HeadRuns, &out.HeadStore} {
		if *d == "" {
			return out, &fault.Error{Code: CodeInput, Message: "runs made beforehand need all four directories: base runs and store, head runs and store"}
		}
		abs, err := filepath.Abs(*d)
		if err != nil {
			return out, &fault.Error{Code: CodeInput, Message: "directory " + *d, Err: err}
		}
		if st, err := os.Stat(abs); err != nil || !st.IsDir() {
			return out, &fault.Error{Code: CodeInput, Message: fmt.Sprintf("%s is not a directory of runs or a store", *d)}
		}
		*d = abs
	}
	return out, nil
}

// cancelled turns a cancelled context (an interrupt, a cancelled job) into
// the error that makes RunSides clean up and stop, between phases that do
// not all watch the context themselves.
func cancelled(ctx context.Context) error {
	if ctx.Err() != nil {
		return &fault.Error{Code: CodeCancelled, Message: "cancelled", Err: context.Cause(ctx)}
	}
	return nil
}

func shortSHA(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

// RunTree runs every workload found under paths (relative to tree; paths
// missing from the tree are skipped) with receipts in storeDir and run
// directories under out. Workloads that do not load are returned as
// problems; failed runs leave their run directories, which the diff reads.
//
// Live backends are answered as live says; a could-not-replay run is a
// problem naming the requests and the command that records them.
func RunTree(ctx context.Context, tree string, paths []string, out, storeDir string, concurrency int, log io.Writer) ([]string, error) {
	return RunTreeLive(ctx, tree, paths, out, storeDir, concurrency, log, Live{})
}

// RunTreeLive is RunTree with the tree's live backends answered as live
// says. assayDirs are further directories of Assay's own output besides
// out and storeDir (harness.Options's AssayDirs).
func RunTreeLive(ctx context.Context, tree string, paths []string, out, storeDir string, concurrency int, log io.Writer, live Live, assayDirs ...string) ([]string, error) {
	roots := existing(tree, paths)
	problems := []string{}
	if len(roots) == 0 {
		return problems, nil
	}
	files, err := workload.Discover(roots...)
	if err != nil {
		return append(problems, err.Error()), nil
	}
	wb, err := vm.NewWorkbench(storeDir)
	if err != nil {
		return nil, err
	}
	results, err := harness.RunAll(ctx, files, harness.BatchOptions{
		Options: harness.Options{Runner: wb, Store: wb, Out: out, AssayDirs: append([]string{storeDir}, assayDirs...), Concurrency: concurrency, Record: live.Record, Archive: live.dir(tree)},
		OnDone:  func(r *harness.Result) { logResult(log, r) },
	})
	if err != nil || ctx.Err() != nil {
		return nil, &fault.Error{Code: CodeCancelled, Message: "cancelled", Err: context.Cause(ctx)}
	}
	for _, r := range results {
		if p := runProblem(r, tree, live.dir(tree)); p != "" {
			problems = append(problems, p)
		}
	}
	return problems, nil
}

// existing are the paths (relative to tree) the tree holds, joined to it.
func existing(tree string, paths []string) []string {
	var roots []string
	for _, p := range paths {
		full := filepath.Join(tree, p)
		if _, err := os.Stat(full); err == nil {
			roots = append(roots, full)
		}
	}
	return roots
}

// logResult logs one workload's outcome as it finishes.
func logResult(log io.Writer, r *harness.Result) {
	switch {
	case r.Workload == nil:
		fmt.Fprintf(log, "FAIL %s: %v\n", r.Path, r.Err)
	case r.Passed():
		fmt.Fprintf(log, "PASS %s\n", r.Workload.Name)
	default:
		fmt.Fprintf(log, "FAIL %s\n", r.Workload.Name)
	}
}

// runProblem is the problem a workload's result is ("" for none):
// workloads that did not load or whose run could not start are problems;
// failed runs leave run directories the diff reads. A could-not-replay
// run names the requests and the one command that records them (with the
// archive named from the tree); the comment carries it.
func runProblem(r *harness.Result, tree, archiveDir string) string {
	switch {
	case r.Workload == nil:
		return r.Err.Error()
	case r.Outcome == nil:
		return fmt.Sprintf("%s: %v", r.Workload.Name, r.Err)
	case r.Outcome.Replay != nil:
		msg := r.Outcome.Replay.Error()
		if rel, rerr := filepath.Rel(tree, archiveDir); rerr == nil {
			msg = strings.ReplaceAll(msg, archiveDir, rel)
		}
		return fmt.Sprintf("%s: %s", r.Workload.Name, msg)
	}
	return ""
}

// sideEvidence is what one side's runs are re-derived against: its store
// and the workloads under paths in its tree.
func sideEvidence(tree string, paths []string, storeDir string) (diff.Evidence, error) {
	wb, err := vm.NewWorkbench(storeDir)
	if err != nil {
		return diff.Evidence{}, err
	}
	var roots []string
	for _, p := range paths {
		roots = append(roots, filepath.Join(tree, p))
	}
	ws, err := verify.LoadWorkloads(roots...)
	if err != nil {
		return diff.Evidence{}, err
	}
	return diff.Evidence{Store: wb, StoreDir: storeDir, Workloads: ws}, nil
}

// VerifyRuns re-verifies, offline and independently of the harness's own
// verify phase, every piece of evidence under the runs root against the
// store the runs wrote and the workloads they were made from (ci/verify,
// the engine of `assay ci verify`). It returns how many items were checked
// and one line per failure.
func VerifyRuns(ctx context.Context, runs, storeDir string, workloads *verify.Workloads) (int, []string, error) {
	if _, err := os.Stat(runs); err != nil {
		return 0, nil, nil // nothing ran
	}
	wb, err := vm.NewWorkbench(storeDir)
	if err != nil {
		return 0, nil, err
	}
	rep, err := verify.Verify(ctx, []string{runs}, verify.Options{Evidence: wb, StoreDir: storeDir, AllowEmpty: true, Workloads: workloads})
	if err != nil {
		return 0, nil, err
	}
	var failures []string
	for _, r := range rep.Results {
		if !r.OK {
			failures = append(failures, failureLine(runs, r))
		}
	}
	return len(rep.Results), failures, nil
}

// failureLine names a failed item from the runs root and says why it
// fails.
func failureLine(runs string, r verify.Result) string {
	rel, err := filepath.Rel(runs, r.Path)
	if err != nil {
		rel = r.Path
	}
	return fmt.Sprintf("verification of %s (%s) failed: %s", filepath.ToSlash(rel), r.Kind, r.Detail())
}

func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return "", &fault.Error{Code: CodeGit, Message: "git " + strings.Join(args, " ") + ": " + msg}
	}
	return strings.TrimSpace(stdout.String()), nil
}

type prefixWriter struct {
	w      io.Writer
	prefix string
}

func (p prefixWriter) Write(b []byte) (int, error) {
	lines := strings.SplitAfter(string(b), "\n")
	for _, l := range lines {
		if l == "" {
			continue
		}
		if _, err := io.WriteString(p.w, p.prefix+l); err != nil {
			return 0, err
		}
	}
	return len(b), nil
}

func prefixed(w io.Writer, prefix string) io.Writer { return prefixWriter{w, prefix} }
