package foundry

import (
	"context"
	"fmt"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/evidence"
	"github.com/algal-assay/assay/engine/manifest"
)

// Verification is the outcome of Verify or VerifyAccount; its Outcome is
// set only when an account was verified on its own.
type Verification = evidence.Verification

// VerifyFile verifies either file a foundry run may leave: a report, or
// the exhausted habitat account written instead of one.
func VerifyFile(ctx context.Context, v any, ev evidence.Store) (*Verification, error) {
	if m, ok := v.(map[string]any); ok && m["contract"] == BudgetContract {
		return VerifyAccount(ctx, v, ev)
	}
	return Verify(ctx, v, ev)
}

type verifier struct {
	ctx context.Context
	ev  evidence.Store
	out *Verification
}

func (vf *verifier) bad(format string, a ...any) { vf.out.Bad(format, a...) }

// Verify checks a report value: strict parse, the recomputed digest, every
// pass claim under the recorded scorer, every aggregate, the promotion,
// the holdout discipline (holdout cases only for the promoted candidate,
// none in selection); then each case against its stored receipt (the
// claimed manifest and args, outcome, outputs, work and usage) and an
// offline replay of it; the lineage receipt; and the budget account's
// runs against the report's runs and their receipts. A malformed report is
// an error; one that parses but does not hold is a Verification with
// mismatches.
func Verify(ctx context.Context, v any, ev evidence.Store) (*Verification, error) {
	r, err := ParseReport(v)
	if err != nil {
		return nil, err
	}
	vf := &verifier{ctx: ctx, ev: ev, out: &Verification{Digest: r.Digest}}
	if err := vf.out.CheckDigest(v.(map[string]any)); err != nil {
		return nil, err
	}
	// Claims that follow from the recorded cases alone.
	selectionIDs := vf.checkSelection(r)
	vf.checkHoldout(r, selectionIDs)
	// Claims checked against the store.
	if err := vf.checkStored(r); err != nil {
		return nil, err
	}
	vf.out.OK = len(vf.out.Mismatches) == 0
	return vf.out, nil
}

// checkSelection checks each candidate's selection evidence (listed once,
// the common workload, no holdout case, true pass claims, aggregates that
// sum its cases) and the promotion it implies, and returns the ids of the
// selection cases.
func (vf *verifier) checkSelection(r *Report) (selectionIDs map[string]bool) {
	recomputed := make([]CandidateResult, len(r.Candidates))
	seenCand := map[string]bool{}
	selectionIDs = map[string]bool{}
	for i := range r.Candidates {
		c := &r.Candidates[i]
		at := "candidates[" + c.ManifestDigest + "]"
		if seenCand[c.ManifestDigest] {
			vf.bad("%s: listed twice", at)
		}
		seenCand[c.ManifestDigest] = true
		vf.checkWorkload(r, i, at)
		vf.checkSelectionCases(r, at, c, selectionIDs)
		recomputed[i] = vf.checkSums(at, c)
	}
	if !seenCand[r.Promoted] {
		vf.bad("promoted: %s is not a candidate", r.Promoted)
	}
	if want := promoteValid(recomputed); want != "" && want != r.Promoted {
		vf.bad("promoted: claimed %s, the recorded cases promote %s", r.Promoted, want)
	}
	return selectionIDs
}

// checkSelectionCases checks candidate c's cases, noting their ids in ids:
// none may be a holdout case, and every pass claim must hold.
func (vf *verifier) checkSelectionCases(r *Report, at string, c *CandidateResult, ids map[string]bool) {
	for k := range c.Cases {
		cs := &c.Cases[k]
		ids[cs.ID] = true
		if cs.Split == SplitHoldout {
			vf.bad("%s.cases[%s].split: holdout evidence recorded for a candidate before promotion", at, cs.ID)
		}
		vf.checkPass(r.Scorer, at+".cases["+cs.ID+"]", cs)
	}
}

// checkHoldout checks the holdout's cases (holdout cases only, ids used by
// no other case, true pass claims) and its score.
func (vf *verifier) checkHoldout(r *Report, selectionIDs map[string]bool) {
	holdIDs := map[string]bool{}
	for k := range r.Holdout.Cases {
		cs := &r.Holdout.Cases[k]
		at := "holdout.cases[" + cs.ID + "]"
		if cs.Split != SplitHoldout {
			vf.bad("%s.split: claimed %s in the holdout", at, cs.Split)
		}
		if holdIDs[cs.ID] || selectionIDs[cs.ID] {
			vf.bad("%s.id: %q is used by another case", at, cs.ID)
		}
		holdIDs[cs.ID] = true
		vf.checkPass(r.Scorer, at, cs)
	}
	compareScore(vf, "holdout", r.Holdout.Score, holdoutScore(r.Holdout.Cases))
}

// checkStored checks the report's claims against the store: every case
// against its receipt, the lineage receipt and the budget account.
func (vf *verifier) checkStored(r *Report) error {
	for i := range r.Candidates {
		c := &r.Candidates[i]
		at := "candidates[" + c.ManifestDigest + "]"
		if err := vf.checkReceipts(at, vf.manifest(at, c.ManifestDigest, c.ManifestKey), c.Cases); err != nil {
			return err
		}
	}
	if err := vf.checkReceipts("holdout", vf.manifest("promoted", r.Promoted, ""), r.Holdout.Cases); err != nil {
		return err
	}
	if r.Lineage != nil {
		if err := vf.checkLineage(r.Lineage); err != nil {
			return err
		}
	}
	if r.Budget != nil {
		vf.checkBinding(r)
		vf.checkCharges("budget", r.Budget)
	}
	return nil
}

// checkReceipts checks cases, recorded under at, against their receipts
// as runs of m; a manifest that did not load (nil, already reported)
// leaves them unchecked.
func (vf *verifier) checkReceipts(at string, m *manifest.Manifest, cases []CaseResult) error {
	if m == nil {
		return nil
	}
	for k := range cases {
		if err := vf.checkReceipt(at+".cases["+cases[k].ID+"]", m, &cases[k]); err != nil {
			return err
		}
	}
	return nil
}

// promoteValid promotes over recomputed scores, or returns "" when a
// recomputed score is empty and the rates cannot be compared.
func promoteValid(cands []CandidateResult) string {
	for i := range cands {
		if cands[i].Train.Total == 0 || cands[i].Validation.Total == 0 {
			return ""
		}
	}
	return Promote(cands)
}

// checkSums recomputes c's aggregates from its recorded cases, flags each
// claim (train, validation, work, usage) that differs from its cases' sum
// and returns the recomputed result.
func (vf *verifier) checkSums(at string, c *CandidateResult) CandidateResult {
	re := CandidateResult{ManifestDigest: c.ManifestDigest, Cases: c.Cases}
	re.aggregate()
	compareScore(vf, at+".train", c.Train, re.Train)
	compareScore(vf, at+".validation", c.Validation, re.Validation)
	if c.Work != re.Work {
		vf.bad("%s.work: claimed %s, its cases sum to %s", at, workText(c.Work), workText(re.Work))
	}
	if c.Usage != re.Usage {
		vf.bad("%s.usage: claimed %s, its cases sum to %s", at, usageText(c.Usage), usageText(re.Usage))
	}
	return re
}

// checkWorkload: every candidate records the same selection cases as the
// first one, in the same order.
func (vf *verifier) checkWorkload(r *Report, i int, at string) {
	c, first := &r.Candidates[i], &r.Candidates[0]
	if i == 0 {
		vf.checkCaseIDs(at, c)
		return
	}
	if len(c.Cases) != len(first.Cases) {
		vf.bad("%s.cases: %d cases, candidates[%s] records %d", at, len(c.Cases), first.ManifestDigest, len(first.Cases))
		return
	}
	for k := range c.Cases {
		a, b := &c.Cases[k], &first.Cases[k]
		if !sameCase(a, b) {
			vf.bad("%s.cases[%s]: differs from case %q of candidates[%s] (id, split, args or expect)", at, a.ID, b.ID, first.ManifestDigest)
		}
	}
}

// checkCaseIDs: c records each case once.
func (vf *verifier) checkCaseIDs(at string, c *CandidateResult) {
	ids := map[string]bool{}
	for k := range c.Cases {
		if ids[c.Cases[k].ID] {
			vf.bad("%s.cases[%s]: recorded twice", at, c.Cases[k].ID)
		}
		ids[c.Cases[k].ID] = true
	}
}

// sameCase reports whether a and b record the same workload case: id,
// split, args and expect.
func sameCase(a, b *CaseResult) bool {
	return a.ID == b.ID && a.Split == b.Split && canon.Equal(a.Args, b.Args) && canon.Equal(a.Expect, b.Expect)
}

func (vf *verifier) checkPass(sc *evidence.Scorer, at string, c *CaseResult) {
	passed, err := sc.Judge(c.ID, c.Args, c.Expect, c.Outcome, c.Outputs)
	if err != nil {
		vf.bad("%s.passed: %v", at, err)
	} else if passed != c.Passed {
		vf.bad("%s.passed: claimed %t, the recorded outputs give %t", at, c.Passed, passed)
	}
}

func compareScore(vf *verifier, at string, claimed, want Score) {
	if claimed != want {
		vf.bad("%s: claimed %d/%d, its cases give %d/%d", at, claimed.Passed, claimed.Total, want.Passed, want.Total)
	}
}

func workText(w Work) string {
	return fmt.Sprintf("{steps %d, agentCalls %d, units %d}", w.Steps, w.AgentCalls, w.Units)
}

func usageText(u Usage) string {
	return fmt.Sprintf("{tokensIn %d, tokensOut %d}", u.TokensIn, u.TokensOut)
}

// manifest resolves a referenced manifest; key, when set, must match.
func (vf *verifier) manifest(at, digest, key string) *manifest.Manifest {
	m, err := vf.ev.Manifest(digest)
	if err != nil {
		vf.bad("%s: manifest %s: %v", at, digest, err)
		return nil
	}
	if m.Digest != digest {
		vf.bad("%s: the store returned manifest %s for %s", at, m.Digest, digest)
		return nil
	}
	if key != "" && m.Key != key {
		vf.bad("%s.manifestKey: claimed %q, the manifest says %q", at, key, m.Key)
	}
	if m.Interface == nil {
		vf.bad("%s: manifest %s declares no interface", at, digest)
		return nil
	}
	return m
}

// checkReceipt compares one case claim with its stored receipt and replays
// the receipt offline.
func (vf *verifier) checkReceipt(at string, m *manifest.Manifest, c *CaseResult) error {
	receipt, err := vf.ev.Receipt(c.ReceiptDigest)
	if err != nil {
		vf.bad("%s.receiptDigest: %v", at, err)
		return nil
	}
	if d, _ := receipt["manifestDigest"].(string); d != m.Digest {
		vf.bad("%s.receiptDigest: receipt %s ran manifest %s, not %s", at, c.ReceiptDigest, d, m.Digest)
		return nil
	}
	if !canon.Equal(receipt["args"], evidence.CellArgs(m, c.Args)) {
		vf.bad("%s.args: receipt %s ran other args", at, c.ReceiptDigest)
	}
	if o, _ := receipt["outcome"].(string); o != c.Outcome {
		vf.bad("%s.outcome: claimed %q, the receipt says %q", at, c.Outcome, o)
	}
	if !canon.Equal(evidence.InterfaceOutputs(m, receipt), c.Outputs) {
		vf.bad("%s.outputs: differ from the receipt", at)
	}
	if w := evidence.ReceiptWork(receipt); w != c.Work {
		vf.bad("%s.work: claimed %s, the receipt says %s", at, workText(c.Work), workText(w))
	}
	if u := ReceiptUsage(receipt); u != c.Usage {
		vf.bad("%s.usage: claimed %s, the receipt's effects give %s", at, usageText(c.Usage), usageText(u))
	}
	return vf.replay(at, receipt, m)
}

func (vf *verifier) replay(at string, receipt map[string]any, m *manifest.Manifest) error {
	diffs, err := vf.ev.Replay(vf.ctx, receipt, m)
	if err != nil {
		return err
	}
	vf.out.CheckedReceipts++
	for _, d := range diffs {
		vf.bad("%s: replay: %s", at, d)
	}
	return nil
}

func (vf *verifier) checkLineage(l *Lineage) error {
	m, err := vf.ev.Manifest(l.GeneratorDigest)
	if err != nil {
		vf.bad("lineage.generatorDigest: %v", err)
		return nil
	}
	receipt, err := vf.ev.Receipt(l.ReceiptDigest)
	if err != nil {
		vf.bad("lineage.receiptDigest: %v", err)
		return nil
	}
	if d, _ := receipt["manifestDigest"].(string); d != l.GeneratorDigest {
		vf.bad("lineage.receiptDigest: receipt %s ran manifest %s, not the generator %s", l.ReceiptDigest, d, l.GeneratorDigest)
		return nil
	}
	if o, _ := receipt["outcome"].(string); o != "complete" {
		vf.bad("lineage.receiptDigest: the generator run ended %s", o)
	}
	return vf.replay("lineage", receipt, m)
}

// checkBinding: a complete foundry's account lists exactly the report's
// runs in admission order: generator, each candidate's cases, holdout.
func (vf *verifier) checkBinding(r *Report) {
	a := r.Budget
	if a.Activity != ActivityFoundry {
		vf.bad("budget.activity: claimed %q, a foundry account is %q", a.Activity, ActivityFoundry)
	}
	if a.Refused != nil {
		vf.bad("budget.outcome: a report embeds only a complete account, this one is exhausted")
	}
	want := reportRuns(r)
	if len(a.Runs) != len(want) {
		vf.bad("budget.runs: the account charges %d runs, the report records %d", len(a.Runs), len(want))
	}
	for i := 0; i < len(a.Runs) && i < len(want); i++ {
		if got := (reportRun{a.Runs[i].Manifest, a.Runs[i].Receipt}); got != want[i] {
			vf.bad("budget.runs[%d]: charges manifest %s receipt %s, the report's run %d is manifest %s receipt %s",
				i, got.manifest, got.receipt, i, want[i].manifest, want[i].receipt)
		}
	}
}

// reportRun is a run a report records: the manifest run and its receipt.
type reportRun struct{ manifest, receipt string }

// reportRuns lists the runs of report r in admission order: generator,
// each candidate's cases, holdout.
func reportRuns(r *Report) []reportRun {
	var runs []reportRun
	if r.Lineage != nil {
		runs = append(runs, reportRun{r.Lineage.GeneratorDigest, r.Lineage.ReceiptDigest})
	}
	for i := range r.Candidates {
		for k := range r.Candidates[i].Cases {
			runs = append(runs, reportRun{r.Candidates[i].ManifestDigest, r.Candidates[i].Cases[k].ReceiptDigest})
		}
	}
	for k := range r.Holdout.Cases {
		runs = append(runs, reportRun{r.Promoted, r.Holdout.Cases[k].ReceiptDigest})
	}
	return runs
}

// checkCharges: each ceiling is its manifest's declared budget and each
// charge what its receipt records; a refusal names a stored manifest with
// that ceiling.
func (vf *verifier) checkCharges(label string, a *Account) {
	for i := range a.Runs {
		vf.checkCharge(fmt.Sprintf("%s.runs[%d]", label, i), &a.Runs[i])
	}
	if a.Refused != nil {
		at := label + ".refused"
		if m, err := vf.ev.Manifest(a.Refused.Manifest); err != nil {
			vf.bad("%s.manifest: %v", at, err)
		} else {
			vf.checkCeiling(at, a.Refused.Ceiling, a.Refused.Manifest, m)
		}
	}
}

// checkCharge checks one charged run, recorded at at, against its
// manifest and receipt.
func (vf *verifier) checkCharge(at string, run *BudgetRun) {
	m, err := vf.ev.Manifest(run.Manifest)
	if err != nil {
		vf.bad("%s.manifest: %v", at, err)
		return
	}
	vf.checkCeiling(at, run.Ceiling, run.Manifest, m)
	receipt, err := vf.ev.Receipt(run.Receipt)
	if err != nil {
		vf.bad("%s.receipt: %v", at, err)
		return
	}
	if d, _ := receipt["manifestDigest"].(string); d != run.Manifest {
		vf.bad("%s.receipt: receipt %s ran manifest %s, not %s", at, run.Receipt, d, run.Manifest)
		return
	}
	w := evidence.ReceiptWork(receipt)
	if got := (Ceiling{Work: w.Units, Attempts: w.AgentCalls}); got != run.Charged {
		vf.bad("%s.charged: claimed {work %d, attempts %d}, the receipt records {work %d, attempts %d}", at, run.Charged.Work, run.Charged.Attempts, got.Work, got.Attempts)
	}
}

// checkCeiling: the claimed ceiling is the one manifest m, stored under
// digest, declares.
func (vf *verifier) checkCeiling(at string, claimed Ceiling, digest string, m *manifest.Manifest) {
	if c := ceilingOf(m); c != claimed {
		vf.bad("%s.ceiling: claimed {work %d, attempts %d}, manifest %s declares {work %d, attempts %d}", at, claimed.Work, claimed.Attempts, digest, c.Work, c.Attempts)
	}
}

// VerifyAccount verifies a standalone habitat account, such as the one an
// exhausted foundry leaves: its arithmetic (a parse error when it does not
// hold), that it is a foundry account, every ceiling and charge against
// the store, and an offline replay of every admitted run.
func VerifyAccount(ctx context.Context, v any, ev evidence.Store) (*Verification, error) {
	a, err := ParseAccount(v, "")
	if err != nil {
		return nil, err
	}
	d, err := canon.Digest(v)
	if err != nil {
		return nil, err
	}
	vf := &verifier{ctx: ctx, ev: ev, out: &Verification{Digest: d, Outcome: "complete"}}
	if a.Refused != nil {
		vf.out.Outcome = "exhausted"
	}
	if a.Activity != ActivityFoundry {
		vf.bad("activity: claimed %q, a foundry account is %q", a.Activity, ActivityFoundry)
	}
	vf.checkCharges("account", a)
	if err := vf.replayRuns(a); err != nil {
		return nil, err
	}
	vf.out.OK = len(vf.out.Mismatches) == 0
	return vf.out, nil
}

// replayRuns replays every run of account a offline whose manifest and
// receipt the store holds and agree; checkCharges reported the others.
func (vf *verifier) replayRuns(a *Account) error {
	for i := range a.Runs {
		run := &a.Runs[i]
		m, err1 := vf.ev.Manifest(run.Manifest)
		receipt, err2 := vf.ev.Receipt(run.Receipt)
		if err1 != nil || err2 != nil {
			continue // already reported by checkCharges
		}
		if rd, _ := receipt["manifestDigest"].(string); rd != run.Manifest {
			continue
		}
		if err := vf.replay(fmt.Sprintf("account.runs[%d]", i), receipt, m); err != nil {
			return err
		}
	}
	return nil
}
