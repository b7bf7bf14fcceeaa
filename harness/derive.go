package harness

import (
	"context"
	"crypto/sha256"
	"fmt"

	"github.com/algal-assay/assay/engine/bench"
	"github.com/algal-assay/assay/engine/evidence"
	"github.com/algal-assay/assay/engine/foundry"
	"github.com/algal-assay/assay/harness/gate"
	"github.com/algal-assay/assay/harness/repeats"
	"github.com/algal-assay/assay/harness/workload"
)

// Derived is what a run's verify and summarize phases write
// (verification.json and gate.json), recomputed from its evidence.
type Derived struct {
	Bench   *bench.Report
	Foundry *foundry.Result
	// Verification is the engine's verification of the report (or
	// exhausted account) plus the scripted-alignment check, as the verify
	// phase computes it.
	Verification *Verification
	Gates        []gate.Result
	// Aggregate is what aggregate.json must hold, for a bench run in
	// parts (RederiveParts); nil otherwise.
	Aggregate map[string]any
	// Repeats is the aggregate of a repeated run, re-derived from every
	// repeat's report (nil without repeats); Bench and Foundry are then
	// repeat 1's.
	Repeats *repeats.Aggregate
	// UnknownUsage is Outcome.UnknownUsage, re-derived.
	UnknownUsage map[string]int
	// PartDigests are the part reports' digests of a bench run in parts,
	// in part order (RederiveParts; nil otherwise).
	PartDigests []string
	// CanonicalParts hold, in part order, the SHA-256 of the canonical
	// form a run writes each part report RederiveParts verified in (its
	// value encoded, then a newline): a file of those bytes is in that
	// form without a second parse.
	CanonicalParts [][sha256.Size]byte
}

// GatesPassed reports whether every re-derived rule holds.
func (d *Derived) GatesPassed() bool { return gate.Passed(d.Gates) }

// Rederive recomputes a finished run's verification and gate verdicts
// from its report, so that nothing downstream has to believe the
// verification.json and gate.json the run wrote: those are derived files
// anyone with the directory can edit. report is the parsed report.json
// (algal.bench.v1 or algal.foundry.v1) or budget.json (the exhausted
// habitat account); c is the workload compiled as the run was (its Slug
// names the run directory); st serves the receipts and manifests the
// report cites. A report that does not parse is an error; one that parses
// but does not hold is a Verification with mismatches.
func Rederive(ctx context.Context, c *workload.Compiled, report any, st evidence.Store) (*Derived, error) {
	return RederiveRepeats(ctx, c, []any{report}, st)
}

// RederiveRepeats is Rederive for a run with repeats: reports are every
// repeat's parsed report (or account), in repeat order (report.json,
// report-r02.json, ...; c.Workload.Repeats of them). The aggregate
// (repeats.json) is re-derived from them too, so a forged pass rate,
// pass^k or flaky list is disagreement, not evidence.
func RederiveRepeats(ctx context.Context, c *workload.Compiled, reports []any, st evidence.Store) (*Derived, error) {
	w := c.Workload
	if len(reports) != max(1, w.Repeats) {
		return nil, fmt.Errorf("workload %s runs %d repeat(s), but %d report(s) were given", w.Name, max(1, w.Repeats), len(reports))
	}
	d := &Derived{}
	parsed := make([]repeats.Evidence, len(reports))
	for i, report := range reports {
		ev, err := parseEvidence(w, report)
		if err != nil {
			if len(reports) > 1 {
				return nil, fmt.Errorf("repeat %d: %w", i+1, err)
			}
			return nil, err
		}
		parsed[i] = ev
	}
	d.Bench, d.Foundry = parsed[0].Bench, parsed[0].Foundry
	if len(parsed) > 1 {
		var err error
		if d.Repeats, err = pooling(w.Kind).Aggregate(w.Name, parsed); err != nil {
			return nil, err
		}
	}
	r := &run{w: w, c: c, opts: Options{Store: st}, o: &Outcome{Workload: w, Compiled: c, Bench: d.Bench, Foundry: d.Foundry, Repeats: d.Repeats}}
	out, alignErr, err := r.verifyRepeats(ctx, reports[0], reports[1:], parsed)
	if err != nil {
		return nil, err
	}
	if alignErr != nil {
		// A receipt the report cites cannot be read: evidence that does
		// not hold (the engine's verification says which), not a host
		// fault, so it is a mismatch here where the verify phase fails.
		out.OK = false
		out.Mismatches = append(out.Mismatches, fmt.Sprintf("scripted alignment cannot be checked: %v", alignErr))
	}
	d.Verification = out
	d.UnknownUsage = r.o.UnknownUsage
	d.Gates = gate.Judge(w, d.Bench, d.Foundry, d.Repeats)
	return d, nil
}

// parseEvidence parses one repeat's report or exhausted account.
func parseEvidence(w *workload.Workload, report any) (repeats.Evidence, error) {
	if w.Kind == workload.KindBench {
		rep, err := bench.ParseReport(report)
		if err != nil {
			return repeats.Evidence{}, err
		}
		return repeats.Evidence{Bench: rep}, nil
	}
	res := &foundry.Result{}
	if m, _ := report.(map[string]any); m["contract"] == foundry.BudgetContract {
		acc, err := foundry.ParseAccount(report, "")
		if err != nil {
			return repeats.Evidence{}, err
		}
		res.Exhausted = acc
	} else {
		rep, err := foundry.ParseReport(report)
		if err != nil {
			return repeats.Evidence{}, err
		}
		res.Report = rep
	}
	return repeats.Evidence{Foundry: res}, nil
}

// verification is the verify phase's computation over a parsed report
// (or exhausted account): the engine's verification, then the scripted
// alignment of every case's calls with its declared responses. alignErr
// is set when the alignment could not be checked (a cited receipt cannot
// be read); err is a verification that could not run at all.
func (r *run) verification(ctx context.Context, v any) (out *Verification, alignErr, err error) {
	out = &Verification{}
	var prices map[string]bench.Price
	if r.o.Bench != nil {
		prices = r.o.Bench.Prices
	}
	usage := newUsageTap(r.opts.Store, prices)
	tap := newReceiptTap(usage)
	if r.w.Kind == workload.KindBench {
		usage.reported = true // bench.Verify hands over what it measures
		bv, err := bench.Verify(ctx, v, tap)
		if err != nil {
			return nil, nil, err
		}
		*out = Verification{OK: bv.OK, Digest: bv.Digest, CheckedReceipts: bv.CheckedReceipts, Mismatches: bv.Mismatches}
	} else {
		fv, err := foundry.VerifyFile(ctx, v, tap)
		if err != nil {
			return nil, nil, err
		}
		*out = Verification{OK: fv.OK, Digest: fv.Digest, CheckedReceipts: fv.CheckedReceipts, Mismatches: fv.Mismatches}
	}
	problems, alignErr := r.alignment(tap)
	if len(problems) > 0 {
		out.OK = false
		out.Mismatches = append(out.Mismatches, problems...)
	}
	if out.Mismatches == nil {
		out.Mismatches = []string{}
	}
	if alignErr == nil {
		// Every cited receipt was readable: what is unknown about their
		// usage is restored beside the report's numbers.
		if r.o.UnknownUsage, err = usage.fill(r.o.Bench, r.o.Foundry); err != nil {
			return nil, nil, err
		}
	}
	return out, alignErr, nil
}

// GateValue is gate.json's canonical JSON form.
func GateValue(w *workload.Workload, gates []gate.Result) map[string]any {
	rules := make([]any, 0, len(gates))
	for _, g := range gates {
		rules = append(rules, map[string]any{"rule": g.Rule.Kind, "name": g.Rule.Name(), "passed": g.Passed, "message": g.Message, "at": g.Rule.Pos.String()})
	}
	return map[string]any{"workload": w.Name, "passed": gate.Passed(gates), "rules": rules}
}
