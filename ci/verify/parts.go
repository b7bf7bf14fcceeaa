package verify

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/harness"
	"github.com/algal-assay/assay/harness/rundir"
	"github.com/algal-assay/assay/harness/workload"
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
func (c *runCheck) checkPartsRun(rec *runrecord.Record) error {
	for _, f := range []string{rundir.ReportFile, rundir.BudgetFile} {
		if c.has(f) {
			c.fail("the run directory holds both %s and %s; a run in parts leaves only the aggregate", workload.AggregateFile, f)
			return nil
		}
	}
	opts := c.opts
	w := opts.Workloads.Lookup(rec.Pipeline)
	if w == nil {
		c.fail("%s, %s and %s cannot be re-derived: %s (%s names pipeline %q)", workload.AggregateFile, rundir.VerificationFile, rundir.GateFile, opts.Workloads.missing(rec.Pipeline), runrecord.RecordFile, rec.Pipeline)
		return nil
	}
	c.res.Run.Workload = w
	if !w.InParts() {
		c.fail("%s is the aggregate of a bench run in parts, but workload %s (%s) runs in one part", workload.AggregateFile, w.Name, w.Path)
		return nil
	}
	comp, ok := c.compileFor(w, rec)
	if !ok {
		return nil
	}
	keep := harness.GateVerdicts
	if opts.everyVerdict {
		keep = harness.EveryVerdict
	}
	d, err := harness.RederiveParts(c.ctx, comp, c.dir, opts.Evidence, keep)
	if err != nil {
		c.fail("%s cannot be re-derived from the parts: %v", workload.AggregateFile, err)
		return nil
	}
	c.comparePartsDerived(w, d)
	if opts.everyVerdict {
		// The run rendered its files from the verdicts its gate names
		// (GateVerdicts); they are compared with those, taken from the
		// same fold (the parts are not verified a second time).
		d = harness.GateVerdictsOf(comp, d)
	}
	rc := &rerun{dir: c.dir, rec: rec, compiled: comp, derived: d, k: 1, tree: opts.Tree, roots: opts.Workloads.roots()}
	return rc.check(opts, c.has, c.res, c.fail)
}

// comparePartsDerived records what the verified parts re-derive to and
// compares aggregate.json, verification.json and gate.json with it.
func (c *runCheck) comparePartsDerived(w *workload.Workload, d *harness.Derived) {
	c.res.Run.Derived = d
	c.res.Digest = d.Verification.Digest
	for _, mm := range d.Verification.Mismatches {
		c.failEvidence("a part does not verify: %s", mm)
	}
	c.compareAggregate(d.Aggregate)
	if c.has(rundir.VerificationFile) {
		compareStored(c.dir, rundir.VerificationFile, d.Verification.Value(), verificationFields, "the parts", c.fail)
	}
	if c.has(rundir.GateFile) {
		compareGate(c.dir, w, d, workload.AggregateFile, c.fail)
	}
}

// compareAggregate compares aggregate.json field by field with the
// aggregate re-derived from the verified parts, naming the first few
// fields that disagree.
func (c *runCheck) compareAggregate(derived any) {
	stored, err := canon.ReadFile(filepath.Join(c.dir, workload.AggregateFile), 0)
	if err != nil {
		c.fail("%s: %v", workload.AggregateFile, err)
		return
	}
	n := 0
	diffFields(stored, derived, "", func(field string, got, want any) {
		if n++; n <= maxFieldMismatches {
			c.fail("%s: %s is %s, but re-deriving it from the verified parts gives %s", workload.AggregateFile, field, show(got), show(want))
		}
	})
	if n > maxFieldMismatches {
		c.fail("%s: %d more field(s) disagree with the verified parts", workload.AggregateFile, n-maxFieldMismatches)
	}
}

// diffFields walks two JSON values and reports each leaf (or shape) that
// differs, by its path (systems[2].usage.cost), in a stable order.
func diffFields(got, want any, at string, bad func(field string, got, want any)) {
	switch w := want.(type) {
	case map[string]any:
		diffObjects(got, w, at, bad)
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

// diffObjects is diffFields of an object: every member either holds, in
// canonical key order.
func diffObjects(got any, want map[string]any, at string, bad func(field string, got, want any)) {
	g, ok := got.(map[string]any)
	if !ok {
		bad(fieldName(at), got, want)
		return
	}
	keys := maps.Clone(want)
	maps.Copy(keys, g)
	ordered := slices.Collect(maps.Keys(keys))
	slices.SortFunc(ordered, canon.CompareKeys)
	for _, k := range ordered {
		next := k
		if at != "" {
			next = at + "." + k
		}
		diffFields(g[k], want[k], next, bad)
	}
}

func fieldName(at string) string {
	if at == "" {
		return "the file"
	}
	return at
}
