package artifact

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/algal-assay/assay/ci/diff"
	ghci "github.com/algal-assay/assay/ci/github"
	"github.com/algal-assay/assay/engine/fault"
)

// The files the check renders at the artifact's root, from its diff and
// its Presentation. `assay ci verify` renders them again from the
// artifact's evidence and holds the uploaded copies to those bytes; the
// comment workflow never reads them.
const (
	DiffFile    = "diff.json"
	ReportFile  = "report.md"
	HTMLFile    = diff.ArtifactHTML
	CommentFile = ghci.ArtifactBody
)

// VerifiedName is the artifact the comment workflow uploads its own
// rendering under (`assay ci comment --out`): the report reviewers can
// trust, where the check's upload is pull-request output.
const VerifiedName = "assay-pr-verified"

// RenderedFiles are the rendered files in the order they are checked.
var RenderedFiles = []string{DiffFile, ReportFile, HTMLFile, CommentFile}

// Presentation is what the check rendered its files with besides the
// evidence: where it says the rest is, the command that reproduces it, the
// labels of its two sides, and what it found while running that no run
// directory states. It travels in artifact.json ("presentation"), so the
// files re-render byte for byte from the artifact alone. None of it is a
// result: every figure and verdict of the files comes from the evidence.
type Presentation struct {
	// BaseLabel and HeadLabel name the sides (diff.Options).
	BaseLabel, HeadLabel string
	// Pointer, Command, BlobBase and Drawn end the comment and the
	// report (diff.RenderOptions).
	Pointer, Command, BlobBase, Drawn string
	// AllowEmpty is the check's --allow-empty: without it, a head with no
	// workloads is a problem of the rendered diff (RequireWorkloads).
	AllowEmpty bool
	// Problems are the check's head-side findings that have no run
	// directory (a workload that did not load, a run that could not start
	// or replay, a run the check's own verification failed); each also
	// fails `ci verify` of the artifact on its own. Notes are its notes
	// about the base and its own verification.
	Problems, Notes []string
}

// value is the Presentation as artifact.json carries it.
func (p Presentation) value() map[string]any {
	return map[string]any{
		"base_label": p.BaseLabel, "head_label": p.HeadLabel,
		"pointer": p.Pointer, "command": p.Command, "blob_base": p.BlobBase, "drawn": p.Drawn,
		"allow_empty": p.AllowEmpty,
		"problems":    strs(p.Problems), "notes": strs(p.Notes),
	}
}

func strs(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// parsePresentation reads artifact.json's "presentation" strictly: an
// object with exactly the members value writes, each of its type.
func parsePresentation(v any) (Presentation, error) {
	var p Presentation
	m, ok := v.(map[string]any)
	if !ok {
		return p, errorf(CodeInvalid, "%s: presentation: want an object", MarkerFile)
	}
	// In a fixed order, so a bad presentation is always told the same way.
	texts := []struct {
		key string
		dst *string
	}{{"base_label", &p.BaseLabel}, {"blob_base", &p.BlobBase}, {"command", &p.Command}, {"drawn", &p.Drawn}, {"head_label", &p.HeadLabel}, {"pointer", &p.Pointer}}
	lists := []struct {
		key string
		dst *[]string
	}{{"notes", &p.Notes}, {"problems", &p.Problems}}
	if err := onlyMembers(m, presentationMembers, MarkerFile+": presentation"); err != nil {
		return p, err
	}
	for _, t := range texts {
		s, ok := m[t.key].(string)
		if !ok {
			return p, errorf(CodeInvalid, "%s: presentation.%s: want a string", MarkerFile, t.key)
		}
		*t.dst = s
	}
	for _, l := range lists {
		items, err := presentationList(m, l.key)
		if err != nil {
			return p, err
		}
		*l.dst = items
	}
	if p.BlobBase != "" && !blobBase.MatchString(p.BlobBase) {
		return p, errorf(CodeInvalid, "%s: presentation.blob_base %q is not an http(s) URL ending in /", MarkerFile, p.BlobBase)
	}
	b, ok := m["allow_empty"].(bool)
	if !ok {
		return p, errorf(CodeInvalid, "%s: presentation.allow_empty: want true or false", MarkerFile)
	}
	p.AllowEmpty = b
	return p, nil
}

// presentationMembers are the members value writes.
var presentationMembers = []string{"allow_empty", "base_label", "blob_base", "command", "drawn", "head_label", "pointer", "notes", "problems"}

// presentationList reads the presentation's list of strings key.
func presentationList(m map[string]any, key string) ([]string, error) {
	items, ok := m[key].([]any)
	if !ok {
		return nil, errorf(CodeInvalid, "%s: presentation.%s: want a list of strings", MarkerFile, key)
	}
	out := make([]string, 0, len(items))
	for i, e := range items {
		s, ok := e.(string)
		if !ok {
			return nil, errorf(CodeInvalid, "%s: presentation.%s[%d]: want a string", MarkerFile, key, i)
		}
		out = append(out, s)
	}
	return out, nil
}

// blobBase is the form of a file-link prefix (diff.RenderOptions.BlobBase).
var blobBase = regexp.MustCompile(`^https?://[^\s()<>\[\]]+/$`)

// RequireWorkloads makes a head with no workloads under paths a problem
// of d, unless allowEmpty: a check of nothing proves nothing. It settles
// d's verdict.
func RequireWorkloads(d *diff.Diff, paths []string, allowEmpty bool) {
	if !allowEmpty && !slices.ContainsFunc(d.Workloads, func(w *diff.Workload) bool { return w.Status != diff.StatusRemoved }) {
		d.Problems = append(d.Problems, fmt.Sprintf("no workloads under %s at the head: a check of nothing proves nothing (a workflow that means it passes --allow-empty)", strings.Join(paths, ", ")))
	}
	d.Settle()
}

// Rendered are the files rendered from one diff.
type Rendered struct {
	Diff    []byte // diff.json
	Report  []byte // report.md: every section, the Pareto plot as a table, within the job summary's size
	HTML    []byte // pr.html
	Comment []byte // comment.md: the sticky comment, marker first, within GitHub's limit
}

// File returns the bytes of one of RenderedFiles.
func (r *Rendered) File(name string) []byte {
	switch name {
	case DiffFile:
		return r.Diff
	case ReportFile:
		return r.Report
	case HTMLFile:
		return r.HTML
	case CommentFile:
		return r.Comment
	}
	return nil
}

// Render renders d, a settled diff, as the check's files: the one
// function both the check (ci/prcheck) and everything that re-renders its
// files (`assay ci verify`, the comment workflow) call, so the same
// evidence and presentation give the same bytes. marker starts the
// comment; trusted, when set, is a paragraph appended to the verdict
// section (the comment workflow's account of how it checked).
func Render(d *diff.Diff, p Presentation, marker, trusted string) (*Rendered, error) {
	ro := diff.RenderOptions{Pointer: p.Pointer, Command: p.Command, BlobBase: p.BlobBase, Drawn: p.Drawn}
	withTrusted := func(s []ghci.Section) []ghci.Section {
		if trusted != "" && len(s) > 0 {
			s[0].Markdown += "\n" + trusted
		}
		return s
	}
	r := &Rendered{}
	// A cut comment still ends with the reproduce line: it closes the
	// truncation notice.
	r.Comment = []byte(ghci.Compose(marker, withTrusted(diff.Sections(d, ro)), ghci.MaxCommentChars, strings.TrimSpace(p.Pointer+" "+diff.Footer(d, ro))))
	r.Report = []byte(summaryReport(withTrusted(diff.SummarySections(d, ro)), p.Pointer))
	var err error
	if r.HTML, err = diff.HTML(d, ro); err != nil {
		return nil, &fault.Error{Code: fault.IOFailed, Message: "render " + HTMLFile, Err: err}
	}
	if r.Diff, err = d.JSON(); err != nil {
		return nil, &fault.Error{Code: fault.IOFailed, Message: "render " + DiffFile, Err: err}
	}
	return r, nil
}

// summaryBytes keeps the job summary under GitHub's limit of 1 MiB per
// step, which counts bytes; the margin leaves room for other steps' lines.
const summaryBytes = 1_000_000

// summaryReport composes the full report to at most summaryBytes bytes of
// UTF-8. Compose counts UTF-16 units, and a unit takes one to three bytes,
// so the unit budget shrinks in proportion until the bytes fit; a third of
// the bytes always does.
func summaryReport(sections []ghci.Section, pointer string) string {
	limit := summaryBytes
	for range 4 {
		r := ghci.Compose("", sections, limit, pointer)
		if len(r) <= summaryBytes {
			return r
		}
		limit = int(int64(limit)*summaryBytes/int64(len(r))) - 64
	}
	return ghci.Compose("", sections, summaryBytes/3, pointer)
}

// WriteRendered writes files into dir, each of names (default: all of
// RenderedFiles).
func WriteRendered(dir string, r *Rendered, names ...string) error {
	if len(names) == 0 {
		names = RenderedFiles
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return &Error{Code: CodeIO, Message: "write " + dir, Err: err}
	}
	for _, name := range names {
		if err := os.WriteFile(filepath.Join(dir, name), r.File(name), 0o644); err != nil {
			return &Error{Code: CodeIO, Message: "write " + dir, Err: err}
		}
	}
	return nil
}
