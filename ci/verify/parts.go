package verify

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/foundry"
	"github.com/algal-assay/assay/harness"
	"github.com/algal-assay/assay/runrecord"
)

// maxFieldMismatches bounds how many disagreeing fields of one derived
// file are named: a forged aggregate is shown by its first few fields.
const maxFieldMismatches = 8

// checkPartsRun checks a bench run in parts: its workload compiles to the
// run; every part report verifies and is its part's (harness.RederiveParts);
// aggregate.json, verification.json and gate.json agree, field by field,
// with what the verified parts re-derive to; and every file is what the
// run writes (FileKinds: each part's config and tables, the summary).
func checkPartsRun(ctx context.Context, dir string, rec *runrecord.Record, res *Result, opts Options, has func(string) bool, fail func(string, ...any)) error {
	for _, f := range []string{harness.ReportFile, harness.BudgetFile} {
		if has(f) {
			fail("the run directory holds both %s and %s; a run in parts leaves only the aggregate", harness.AggregateFile, f)
			return nil
		}
	}
	w := opts.Workloads.Lookup(rec.Pipeline)
	if w == nil {
		fail("%s, %s and %s cannot be re-derived: %s (%s names pipeline %q)", harness.AggregateFile, harness.VerificationFile, harness.GateFile, opts.Workloads.missing(rec.Pipeline), runrecord.RecordFile, rec.Pipeline)
		return nil
	}
	res.Run.Workload = w
	if !w.InParts() {
		fail("%s is the aggregate of a bench run in parts, but workload %s (%s) runs in one part", harness.AggregateFile, w.Name, w.Path)
		return nil
	}
	c, err := harness.Compile(w, runsRoot(dir), foundry.AdmitOptions{})
	if err != nil {
		fail("workload %s does not compile, so this run cannot be re-derived: %v", w.Path, err)
		return nil
	}
	if c.Slug != rec.RunSlug || c.Slug != filepath.Base(dir) {
		fail("workload %s compiles to run %s, but this run directory is %s (%s run_slug %s): the workload or an input it reads is not the one this run was made from, so its gate is not this run's", w.Path, c.Slug, filepath.Base(dir), runrecord.RecordFile, rec.RunSlug)
		return nil
	}
	keep := harness.GateVerdicts
	if opts.everyVerdict {
		keep = harness.EveryVerdict
	}
	d, err := harness.RederiveParts(ctx, c, dir, opts.Evidence, keep)
	if err != nil {
		fail("%s cannot be re-derived from the parts: %v", harness.AggregateFile, err)
		return nil
	}
	res.Run.Derived = d
	res.Digest = d.Verification.Digest
	for _, mm := range d.Verification.Mismatches {
		fail("a part does not verify: %s", mm)
		res.Evidence = append(res.Evidence, res.Mismatches[len(res.Mismatches)-1])
	}
	stored, err := canon.ReadFile(filepath.Join(dir, harness.AggregateFile), 0)
	if err != nil {
		fail("%s: %v", harness.AggregateFile, err)
	} else {
		n := 0
		diffFields(stored, d.Aggregate, "", func(field string, got, want any) {
			if n++; n <= maxFieldMismatches {
				fail("%s: %s is %s, but re-deriving it from the verified parts gives %s", harness.AggregateFile, field, show(got), show(want))
			}
		})
		if n > maxFieldMismatches {
			fail("%s: %d more field(s) disagree with the verified parts", harness.AggregateFile, n-maxFieldMismatches)
		}
	}
	if has(harness.VerificationFile) {
		compareStored(dir, harness.VerificationFile, d.Verification.Value(), verificationFields, "the parts", fail)
	}
	if has(harness.GateFile) {
		compareGate(dir, w, d, harness.AggregateFile, fail)
	}
	if opts.everyVerdict {
		// The run rendered its files from the verdicts its gate names
		// (GateVerdicts); they are compared with those.
		if d, err = harness.RederiveParts(ctx, c, dir, opts.Evidence, harness.GateVerdicts); err != nil {
			return nil
		}
	}
	rc := &rerun{dir: dir, rec: rec, compiled: c, derived: d, k: 1, tree: opts.Tree, roots: opts.Workloads.roots()}
	return rc.check(opts, has, res, fail)
}

// diffFields walks two JSON values and reports each leaf (or shape) that
// differs, by its path (systems[2].usage.cost), in a stable order.
func diffFields(got, want any, at string, bad func(field string, got, want any)) {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			bad(fieldName(at), got, want)
			return
		}
		keys := map[string]bool{}
		for k := range w {
			keys[k] = true
		}
		for k := range g {
			keys[k] = true
		}
		ordered := slices.Collect(maps.Keys(keys))
		slices.SortFunc(ordered, canon.CompareKeys)
		for _, k := range ordered {
			next := k
			if at != "" {
				next = at + "." + k
			}
			diffFields(g[k], w[k], next, bad)
		}
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			bad(fieldName(at), got, want)
			return
		}
		for i := range w {
			diffFields(g[i], w[i], fmt.Sprintf("%s[%d]", at, i), bad)
		}
	default:
		if !sameValue(got, want) {
			bad(fieldName(at), got, want)
		}
	}
}

func fieldName(at string) string {
	if at == "" {
		return "the file"
	}
	return at
}
