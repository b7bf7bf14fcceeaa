package harness

import (
	"context"
	"fmt"

	"github.com/algal-assay/assay/engine/bench"
	"github.com/algal-assay/assay/engine/evidence"
	"github.com/algal-assay/assay/engine/foundry"
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
	Gates        []GateResult
	// Aggregate is what aggregate.json must hold, for a bench run in
	// parts (RederiveParts); nil otherwise.
	Aggregate map[string]any
}

// GatesPassed reports whether every re-derived rule holds.
func (d *Derived) GatesPassed() bool { return GatesPassed(d.Gates) }

// Rederive recomputes a finished run's verification and gate verdicts
// from its report, so that nothing downstream has to believe the
// verification.json and gate.json the run wrote: those are derived files
// anyone with the directory can edit. report is the parsed report.json
// (algal.bench.v1 or algal.foundry.v1) or budget.json (the exhausted
// habitat account); c is the workload compiled as the run was (its Slug
// names the run directory); st serves the receipts and manifests the
// report cites. A report that does not parse is an error; one that parses
// but does not hold is a Verification with mismatches.
func Rederive(ctx context.Context, c *Compiled, report any, st evidence.Store) (*Derived, error) {
	w := c.Workload
	d := &Derived{}
	if w.Kind == KindBench {
		rep, err := bench.ParseReport(report)
		if err != nil {
			return nil, err
		}
		d.Bench = rep
	} else {
		res := &foundry.Result{}
		if m, _ := report.(map[string]any); m["contract"] == foundry.BudgetContract {
			acc, err := foundry.ParseAccount(report, "")
			if err != nil {
				return nil, err
			}
			res.Exhausted = acc
		} else {
			rep, err := foundry.ParseReport(report)
			if err != nil {
				return nil, err
			}
			res.Report = rep
		}
		d.Foundry = res
	}
	r := &run{w: w, c: c, opts: Options{Store: st}, o: &Outcome{Workload: w, Compiled: c, Bench: d.Bench, Foundry: d.Foundry}}
	out, alignErr, err := r.verification(ctx, report)
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
	if w.Kind == KindBench {
		d.Gates = EvaluateBench(w, d.Bench)
	} else {
		d.Gates = EvaluateFoundry(w, d.Foundry)
	}
	return d, nil
}

// verification is the verify phase's computation over a parsed report
// (or exhausted account): the engine's verification, then the scripted
// alignment of every case's calls with its declared responses. alignErr
// is set when the alignment could not be checked (a cited receipt cannot
// be read); err is a verification that could not run at all.
func (r *run) verification(ctx context.Context, v any) (out *Verification, alignErr, err error) {
	out = &Verification{}
	tap := newReceiptTap(r.opts.Store)
	if r.w.Kind == KindBench {
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
	return out, alignErr, nil
}

// GateValue is gate.json's canonical JSON form.
func GateValue(w *Workload, gates []GateResult) map[string]any {
	rules := make([]any, 0, len(gates))
	for _, g := range gates {
		rules = append(rules, map[string]any{"rule": g.Rule.Kind, "name": g.Rule.Name(), "passed": g.Passed, "message": g.Message, "at": g.Rule.Pos.String()})
	}
	return map[string]any{"workload": w.Name, "passed": GatesPassed(gates), "rules": rules}
}
