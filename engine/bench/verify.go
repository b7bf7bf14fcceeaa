package bench

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/evidence"
	"github.com/algal-assay/assay/engine/manifest"
	"golang.org/x/sync/errgroup"
)

// Verification is the outcome of Verify.
type Verification = evidence.Verification

// Verify checks a report value: strict parse, recomputed digests, every
// pass claim (under the recorded scorer), every aggregate, the axis values
// and the Pareto set; then each case against its stored receipt (the
// claimed manifest, args, outcome, outputs, work and usage) and an offline
// replay of that receipt. A malformed report is an error; a report that
// parses but does not hold is a Verification with mismatches. Cases are
// checked concurrently, so ev must be safe for concurrent use.
func Verify(ctx context.Context, v any, ev evidence.Store) (*Verification, error) {
	r, err := ParseReport(v)
	if err != nil {
		return nil, err
	}
	return VerifyParsed(ctx, r, v, ev)
}

// VerifyParsed is Verify of a report its caller has already parsed: r
// must be ParseReport(v), which a caller that folds the report too (a
// run in parts' verify phase, ci verify) holds anyway, so the report is
// not parsed twice. r is only read.
func VerifyParsed(ctx context.Context, r *Report, v any, ev evidence.Store) (*Verification, error) {
	out := &Verification{Digest: r.Digest}
	if err := out.CheckDigest(v.(map[string]any)); err != nil {
		return nil, err
	}
	if w, err := WorkloadDigest(r.Cases); err != nil {
		return nil, err
	} else if w != r.Workload {
		out.Bad("workload: claimed %s, computed %s", r.Workload, w)
	}
	// A system's own checks run here, in order; its cases are checked
	// afterwards on a bounded pool, each case keeping its mismatches in its
	// own slot, and everything is joined in report order, so the
	// verification (and the error, the lowest-placed one) is the same
	// whatever the concurrency.
	systemBad := make([][]string, len(r.Systems))
	var checks []caseCheck
	for si := range r.Systems {
		bad := func(format string, a ...any) { systemBad[si] = append(systemBad[si], fmt.Sprintf(format, a...)) }
		checks = append(checks, checkSystem(r, si, ev, bad)...)
	}
	if err := runChecks(ctx, r, checks, ev); err != nil {
		return nil, err
	}
	join(out, systemBad, checks)
	if want := Pareto(r.Systems, r.Prices, r.Axes); strings.Join(want, ",") != strings.Join(r.Pareto, ",") {
		out.Bad("pareto: claimed [%s], the system totals give [%s]", strings.Join(r.Pareto, ","), strings.Join(want, ","))
	}
	out.OK = len(out.Mismatches) == 0
	return out, nil
}

// checkSystem checks system si's own claims (aggregates, axis values, the
// workload's length, its manifest) and returns the checks of its cases,
// none when its manifest cannot be checked against.
func checkSystem(r *Report, si int, ev evidence.Store, bad func(string, ...any)) []caseCheck {
	s := &r.Systems[si]
	at := "systems[" + s.ID + "]"
	// Aggregates must follow from the recorded cases.
	re := SystemResult{ID: s.ID, ManifestDigest: s.ManifestDigest, ManifestKey: s.ManifestKey, Cases: s.Cases}
	re.aggregate()
	compareAggregate(at, s, &re, bad)
	if r.Axes != nil {
		checkAxisValues(r.Axes, s, at, bad)
	}
	if len(s.Cases) != len(r.Cases) {
		bad("%s.cases: %d cases, the workload has %d", at, len(s.Cases), len(r.Cases))
	}
	m := systemManifest(s, at, ev, bad)
	if m == nil {
		return nil
	}
	checks := make([]caseCheck, 0, min(len(s.Cases), len(r.Cases)))
	for ci := range min(len(s.Cases), len(r.Cases)) {
		checks = append(checks, caseCheck{si: si, m: m, want: r.Cases[ci], c: &s.Cases[ci], at: at})
	}
	return checks
}

// checkAxisValues compares system s's claimed axis values with those its
// totals give.
func checkAxisValues(axes []Axis, s *SystemResult, at string, bad func(string, ...any)) {
	want, err := axisValues(axes, s)
	if err != nil {
		bad("%s.axisValues: %v", at, err)
	}
	for _, a := range axes {
		if got := s.AxisValues[a.Name]; want != nil && !sameNumber(got, want[a.Name]) {
			bad("%s.axisValues.%s: claimed %s, computed %s", at, a.Name, num(got), num(want[a.Name]))
		}
	}
}

// systemManifest is the stored manifest system s claims to have run, or
// nil when it cannot be checked against: not stored, or without an
// interface.
func systemManifest(s *SystemResult, at string, ev evidence.Store, bad func(string, ...any)) *manifest.Manifest {
	m, err := ev.Manifest(s.ManifestDigest)
	if err != nil {
		bad("%s.manifestDigest: %v", at, err)
		return nil
	}
	if m.Key != s.ManifestKey {
		bad("%s.manifestKey: claimed %q, manifest says %q", at, s.ManifestKey, m.Key)
	}
	if m.Interface == nil {
		bad("%s: manifest %s declares no interface", at, s.ManifestDigest)
		return nil
	}
	return m
}

// join appends, in report order, each system's own mismatches and then
// those of its cases to out, counting the receipts the cases replayed.
func join(out *Verification, systemBad [][]string, checks []caseCheck) {
	next := 0
	for si := range systemBad {
		out.Mismatches = append(out.Mismatches, systemBad[si]...)
		for ; next < len(checks) && checks[next].si == si; next++ {
			out.Mismatches = append(out.Mismatches, checks[next].found...)
			out.CheckedReceipts += checks[next].receipts
		}
	}
}

// MeasureSink is an evidence store that keeps what Verify measured of each
// receipt it read (Measure under the report's prices), so a caller that
// needs more of a receipt's usage than a report carries (the unknown
// counts) does not measure it again.
type MeasureSink interface {
	Measured(receiptDigest string, usage Tally, attribution map[string]Tally)
}

// caseCheck is one case claim to check and what checking it found.
type caseCheck struct {
	si       int
	m        *manifest.Manifest
	want     Case
	c        *CaseResult
	at       string
	found    []string
	receipts int
}

// runChecks checks the cases on a pool of evidence.DefaultConcurrency()
// workers (ev must be safe for concurrent use, as a workbench is). A
// failure is the lowest-placed one, as a one-at-a-time check would return.
func runChecks(ctx context.Context, r *Report, checks []caseCheck, ev evidence.Store) error {
	var abort evidence.Abort
	var g errgroup.Group
	g.SetLimit(evidence.DefaultConcurrency())
	for i := range checks {
		g.Go(func() error {
			if abort.Skip(i) {
				return nil
			}
			k := &checks[i]
			bad := func(format string, a ...any) { k.found = append(k.found, fmt.Sprintf(format, a...)) }
			n, err := verifyCase(ctx, r, k.m, k.want, k.c, k.at, ev, bad)
			k.receipts = n
			abort.Record(i, err)
			return nil
		})
	}
	_ = g.Wait() // workers return nil; a failure travels through abort
	return abort.Err()
}

func compareAggregate(at string, s, re *SystemResult, bad func(string, ...any)) {
	if s.Passed != re.Passed {
		bad("%s.passed: claimed %d, its cases pass %d", at, s.Passed, re.Passed)
	}
	if s.Total != re.Total {
		bad("%s.total: claimed %d, it has %d cases", at, s.Total, re.Total)
	}
	if s.EffectCalls != re.EffectCalls {
		bad("%s.effectCalls: claimed %d, its cases sum to %d", at, s.EffectCalls, re.EffectCalls)
	}
	if s.Work != re.Work {
		bad("%s.work: claimed %v, its cases sum to %v", at, s.Work, re.Work)
	}
	if !sameTally(s.Usage, re.Usage) {
		bad("%s.usage: claimed %v, its cases sum to %v", at, s.Usage, re.Usage)
	}
	if !sameAttribution(s.Attribution, re.Attribution) {
		bad("%s.attribution: does not match the sum of its cases", at)
	}
}

// verifyCase checks one case claim against the workload and its receipt and
// replays the receipt; it returns how many receipts it replayed. Values
// are compared with canon.Equal, which is evidence.Same (equal canonical
// bytes) without encoding either side.
func verifyCase(ctx context.Context, r *Report, m *manifest.Manifest, want Case, c *CaseResult, sysAt string, ev evidence.Store, bad func(string, ...any)) (int, error) {
	at := sysAt + ".cases[" + c.ID + "]"
	if c.ID != want.ID {
		bad("%s: recorded where the workload has case %q", at, want.ID)
		return 0, nil
	}
	checkCaseClaims(r.Scorer, want, c, at, bad)
	receipt, err := ev.Receipt(c.ReceiptDigest)
	if err != nil {
		bad("%s.receiptDigest: %v", at, err)
		return 0, nil
	}
	if d, _ := receipt["manifestDigest"].(string); d != m.Digest {
		bad("%s: receipt %s ran manifest %s, not %s", at, c.ReceiptDigest, d, m.Digest)
		return 0, nil
	}
	checkRun(m, want, c, receipt, at, bad)
	checkUsage(r.Prices, c, receipt, at, ev, bad)
	// The receipt was read under its digest: a store that remembers what
	// it verified replays each distinct receipt once.
	diffs, err := evidence.ReplayStored(ctx, ev, c.ReceiptDigest, receipt, m)
	if err != nil {
		return 1, err
	}
	for _, d := range diffs {
		bad("%s: replay: %s", at, d)
	}
	return 1, nil
}

// checkCaseClaims checks what follows from case c's record alone: the
// workload's expect, and its pass claim under the scorer.
func checkCaseClaims(sc *evidence.Scorer, want Case, c *CaseResult, at string, bad func(string, ...any)) {
	if !canon.Equal(c.Expect, want.Expect) {
		bad("%s.expect: differs from the workload", at)
	}
	passed, err := sc.Judge(want.ID, want.Args, want.Expect, c.Outcome, c.Outputs)
	if err != nil {
		bad("%s.passed: %v", at, err)
	} else if passed != c.Passed {
		bad("%s.passed: claimed %t, the recorded outputs give %t", at, c.Passed, passed)
	}
}

// checkRun checks case c's claims about its run against its receipt: the
// case's args, outcome, outputs and work.
func checkRun(m *manifest.Manifest, want Case, c *CaseResult, receipt map[string]any, at string, bad func(string, ...any)) {
	if !canon.Equal(receipt["args"], evidence.CellArgs(m, want.Args)) {
		bad("%s: receipt args differ from the case args", at)
	}
	if o, _ := receipt["outcome"].(string); o != c.Outcome {
		bad("%s.outcome: claimed %q, receipt says %q", at, c.Outcome, o)
	}
	if !canon.Equal(evidence.InterfaceOutputs(m, receipt), c.Outputs) {
		bad("%s.outputs: differ from the receipt", at)
	}
	if w := evidence.ReceiptWork(receipt); w != c.Work {
		bad("%s.work: claimed %v, receipt says %v", at, c.Work, w)
	}
}

// checkUsage measures the receipt's effects under the report's prices
// (handing the measure to ev when it keeps them) and checks case c's
// effect calls, usage and attribution against it.
func checkUsage(prices map[string]Price, c *CaseResult, receipt map[string]any, at string, ev evidence.Store, bad func(string, ...any)) {
	calls, usage, attribution := Measure(receipt, prices)
	if sink, ok := ev.(MeasureSink); ok {
		sink.Measured(c.ReceiptDigest, usage, attribution)
	}
	if calls != c.EffectCalls {
		bad("%s.effectCalls: claimed %d, receipt has %d effects", at, c.EffectCalls, calls)
	}
	if !sameTally(usage, c.Usage) {
		bad("%s.usage: claimed %v, receipt gives %v", at, c.Usage, usage)
	}
	if !sameAttribution(attribution, c.Attribution) {
		bad("%s.attribution: differs from the receipt's effects", at)
	}
}

// sameNumber compares as the canonical form does, so -0 equals 0.
func sameNumber(a, b float64) bool { return a == b || (math.IsNaN(a) && math.IsNaN(b)) }

func num(f float64) string { return string(canon.FormatNumber(nil, f)) }

func sameTally(a, b Tally) bool {
	return a.Calls == b.Calls && a.TokensIn == b.TokensIn && a.TokensOut == b.TokensOut && sameNumber(a.Cost, b.Cost)
}

func sameAttribution(a, b map[string]Tally) bool {
	if len(a) != len(b) {
		return false
	}
	for k, t := range a {
		u, ok := b[k]
		if !ok || !sameTally(t, u) {
			return false
		}
	}
	return true
}
