package foundry

import (
	"context"
	"fmt"
	"slices"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/evidence"
	"github.com/algal-assay/assay/engine/manifest"
)

// VerifyDocument verifies any file a foundry verb may leave, dispatching
// on its contract: an algal.search.v1 report, an exhausted habitat
// account, or an algal.foundry.v1 report.
func VerifyDocument(ctx context.Context, v any, ev evidence.Store) (*Verification, error) {
	if m, ok := v.(map[string]any); ok && m["contract"] == SearchContract {
		return VerifySearch(ctx, v, ev)
	}
	return VerifyFile(ctx, v, ev)
}

// VerifySearch checks an algal.search.v1 report: strict parse and the
// recomputed digest; the result verified as an ordinary foundry report;
// for every generation, its generator, its selection evidence claim by
// claim (the result's workload and scorer, no holdout, pass claims,
// aggregates, promotion) and against the stored receipts with offline
// replays, survivor continuity and the exact population, and its
// generator receipt (complete, replayed, its outputs emitting exactly the
// proposals, its args carrying the feedback the previous generation
// implies and otherwise the same args every generation); finally the
// result against the last generation: its population, promotion and
// lineage. A malformed report is an error; one that parses but does not
// hold is a Verification with mismatches.
//
// checkedReceipts counts every replay. Like upstream, each generation's
// winner has its first selection receipt replayed once more as the
// generation's winner evidence, so the count agrees with upstream's.
func VerifySearch(ctx context.Context, v any, ev evidence.Store) (*Verification, error) {
	s, err := ParseSearchReport(v)
	if err != nil {
		return nil, err
	}
	raw := v.(map[string]any)
	vf := &verifier{ctx: ctx, ev: ev, out: &Verification{Digest: s.Digest}}
	if err := vf.out.CheckDigest(raw); err != nil {
		return nil, err
	}

	res, err := Verify(ctx, raw["result"], ev)
	if err != nil {
		return nil, err
	}
	vf.out.CheckedReceipts += res.CheckedReceipts
	for _, m := range res.Mismatches {
		vf.bad("result: %s", m)
	}
	if s.Result.Budget != nil {
		vf.bad("result.budget: a search runs without a habitat budget, yet its result embeds an account")
	}

	gm := vf.manifest("generatorDigest", s.GeneratorDigest, "")
	receipts := make([]map[string]any, len(s.Generations))
	for i := range s.Generations {
		g := &s.Generations[i]
		at := fmt.Sprintf("generations[%d]", i)
		if g.GeneratorDigest != s.GeneratorDigest {
			vf.bad("%s.generatorDigest: claimed %s, the search's generator is %s", at, g.GeneratorDigest, s.GeneratorDigest)
		}
		vf.checkGenerationClaims(at, g, s.Result)
		vf.checkPopulation(at, g, s.previous(i))
		if err := vf.checkGenerationReceipts(at, g); err != nil {
			return nil, err
		}
		if gm != nil {
			if receipts[i], err = vf.generatorRun(at, gm, g); err != nil {
				return nil, err
			}
		}
	}
	if gm != nil {
		vf.checkProposals(s, gm, receipts)
		vf.checkFeedback(s, gm, receipts)
	}
	vf.checkResult(s)
	vf.out.OK = len(vf.out.Mismatches) == 0
	return vf.out, nil
}

// checkGenerationClaims checks what follows from a generation's recorded
// cases alone, judged with the result's scorer: every candidate records
// the result's selection workload in order, no holdout evidence, true pass
// claims, aggregates that sum its cases, and the deterministic winner.
func (vf *verifier) checkGenerationClaims(at string, g *Generation, result *Report) {
	recomputed := make([]CandidateResult, len(g.Candidates))
	seen := map[string]bool{}
	for i := range g.Candidates {
		c := &g.Candidates[i]
		cat := at + ".candidates[" + c.ManifestDigest + "]"
		if seen[c.ManifestDigest] {
			vf.bad("%s: listed twice", cat)
		}
		seen[c.ManifestDigest] = true
		vf.checkGenerationCases(cat, c, result)
		recomputed[i] = vf.checkSums(cat, c)
	}
	if !seen[g.Promoted] {
		vf.bad("%s.promoted: %s is not a candidate of the generation", at, g.Promoted)
	} else if want := promoteValid(recomputed); want != "" && want != g.Promoted {
		vf.bad("%s.promoted: claimed %s, the recorded cases promote %s", at, g.Promoted, want)
	}
}

// checkGenerationCases checks candidate c's cases in a generation, at cat:
// the result's selection workload in order, no holdout evidence, and true
// pass claims under the result's scorer.
func (vf *verifier) checkGenerationCases(cat string, c *CandidateResult, result *Report) {
	workload := result.Candidates[0].Cases
	if len(c.Cases) != len(workload) {
		vf.bad("%s.cases: %d cases, the result's workload has %d", cat, len(c.Cases), len(workload))
	}
	for k := range c.Cases {
		cs := &c.Cases[k]
		if cs.Split == SplitHoldout {
			vf.bad("%s.cases[%s].split: holdout evidence leaked into generation selection", cat, cs.ID)
		} else if k < len(workload) && !sameCase(cs, &workload[k]) {
			vf.bad("%s.cases[%s]: differs from case %q of the result's workload (id, split, args or expect)", cat, cs.ID, workload[k].ID)
		}
		vf.checkPass(result.Scorer, cat+".cases["+cs.ID+"]", cs)
	}
}

// checkPopulation: every proposal was evaluated and, after generation 0,
// the population is exactly the previous winner followed by the new
// proposals, duplicates collapsed. Generation 0's survivors are the
// config's file candidates, which the report does not name.
func (vf *verifier) checkPopulation(at string, g, prev *Generation) {
	got := make([]string, len(g.Candidates))
	for i := range g.Candidates {
		got[i] = g.Candidates[i].ManifestDigest
	}
	missing := false
	for k, d := range g.Proposed {
		if !slices.Contains(got, d) {
			vf.bad("%s.proposed[%d]: %s was not evaluated", at, k, d)
			missing = true
		}
	}
	if prev == nil {
		return
	}
	if !slices.Contains(got, prev.Promoted) {
		vf.bad("%s.candidates: the previous winner %s did not survive", at, prev.Promoted)
		return
	}
	if want := survivorsThen(prev.Promoted, g.Proposed); !missing && !slices.Equal(got, want) {
		vf.bad("%s.candidates: the population is not the previous winner followed by this generation's proposals (%d candidates, want %d)", at, len(got), len(want))
	}
}

// survivorsThen is the winner followed by the proposals, first
// occurrence of each digest kept.
func survivorsThen(winner string, proposed []string) []string {
	out := []string{winner}
	for _, d := range proposed {
		if !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

// checkGenerationReceipts checks each case against its stored receipt and
// replays it, then replays the winner's first receipt once more as the
// generation's winner evidence (upstream's count includes that replay).
func (vf *verifier) checkGenerationReceipts(at string, g *Generation) error {
	for i := range g.Candidates {
		c := &g.Candidates[i]
		cat := at + ".candidates[" + c.ManifestDigest + "]"
		m := vf.manifest(cat, c.ManifestDigest, c.ManifestKey)
		if m == nil {
			continue
		}
		for k := range c.Cases {
			if err := vf.checkReceipt(cat+".cases["+c.Cases[k].ID+"]", m, &c.Cases[k]); err != nil {
				return err
			}
		}
	}
	for i := range g.Candidates {
		c := &g.Candidates[i]
		if c.ManifestDigest != g.Promoted {
			continue
		}
		m, err1 := vf.ev.Manifest(c.ManifestDigest)
		receipt, err2 := vf.ev.Receipt(c.Cases[0].ReceiptDigest)
		if err1 != nil || err2 != nil || m.Digest != c.ManifestDigest {
			return nil // already named by the case checks
		}
		if rd, _ := receipt["manifestDigest"].(string); rd != m.Digest {
			return nil
		}
		// Divergences were named when the case itself replayed.
		if _, err := vf.ev.Replay(vf.ctx, receipt, m); err != nil {
			return err
		}
		vf.out.CheckedReceipts++
		return nil
	}
	return nil
}

// generatorRun loads, checks and replays a generation's generator run; it
// returns the receipt, or nil when it cannot stand as the generator's.
func (vf *verifier) generatorRun(at string, gm *manifest.Manifest, g *Generation) (map[string]any, error) {
	receipt, err := vf.ev.Receipt(g.ReceiptDigest)
	if err != nil {
		vf.bad("%s.receiptDigest: %v", at, err)
		return nil, nil
	}
	if d, _ := receipt["manifestDigest"].(string); d != gm.Digest {
		vf.bad("%s.receiptDigest: receipt %s ran manifest %s, not the generator %s", at, g.ReceiptDigest, d, gm.Digest)
		return nil, nil
	}
	if o, _ := receipt["outcome"].(string); o != "complete" {
		vf.bad("%s.receiptDigest: the generator run ended %s", at, o)
	}
	if err := vf.replay(at+".receiptDigest", receipt, gm); err != nil {
		return nil, err
	}
	return receipt, nil
}

// source is where a generator's proposals sit in its interface outputs:
// an output holding the list, or a field of an output holding an object.
type source struct{ output, field string }

// proposalSources lists every manifest list the outputs hold, by source,
// each re-admitted through the manifest parser to its digests.
func proposalSources(outputs map[string]any) map[source][]string {
	out := map[source][]string{}
	add := func(s source, v any) {
		l, ok := v.([]any)
		if !ok || len(l) == 0 || len(l) > MaxCandidates {
			return
		}
		ds := make([]string, len(l))
		for i, e := range l {
			m, err := manifest.ParseValue(e)
			if err != nil {
				return
			}
			ds[i] = m.Digest
		}
		out[s] = ds
	}
	for _, name := range canon.SortedKeys(outputs) {
		v := outputs[name]
		add(source{output: name}, v)
		if obj, ok := v.(map[string]any); ok {
			for _, k := range canon.SortedKeys(obj) {
				add(source{name, k}, obj[k])
			}
		}
	}
	return out
}

// checkProposals re-derives each generation's proposals from its
// generator receipt's interface outputs: some output (or field of one)
// must emit exactly the recorded digests, the same source in every
// generation. The report does not record the config's output and field,
// so the source is whatever holds them.
func (vf *verifier) checkProposals(s *SearchReport, gm *manifest.Manifest, receipts []map[string]any) {
	var common map[source]bool
	for i, receipt := range receipts {
		if receipt == nil {
			continue
		}
		at := fmt.Sprintf("generations[%d].proposed", i)
		match := map[source]bool{}
		for src, ds := range proposalSources(evidence.InterfaceOutputs(gm, receipt)) {
			if slices.Equal(ds, s.Generations[i].Proposed) {
				match[src] = true
			}
		}
		if len(match) == 0 {
			vf.bad("%s: the generator receipt %s does not emit these manifests", at, s.Generations[i].ReceiptDigest)
			continue
		}
		if common != nil {
			kept := map[source]bool{}
			for src := range match {
				if common[src] {
					kept[src] = true
				}
			}
			if len(kept) == 0 {
				vf.bad("%s: read from a different generator output than the earlier generations", at)
				kept = match
			}
			match = kept
		}
		common = match
	}
}

// interfaceArg reads interface input p's value from a receipt's cell-keyed
// args.
func interfaceArg(receipt map[string]any, p manifest.InterfacePort) (any, bool) {
	args, _ := receipt["args"].(map[string]any)
	cell, _ := args[p.Cell].(map[string]any)
	v, ok := cell[p.Port]
	return v, ok
}

// checkFeedback checks the chain between generations through the
// generator's args: one interface input carries, in every generation, the
// feedback the previous generation implies (null in generation 0), and
// every other input is the same in every generation. The report does not
// name the feedback input; it is the input that carries the feedback
// longest, the first in interface order on a tie.
func (vf *verifier) checkFeedback(s *SearchReport, gm *manifest.Manifest, receipts []map[string]any) {
	inputs := gm.Interface.Inputs
	if len(inputs) == 0 {
		vf.bad("generatorDigest: the generator %s declares no interface input to receive feedback", gm.Digest)
		return
	}
	carrier, broken := feedbackCarrier(inputs, receipts, wantedFeedback(s))
	if broken == 0 {
		vf.bad("generations[0].receiptDigest: no generator input received the null feedback of generation 0")
		return
	}
	if broken > 0 {
		vf.bad("generations[%d].receiptDigest: no generator input received the feedback generation %d implies (the chain breaks here)", broken, broken-1)
		return
	}
	for p, in := range inputs {
		if p == carrier {
			continue
		}
		if g, first := firstChange(in, receipts); g >= 0 {
			vf.bad("generations[%d].receiptDigest: generator input %q differs from generation %d; only the feedback input %q may change", g, in.Name, first, inputs[carrier].Name)
		}
	}
}

// wantedFeedback is the feedback each generation of s implies for the
// next one's generator run (null for generation 0).
func wantedFeedback(s *SearchReport) []any {
	want := make([]any, len(s.Generations))
	for g := range want {
		want[g] = SearchFeedback(g, s.previous(g))
	}
	return want
}

// previous is the generation before generation g, nil for the first.
func (s *SearchReport) previous(g int) *Generation {
	if g == 0 {
		return nil
	}
	return &s.Generations[g-1]
}

// feedbackCarrier finds the input that carries the wanted feedback
// through the generator runs (receipts, nil where a run did not load):
// the first input, in interface order, that carries it in every run
// (broken is -1), or else the one that carries it longest, broken being
// the generation where its chain breaks.
func feedbackCarrier(inputs []manifest.InterfacePort, receipts []map[string]any, want []any) (carrier, broken int) {
	carrier, broken = 0, -1
	for p, in := range inputs {
		failAt := chainBreak(in, receipts, want)
		if failAt == len(want) {
			return p, -1
		}
		if failAt > broken {
			carrier, broken = p, failAt
		}
	}
	return carrier, broken
}

// chainBreak is the first generation whose run did not receive the
// wanted feedback in input in, or len(want) when every run did.
func chainBreak(in manifest.InterfacePort, receipts []map[string]any, want []any) int {
	for g, receipt := range receipts {
		if receipt == nil {
			continue
		}
		if v, ok := interfaceArg(receipt, in); !ok || !canon.Equal(v, want[g]) {
			return g
		}
	}
	return len(want)
}

// firstChange finds the first generator run whose value of input in
// differs from the first run's that loaded, returning both generations,
// or -1 when every run received the same value.
func firstChange(in manifest.InterfacePort, receipts []map[string]any) (g, first int) {
	first = -1
	var v0 any
	var ok0 bool
	for g, receipt := range receipts {
		if receipt == nil {
			continue
		}
		v, ok := interfaceArg(receipt, in)
		if first < 0 {
			first, v0, ok0 = g, v, ok
			continue
		}
		if ok != ok0 || !canon.Equal(v, v0) {
			return g, first
		}
	}
	return -1, first
}

// checkResult: the final epoch ran the last winner followed by the last
// proposals, promoted the last winner, and names the last generator run
// as its lineage.
func (vf *verifier) checkResult(s *SearchReport) {
	last := &s.Generations[len(s.Generations)-1]
	r := s.Result
	got := make([]string, len(r.Candidates))
	for i := range r.Candidates {
		got[i] = r.Candidates[i].ManifestDigest
	}
	if want := survivorsThen(last.Promoted, last.Proposed); !slices.Equal(got, want) {
		vf.bad("result.candidates: the final population is not the last winner followed by the last proposals (%d candidates, want %d)", len(got), len(want))
	}
	if r.Promoted != last.Promoted {
		vf.bad("result.promoted: claimed %s, the last generation promoted %s", r.Promoted, last.Promoted)
	}
	switch {
	case r.Lineage == nil:
		vf.bad("result.lineage: missing; it must name the last generator run")
	case r.Lineage.GeneratorDigest != last.GeneratorDigest || r.Lineage.ReceiptDigest != last.ReceiptDigest:
		vf.bad("result.lineage: names generator %s run %s, the last generation ran %s run %s",
			r.Lineage.GeneratorDigest, r.Lineage.ReceiptDigest, last.GeneratorDigest, last.ReceiptDigest)
	}
}
