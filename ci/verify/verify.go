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
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/algal-assay/assay/engine/bench"
	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/foundry"
	"github.com/algal-assay/assay/engine/receipt"
	"github.com/algal-assay/assay/engine/vm"
	"github.com/algal-assay/assay/runrecord"
)

// Kinds of evidence.
const (
	KindReceipt = "receipt"
	KindBench   = "bench"
	KindFoundry = "foundry"
	KindBudget  = "budget"
	KindRun     = "run"
)

// Run directory files a complete harness run leaves (one of them).
const (
	reportFile = "report.json"
	budgetFile = "budget.json"
)

// contracts maps each contract literal to its kind, in the order a file
// that does not parse is labelled (a foundry report embeds an account).
var contracts = []struct{ contract, kind string }{
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
}

// Detail is the line's last column: the digest (or run status) when the
// item verifies, else the first mismatch and how many more there are.
func (r Result) Detail() string {
	if r.OK {
		if r.Kind == KindRun {
			return "status " + r.Status
		}
		return r.Digest
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
}

// Report is the outcome of Verify.
type Report struct {
	Roots      []string
	Store      string
	AllowEmpty bool
	Results    []Result
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
	err := walk(roots, storeDir, func(path string, run bool) error {
		if run {
			items = append(items, Item{Path: path, Kind: KindRun})
			return nil
		}
		if kind, _, _ := classify(path); kind != "" {
			items = append(items, Item{Path: path, Kind: kind})
		}
		return nil
	})
	return items, err
}

// Verify finds and verifies every piece of evidence under roots.
func Verify(ctx context.Context, roots []string, opts Options) (*Report, error) {
	rep := &Report{Roots: roots, Store: opts.StoreDir, AllowEmpty: opts.AllowEmpty}
	err := walk(roots, opts.StoreDir, func(path string, run bool) error {
		if run {
			rep.Results = append(rep.Results, checkRun(path))
			return nil
		}
		kind, v, perr := classify(path)
		if kind == "" {
			return nil
		}
		res := Result{Path: path, Kind: kind}
		if perr != nil {
			res.Mismatches = []string{perr.Error()}
		} else if err := check(ctx, &res, v, opts.Evidence); err != nil {
			return err
		}
		res.OK = len(res.Mismatches) == 0
		rep.Results = append(rep.Results, res)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return rep, nil
}

// walk calls fn for every candidate evidence file and run directory.
func walk(roots []string, storeDir string, fn func(path string, run bool) error) error {
	skip := ""
	if storeDir != "" {
		if abs, err := filepath.Abs(storeDir); err == nil {
			skip = abs
		}
	}
	for _, root := range roots {
		st, err := os.Stat(root)
		if err != nil {
			return &fault.Error{Code: fault.IOFailed, Message: fmt.Sprintf("root %s: %v", root, pathErr(err))}
		}
		if !st.IsDir() {
			if err := fn(root, false); err != nil {
				return err
			}
			continue
		}
		err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return &fault.Error{Code: fault.IOFailed, Message: fmt.Sprintf("%s: %v", path, pathErr(err))}
			}
			if d.IsDir() {
				if path != root && (strings.HasPrefix(d.Name(), ".") || isDir(path, skip)) {
					return filepath.SkipDir
				}
				return nil
			}
			if !d.Type().IsRegular() {
				return nil // symbolic links and devices are never read
			}
			switch {
			case d.Name() == runrecord.RecordFile:
				return fn(filepath.Dir(path), true)
			case strings.HasSuffix(d.Name(), ".json") && !storeObject.MatchString(filepath.ToSlash(path)):
				return fn(path, false)
			}
			return nil
		})
		if err != nil {
			return err
		}
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
// why it fails.
func classify(path string) (kind string, v any, err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", nil, nil // unreadable files that are not evidence are not our business
	}
	defer f.Close()
	data, rerr := io.ReadAll(io.LimitReader(f, receipt.MaxBytes+1))
	for _, c := range contracts {
		if bytes.Contains(data, []byte(`"`+c.contract+`"`)) {
			kind = c.kind
			break
		}
	}
	if kind == "" {
		return "", nil, nil
	}
	switch {
	case rerr != nil:
		return kind, nil, fmt.Errorf("read: %v", rerr)
	case len(data) > receipt.MaxBytes:
		return kind, nil, fmt.Errorf("file exceeds the %d-byte bound", receipt.MaxBytes)
	}
	if v, err = canon.Parse(data, receipt.MaxBytes); err != nil {
		return kind, nil, err
	}
	m, _ := v.(map[string]any)
	for _, c := range contracts {
		if m["contract"] == c.contract {
			return c.kind, v, nil
		}
	}
	// Mentions a contract without being one (a config, a comparison).
	return "", nil, nil
}

// check verifies one parsed document into res; an error is a host fault
// (a broken store), not a verification failure.
func check(ctx context.Context, res *Result, v any, ev *vm.Workbench) error {
	fail := func(err error) { res.Mismatches = append(res.Mismatches, err.Error()) }
	switch res.Kind {
	case KindReceipt:
		rec := v.(map[string]any)
		res.Digest, _ = rec["digest"].(string)
		if err := receipt.Validate(rec); err != nil {
			fail(err)
			return nil
		}
		d, _ := rec["manifestDigest"].(string)
		m, err := ev.Manifest(d)
		if err != nil {
			fail(fmt.Errorf("manifest %s: %v", d, err))
			return nil
		}
		mm, err := ev.Replay(ctx, rec, m)
		if err != nil {
			fail(err)
			return nil
		}
		res.Mismatches = append(res.Mismatches, mm...)
	case KindBench:
		ver, err := bench.Verify(ctx, v, ev)
		if err != nil {
			fail(err)
			return nil
		}
		res.Digest = ver.Digest
		res.Mismatches = append(res.Mismatches, ver.Mismatches...)
	case KindFoundry, KindBudget:
		ver, err := foundry.VerifyFile(ctx, v, ev)
		if err != nil {
			fail(err)
			return nil
		}
		res.Digest = ver.Digest
		res.Mismatches = append(res.Mismatches, ver.Mismatches...)
	}
	if res.Digest == "" {
		if d, err := canon.Digest(v); err == nil && res.Kind != KindReceipt {
			res.Digest = d
		}
	}
	return nil
}

// checkRun verifies a run directory's record.
func checkRun(dir string) Result {
	res := Result{Path: dir, Kind: KindRun}
	view, err := runrecord.Read(dir, runrecord.Options{})
	switch {
	case err != nil:
		res.Mismatches = []string{err.Error()}
	case view.State != runrecord.StateRecord:
		msg := string(view.State)
		if view.Problem != nil {
			msg = view.Problem.Error()
		}
		res.Mismatches = []string{msg}
	default:
		res.Status = view.Record.Status
		if res.Status == runrecord.RunComplete && !exists(dir, reportFile) && !exists(dir, budgetFile) {
			res.Mismatches = []string{"complete run left neither " + reportFile + " nor " + budgetFile}
		}
	}
	res.OK = len(res.Mismatches) == 0
	return res
}

func exists(dir, name string) bool {
	st, err := os.Lstat(filepath.Join(dir, name))
	return err == nil && st.Mode().IsRegular()
}
