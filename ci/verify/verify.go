// Package verify is the offline evidence check of the PR workflow
// (`assay ci verify`): it finds every run receipt (algal.run.v1), bench
// report (algal.bench.v1), foundry report (algal.foundry.v1), habitat
// budget account (algal.habitat-budget.v1) and harness run directory
// (foundry-run.yml) under some roots, verifies each one offline against one
// store, and renders the outcome as text lines, JSON, GitHub annotations
// and a job-summary table.
//
// # What is found
//
// A file is evidence when it is a regular *.json file whose bytes name one
// of the four contracts and whose strict parse has that contract at the
// top level; a file that names a contract but does not parse is evidence
// that fails. A run directory is a directory holding foundry-run.yml.
//
// The walk never follows symbolic links and skips, below each root: every
// directory whose name starts with "." (.git, and .algal, the default
// store), the store directory itself wherever it lives, and the objects of
// any content-addressed store (<namespace>/<64 hex>.json). Store receipts
// are not checked one by one: they are the evidence reports point at, and
// each report's verification replays the receipts it cites; a store read
// also re-hashes every object against its name.
//
// # How each is verified
//
// A receipt is replayed against its manifest, loaded from the store by
// manifestDigest (vm.Verify through the store's vm.Workbench). Reports and
// accounts go through bench.Verify and foundry.VerifyFile over the same
// workbench. A run directory's record must parse (runrecord.Read), and a
// complete run must have left its report (report.json) or exhausted
// account (budget.json); those files are verified as files of their own.
// Nothing runs live and the store is never written.
package verify

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/algal-assay/assay/engine/bench"
	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/foundry"
	"github.com/algal-assay/assay/engine/receipt"
	"github.com/algal-assay/assay/engine/vm"
)

// Kinds of evidence.
const (
	KindReceipt = "receipt"
	KindBench   = "bench"
	KindFoundry = "foundry"
	KindBudget  = "budget"
	KindRun     = "run"
	KindSearch  = "search"
	// KindUnknown is a file that must be evidence (report.json, a known
	// contract family) but is not one this verifier recognises: a failure.
	KindUnknown = "unrecognised"
)

// Run directory files a complete harness run leaves (one of them).
const (
	reportFile = "report.json"
	budgetFile = "budget.json"
)

// contracts maps each contract literal to its kind, in the order a file
// that does not parse is labelled (a foundry report embeds an account).
var contracts = []struct{ contract, kind string }{
	{foundry.SearchContract, KindSearch},
	{foundry.ReportContract, KindFoundry},
	{bench.ReportContract, KindBench},
	{foundry.BudgetContract, KindBudget},
	{receipt.Contract, KindReceipt},
}

// storeObject matches a content-addressed store object's path tail.
var storeObject = regexp.MustCompile(`(^|/)(manifests|values|runs|effects)/[0-9a-f]{64}\.json$`)

// Item is one piece of evidence found.
type Item struct {
	Path string
	Kind string
}

// Result is the verification of one item.
type Result struct {
	Path string
	Kind string
	OK   bool
	// Digest is the receipt, report or account digest ("" for a run
	// directory or a file that does not parse).
	Digest string
	// Status is a run directory's record status.
	Status     string
	Mismatches []string
	// Run is set for a run directory whose record was read.
	Run *RunCheck
	// Evidence are the mismatches, among Mismatches, of a run directory's
	// report (or account) itself; the rest are disagreements between the
	// directory's own files (a stored verdict, the record, the listing).
	Evidence []string
}

// Disagreements are a run directory's mismatches that are not its
// report's own: an edited derived file, a record at odds with the
// directory, a workload that does not compile to the run.
func (r Result) Disagreements() []string {
	var out []string
	for _, m := range r.Mismatches {
		if !slices.Contains(r.Evidence, m) {
			out = append(out, m)
		}
	}
	return out
}

// Detail is the line's last column: the digest (or run status) when the
// item verifies, else the first mismatch and how many more there are.
func (r Result) Detail() string {
	if r.OK {
		return r.okDetail()
	}
	if len(r.Mismatches) == 0 {
		return "does not verify"
	}
	s := oneLine(r.Mismatches[0])
	if n := len(r.Mismatches) - 1; n > 0 {
		s += fmt.Sprintf(" (+%d more)", n)
	}
	return s
}

// okDetail is Detail of an item that verifies: a shard's parts say
// their status, a run its status and the gate re-derived, evidence its
// digest.
func (r Result) okDetail() string {
	switch r.Kind {
	case KindParts:
		return r.Status + " verified"
	case KindRun:
		s := "status " + r.Status
		if r.Run == nil || r.Run.Derived == nil {
			return s
		}
		if r.Run.Derived.GatesPassed() {
			return s + "; gate re-derived: passes"
		}
		return s + "; gate re-derived: fails"
	}
	return r.Digest
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\r", " ")), " ")
}

// Options configure a verification.
type Options struct {
	// Evidence is the store reports and receipts are checked against.
	Evidence *vm.Workbench
	// StoreDir is the store's directory, skipped by the walk ("" for none).
	StoreDir string
	// AllowEmpty makes finding nothing a success (a repository with no
	// evidence yet) instead of a failure (the evidence a step expected is
	// missing).
	AllowEmpty bool
	// Workloads are what run directories are re-derived against; a run
	// whose workload is not among them fails.
	Workloads *Workloads
	// Tree is the source tree the workloads are in when the runs were
	// made from another copy of it (a PR-check artifact's side): a path
	// in a run's config, or its workload's path in gate.json, may then
	// name the same tree file from another directory. "" requires them
	// equal.
	Tree string
	// Commit is the commit the runs were made at ("" when unknown): a run
	// record naming another foundry_head, none (null), or a modified
	// checkout (foundry_modified: true) fails.
	Commit string

	// everyVerdict keeps every case verdict of a run in parts in
	// RunCheck.Derived (CheckRun's callers compare runs case by case);
	// Verify keeps only what its gate verdicts need.
	everyVerdict bool
}

// Report is the outcome of Verify.
type Report struct {
	Roots      []string
	Store      string
	AllowEmpty bool
	Results    []Result
	// Leftovers are what interrupted writers left: listed, not failed.
	Leftovers []Leftover
}

// OK reports whether everything found verified and something was found
// (or AllowEmpty).
func (r *Report) OK() bool { return r.Failed() == 0 && (len(r.Results) > 0 || r.AllowEmpty) }

// Failed counts results that did not verify.
func (r *Report) Failed() int {
	n := 0
	for _, x := range r.Results {
		if !x.OK {
			n++
		}
	}
	return n
}

// Find lists the evidence under roots in walk order (each root in turn,
// lexical order within it).
func Find(roots []string, storeDir string) ([]Item, error) {
	var items []Item
	err := walk(roots, storeDir, visitor{
		run:   func(dir string) error { items = append(items, Item{Path: dir, Kind: KindRun}); return nil },
		parts: func(dir string) error { items = append(items, Item{Path: dir, Kind: KindParts}); return nil },
		file: func(path string) error {
			if kind, _, _ := classify(path); kind != "" {
				items = append(items, Item{Path: path, Kind: kind})
			}
			return nil
		},
		leftover: func(Leftover) {},
	})
	return items, err
}

// Verify finds and verifies every piece of evidence under roots. It
// keeps of each run directory only what its verdict line says (see
// RunCheck.brief), so a walk over many runs holds none of their reports;
// CheckRun gives a run's whole re-derivation.
func Verify(ctx context.Context, roots []string, opts Options) (*Report, error) {
	rep := &Report{Roots: roots, Store: opts.StoreDir, AllowEmpty: opts.AllowEmpty}
	err := walk(roots, opts.StoreDir, visitor{
		run: func(dir string) error {
			res, err := checkRun(ctx, dir, opts)
			if err != nil {
				return err
			}
			res.Run = res.Run.brief()
			rep.Results = append(rep.Results, res)
			return nil
		},
		parts: func(dir string) error {
			res, err := checkShardParts(ctx, dir, opts)
			if err != nil {
				return err
			}
			rep.Results = append(rep.Results, res)
			return nil
		},
		file: func(path string) error {
			res, err := checkFile(ctx, path, opts.Evidence)
			if res != nil {
				rep.Results = append(rep.Results, *res)
			}
			return err
		},
		leftover: func(l Leftover) { rep.Leftovers = append(rep.Leftovers, l) },
	})
	if err != nil {
		return nil, err
	}
	if opts.StoreDir != "" {
		rep.Leftovers = append(rep.Leftovers, storeLeftovers(opts.StoreDir)...)
	}
	return rep, nil
}

// checkFile verifies a file the walk found when it is evidence (nil when
// it is not); an error is a host fault.
func checkFile(ctx context.Context, path string, ev *vm.Workbench) (*Result, error) {
	kind, v, perr := classify(path)
	if kind == "" {
		return nil, nil
	}
	res := Result{Path: path, Kind: kind}
	if perr != nil {
		res.Mismatches = []string{perr.Error()}
	} else if err := check(ctx, &res, v, ev); err != nil {
		return nil, err
	}
	res.OK = len(res.Mismatches) == 0
	return &res, nil
}

// visitor receives what walk finds.
type visitor struct {
	run func(dir string) error
	// parts is a shard's parts directory (isShardParts).
	parts    func(dir string) error
	file     func(path string) error
	leftover func(Leftover)
}

// walk calls v for every candidate evidence file, run directory and
// leftover under roots.
func walk(roots []string, storeDir string, v visitor) error {
	skip := ""
	if storeDir != "" {
		if abs, err := filepath.Abs(storeDir); err == nil {
			skip = abs
		}
	}
	for _, root := range roots {
		if err := walkRoot(root, skip, v); err != nil {
			return err
		}
	}
	return nil
}

// walkRoot walks one root, skipping the store directory skip.
func walkRoot(root, skip string, v visitor) error {
	st, err := os.Stat(root)
	if err != nil {
		return &fault.Error{Code: fault.IOFailed, Message: fmt.Sprintf("root %s: %v", root, pathErr(err))}
	}
	if !st.IsDir() {
		// A root named on the command line is read whatever its name,
		// through the non-blocking regular-file admission (a FIFO or
		// device fails instead of hanging).
		return v.file(root)
	}
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return &fault.Error{Code: fault.IOFailed, Message: fmt.Sprintf("%s: %v", path, pathErr(err))}
		}
		if d.IsDir() {
			return v.visitDir(root, path, d, skip)
		}
		return v.visitFile(path, d)
	})
}

// visitDir visits a directory under root: a hidden one is a leftover or
// nothing, the store is skipped, and a run directory or a shard's parts
// directory is checked whole.
func (v visitor) visitDir(root, path string, d fs.DirEntry, skip string) error {
	if path == root {
		return v.visitRunDir(path)
	}
	if strings.HasPrefix(d.Name(), ".") {
		if kind := leftoverKind(d.Name(), true); kind != "" {
			v.leftover(leftover(path, kind))
		}
		return filepath.SkipDir
	}
	if isDir(path, skip) {
		return filepath.SkipDir
	}
	return v.visitRunDir(path)
}

// visitRunDir checks path whole when it is a run directory or a shard's
// parts directory, and then walks no further into it.
func (v visitor) visitRunDir(path string) error {
	var check func(string) error
	switch {
	case isRunDir(path):
		check = v.run
	case isShardParts(path):
		check = v.parts
	default:
		return nil
	}
	if err := check(path); err != nil {
		return err
	}
	return filepath.SkipDir
}

// visitFile visits a file: a leftover is listed, a JSON file outside the
// store's objects is a candidate evidence file, nothing else is read.
func (v visitor) visitFile(path string, d fs.DirEntry) error {
	if kind := leftoverKind(d.Name(), false); kind != "" {
		v.leftover(leftover(path, kind))
		return nil
	}
	if !d.Type().IsRegular() {
		return nil // symbolic links and devices are never read
	}
	if strings.HasSuffix(d.Name(), ".json") && !storeObject.MatchString(filepath.ToSlash(path)) {
		return v.file(path)
	}
	return nil
}

func isDir(path, abs string) bool {
	if abs == "" {
		return false
	}
	p, err := filepath.Abs(path)
	return err == nil && p == abs
}

func pathErr(err error) error {
	if pe, ok := err.(*fs.PathError); ok {
		return pe.Err
	}
	return err
}

// classify reads path and says which kind of evidence it is ("" for
// none). A file that names a contract but cannot be read or parsed is
// still evidence: its kind comes from the name it carries and err says
// why it fails. Fail closed: a file called report.json, or one whose
// contract is a version of an evidence contract this verifier does not
// know (algal.run.v2, algal.bench.v9), is evidence that fails rather than
// a file to pass over, since renaming the contract must not be a way to
// make evidence disappear.
func classify(path string) (kind string, v any, err error) {
	data, rerr := canon.ReadBounded(path, receipt.MaxBytes)
	named := filepath.Base(path) == reportFile
	if rerr != nil {
		// Whether it would have been evidence cannot be told, so it fails.
		return KindUnknown, nil, fmt.Errorf("cannot be read as evidence: %v", rerr)
	}
	kind = mentionedKind(data)
	if kind == "" && !named && !evidenceFamily.Match(data) {
		return "", nil, nil
	}
	if kind == "" {
		kind = KindUnknown
	}
	if v, err = canon.Parse(data, receipt.MaxBytes); err != nil {
		return kind, nil, err
	}
	m, _ := v.(map[string]any)
	name, _ := m["contract"].(string)
	if k := contractKind(name); k != "" {
		return k, v, nil
	}
	if named || evidenceContract.MatchString(name) {
		return KindUnknown, nil, fmt.Errorf("contract %q is not one this verifier knows (%s)", name, knownContracts())
	}
	// Mentions a contract without being one (a config, a comparison).
	return "", nil, nil
}

// mentionedKind is the kind of the first contract the bytes mention as a
// JSON string ("" for none).
func mentionedKind(data []byte) string {
	for _, c := range contracts {
		if bytes.Contains(data, []byte(`"`+c.contract+`"`)) {
			return c.kind
		}
	}
	return ""
}

// contractKind is the kind of evidence of a contract ("" for one this
// verifier does not know).
func contractKind(name string) string {
	for _, c := range contracts {
		if name == c.contract {
			return c.kind
		}
	}
	return ""
}

// An evidence contract of a family this verifier reads, in any version.
var (
	evidenceContract = regexp.MustCompile(`^algal\.(run|bench|foundry|habitat-budget|search)\.v[0-9]+$`)
	evidenceFamily   = regexp.MustCompile(`"algal\.(run|bench|foundry|habitat-budget|search)\.v[0-9]+"`)
)

func knownContracts() string {
	var names []string
	for _, c := range contracts {
		names = append(names, c.contract)
	}
	return strings.Join(names, ", ")
}

// check verifies one parsed document into res; an error is a host fault
// (a broken store), not a verification failure.
func check(ctx context.Context, res *Result, v any, ev *vm.Workbench) error {
	switch res.Kind {
	case KindReceipt:
		checkReceipt(ctx, res, v.(map[string]any), ev)
	case KindBench, KindFoundry, KindBudget, KindSearch:
		checkReport(ctx, res, v, ev)
	}
	if res.Digest == "" {
		if d, err := canon.Digest(v); err == nil && res.Kind != KindReceipt {
			res.Digest = d
		}
	}
	return nil
}

// checkReceipt validates a receipt and replays it against its manifest.
func checkReceipt(ctx context.Context, res *Result, rec map[string]any, ev *vm.Workbench) {
	res.Digest, _ = rec["digest"].(string)
	if err := receipt.Validate(rec); err != nil {
		res.fail(err)
		return
	}
	d, _ := rec["manifestDigest"].(string)
	m, err := ev.Manifest(d)
	if err != nil {
		res.fail(fmt.Errorf("manifest %s: %v", d, err))
		return
	}
	mm, err := ev.Replay(ctx, rec, m)
	if err != nil {
		res.fail(err)
		return
	}
	res.Mismatches = append(res.Mismatches, mm...)
}

// checkReport verifies a bench report, or a foundry report, account or
// search document, with the verifier of its contract.
func checkReport(ctx context.Context, res *Result, v any, ev *vm.Workbench) {
	verify := foundry.VerifyDocument
	if res.Kind == KindBench {
		verify = bench.Verify
	}
	ver, err := verify(ctx, v, ev)
	if err != nil {
		res.fail(err)
		return
	}
	res.Digest = ver.Digest
	res.Mismatches = append(res.Mismatches, ver.Mismatches...)
}

// fail records err as a mismatch.
func (r *Result) fail(err error) { r.Mismatches = append(r.Mismatches, err.Error()) }
