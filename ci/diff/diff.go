package diff

import (
	"cmp"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/algal-assay/assay/engine/bench"
	"github.com/algal-assay/assay/engine/foundry"
	"github.com/algal-assay/assay/report"
)

// The diff's model lives in report (report/diff.go), beside the formats
// that render it; these names keep ci/diff's callers' vocabulary.
type (
	Diff            = report.Diff
	Verdict         = report.DiffVerdict
	Side            = report.DiffSide
	Workload        = report.DiffWorkload
	Bench           = report.DiffBench
	System          = report.DiffSystem
	Dominator       = report.Dominator
	SystemStats     = report.SystemStats
	Flip            = report.Flip
	Foundry         = report.DiffFoundry
	RankPlace       = report.RankPlace
	CandidatePair   = report.CandidatePair
	CandidateStats  = report.CandidateStats
	Promotion       = report.Promotion
	Candidate       = report.Candidate
	Rate            = report.Rate
	Regression      = report.Regression
	Amount          = report.Amount
	Statistics      = report.Statistics
	Margin          = report.Margin
	Repeats         = report.DiffRepeats
	RepeatContender = report.RepeatContender
	RepeatStats     = report.RepeatStats
	FlakyCase       = report.FlakyCase
	Replays         = report.Replays
	Replay          = report.Replay
	GateRule        = report.GateRule
)

// Workload statuses.
const (
	StatusChanged   = report.StatusChanged
	StatusUnchanged = report.StatusUnchanged
	StatusAdded     = report.StatusAdded
	StatusRemoved   = report.StatusRemoved
)

// Case outcomes in a flip; Absent when the case does not exist on a side.
const (
	Pass   = report.Pass
	Fail   = report.Fail
	Absent = report.Absent
)

// Regression measures besides "passed" and the foundry splits.
const (
	MetricCost   = report.MetricCost
	MetricTokens = report.MetricTokens
	MetricCalls  = report.MetricCalls
)

// Options tune a comparison.
type Options struct {
	// BaseLabel and HeadLabel name the two sides in the report (a git ref,
	// a directory); default "base" and "head".
	BaseLabel, HeadLabel string
	// Trim are path prefixes (tree roots, temporary directories) removed
	// from gate messages and positions so the report names files relative
	// to the repository.
	Trim []string
	// Replay, when set, compares archived receipts (see the package doc).
	Replay *ReplayInput
}

// Compute compares base and head. Workloads are matched by name.
func Compute(base, head *Set, opts Options) (*Diff, error) {
	d := &Diff{
		Base: cmp.Or(opts.BaseLabel, "base"), Head: cmp.Or(opts.HeadLabel, "head"),
		Workloads: []*Workload{}, Regressions: []*Regression{}, Problems: []string{}, Notes: []string{},
	}
	trim := trimmer(opts.Trim)
	for _, name := range workloadNames(base, head) {
		w := compareWorkload(base.Lookup(name), head.Lookup(name), trim)
		d.Workloads = append(d.Workloads, w)
		d.Regressions = append(d.Regressions, regressions(w)...)
	}
	for i, s := range []*Set{base, head} {
		d.Notes = append(d.Notes, ignoredNotes(s, []string{d.Base, d.Head}[i])...)
	}
	slices.Sort(d.Notes)
	slices.SortStableFunc(d.Regressions, compareRegressions)
	if opts.Replay != nil {
		r, err := replayArchive(*opts.Replay, trim)
		if err != nil {
			return nil, err
		}
		labelReplays(r, base)
		d.Replays = r
	}
	d.Settle()
	return d, nil
}

// workloadNames are the names of the workloads either side ran, sorted.
func workloadNames(sets ...*Set) []string {
	names := map[string]bool{}
	for _, s := range sets {
		if s == nil {
			continue
		}
		for _, r := range s.Runs {
			names[r.Workload] = true
		}
	}
	return slices.Sorted(maps.Keys(names))
}

// ignoredNotes note the older run directories a side ignored (none for
// a nil side).
func ignoredNotes(s *Set, label string) []string {
	if s == nil {
		return nil
	}
	var out []string
	for _, ig := range s.Ignored {
		out = append(out, "older run directory ignored at "+label+": "+ig)
	}
	return out
}

// compareRegressions orders regressions: pass rates first (a lost case
// outweighs any cost), then totals by relative growth; then by drop, by
// cases lost, and by name.
func compareRegressions(a, b *Regression) int {
	if (a.Amount == nil) != (b.Amount == nil) {
		if a.Amount == nil {
			return -1
		}
		return 1
	}
	if a.Amount != nil {
		if c := cmp.Compare(b.Amount.Relative, a.Amount.Relative); c != 0 {
			return c
		}
	}
	if c := cmp.Compare(b.Drop, a.Drop); c != 0 {
		return c
	}
	if c := cmp.Compare(len(b.Cases), len(a.Cases)); c != 0 {
		return c
	}
	return cmp.Or(strings.Compare(a.Workload, b.Workload), strings.Compare(a.Subject, b.Subject), strings.Compare(a.Metric, b.Metric))
}

func trimmer(prefixes []string) func(string) string {
	var ps []string
	for _, p := range prefixes {
		if p == "" {
			continue
		}
		p = filepath.Clean(p)
		ps = append(ps, p+string(filepath.Separator))
		if abs, err := filepath.Abs(p); err == nil && abs != p {
			ps = append(ps, abs+string(filepath.Separator))
		}
	}
	// Longest first, so a nested root wins over its parent.
	slices.SortFunc(ps, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	return func(s string) string {
		for _, p := range ps {
			s = strings.ReplaceAll(s, p, "")
		}
		return s
	}
}

func side(r *Run) *Side {
	if r == nil {
		return nil
	}
	s := &Side{Slug: r.Slug, Status: r.Status, Passed: r.Passed()}
	s.Verified = r.Verification != nil && r.Verification.OK
	s.Gates = r.Gate != nil && r.Gate.Passed
	return s
}

func compareWorkload(b, h *Run, trim func(string) string) *Workload {
	w := &Workload{Base: side(b), Head: side(h), FailedGates: []GateRule{}, Mismatches: []string{}}
	keepReports(w, b, h)
	w.File = cmp.Or(workloadFile(h, trim), workloadFile(b, trim))
	identify(w, b, h)
	if h != nil {
		addHeadFailures(w, h, trim)
	}
	changed := compareReports(w, b, h)
	addStatistics(w, b, h)
	if w.Repeats = compareRepeats(b, h); w.Repeats != nil && repeatsChanged(w.Repeats) {
		changed = true
	}
	if w.Status == "" {
		w.Status = StatusUnchanged
		if changed || w.Base.Passed != w.Head.Passed || w.Base.Status != w.Head.Status {
			w.Status = StatusChanged
		}
	}
	return w
}

// identify names the workload and its kind from the sides, and says
// whether it was added or removed.
func identify(w *Workload, b, h *Run) {
	switch {
	case b == nil:
		w.Name, w.Kind, w.Status = h.Workload, h.Kind, StatusAdded
	case h == nil:
		w.Name, w.Kind, w.Status = b.Workload, b.Kind, StatusRemoved
	default:
		w.Name, w.Kind = h.Workload, cmp.Or(h.Kind, b.Kind)
	}
}

// addHeadFailures adds the head run's failed gate rules and verification
// mismatches, with paths trimmed.
func addHeadFailures(w *Workload, h *Run, trim func(string) string) {
	if h.Gate != nil {
		for _, g := range h.Gate.Rules {
			if !g.Passed {
				g.At, g.Message = trim(g.At), trim(g.Message)
				w.FailedGates = append(w.FailedGates, g)
			}
		}
	}
	if h.Verification != nil {
		for _, m := range h.Verification.Mismatches {
			w.Mismatches = append(w.Mismatches, trim(m))
		}
	}
}

// keepReports keeps each side's bench or foundry report on the workload
// for the formats that draw them (pr.html, the plot tables).
func keepReports(w *Workload, b, h *Run) {
	if b != nil {
		w.BaseBench, w.BaseFoundry = b.Bench, b.Foundry
	}
	if h != nil {
		w.HeadBench, w.HeadFoundry = h.Bench, h.Foundry
	}
}

// reports are one side's re-derived reports (zero for a side that did
// not run).
type reports struct {
	bench     *bench.Report
	verdicts  []SystemVerdicts
	foundry   *foundry.Report
	exhausted bool
}

func reportsOf(r *Run) reports {
	if r == nil {
		return reports{}
	}
	return reports{r.Bench, r.BenchVerdicts, r.Foundry, r.BudgetExhausted}
}

// compareReports compares the two sides' bench or foundry reports and
// says whether they changed.
func compareReports(w *Workload, b, h *Run) bool {
	br, hr := reportsOf(b), reportsOf(h)
	switch w.Kind {
	case KindBench:
		w.Bench = compareBench(br.bench, hr.bench, br.verdicts, hr.verdicts)
		return benchChanged(w.Bench)
	case KindFoundry:
		w.Foundry = compareFoundry(br.foundry, hr.foundry, br.exhausted, hr.exhausted)
		return foundryChanged(w.Foundry)
	}
	return false
}

func benchStats(s *bench.SystemResult, onPareto bool) *SystemStats {
	return &SystemStats{
		ManifestKey: s.ManifestKey, ManifestDigest: s.ManifestDigest,
		Passed: s.Passed, Total: s.Total, Tokens: s.Usage.TokensIn + s.Usage.TokensOut,
		Cost: s.Usage.Cost, Calls: s.EffectCalls, OnPareto: onPareto,
		TokensUnknown: s.Usage.UnknownTokens, CostUnknown: s.Usage.UnknownCost,
	}
}

func compareBench(b, h *bench.Report, bv, hv []SystemVerdicts) *Bench {
	out := &Bench{Systems: pairSystems(b, h), ParetoBase: []string{}, ParetoHead: []string{}, Joined: []string{}, Left: []string{}, Flips: []Flip{}}
	if b != nil {
		out.ParetoBase = append(out.ParetoBase, b.Pareto...)
		out.HasCost = out.HasCost || b.Prices != nil
	}
	if h != nil {
		out.ParetoHead = append(out.ParetoHead, h.Pareto...)
		out.HasCost = out.HasCost || h.Prices != nil
	}
	if b != nil {
		out.Joined = newIn(out.ParetoHead, out.ParetoBase)
	}
	if h != nil {
		out.Left = newIn(out.ParetoBase, out.ParetoHead)
		addDominators(out.Systems, h)
	}
	if b != nil && h != nil {
		out.Flips = append(out.Flips, systemFlips(b, h, bv, hv)...)
	}
	return out
}

// systemFlips are the cases that flipped for each system both sides ran,
// in head order.
func systemFlips(b, h *bench.Report, bv, hv []SystemVerdicts) []Flip {
	var out []Flip
	for _, s := range h.Systems {
		if findSystem(b, s.ID) != nil {
			out = append(out, benchFlips(s.ID, systemVerdicts(bv, s.ID), systemVerdicts(hv, s.ID))...)
		}
	}
	return out
}

// pairSystems pairs each system's figures on the two sides: head order
// first (what the pull request ships), then systems the head dropped, in
// base order; a system on both sides says how it moved on the Pareto
// front.
func pairSystems(b, h *bench.Report) []*System {
	byID := map[string]*System{}
	var order []*System
	add := func(r *bench.Report, head bool) {
		if r == nil {
			return
		}
		for i := range r.Systems {
			s := &r.Systems[i]
			sys := byID[s.ID]
			if sys == nil {
				sys = &System{ID: s.ID}
				byID[s.ID] = sys
				order = append(order, sys)
			}
			st := benchStats(s, slices.Contains(r.Pareto, s.ID))
			if head {
				sys.Head = st
			} else {
				sys.Base = st
			}
		}
	}
	add(h, true)
	add(b, false)
	systems := []*System{}
	for _, s := range order {
		systems = append(systems, s)
		if s.Base != nil && s.Head != nil {
			s.Pareto = paretoMove(s.Base.OnPareto, s.Head.OnPareto)
		}
	}
	return systems
}

// paretoMove says how a system moved on the Pareto front.
func paretoMove(base, head bool) string {
	switch {
	case base && head:
		return "stays"
	case head:
		return "joined"
	case base:
		return "left"
	}
	return "out"
}

// newIn are the ids of ids not in was, sorted.
func newIn(ids, was []string) []string {
	out := []string{}
	for _, id := range ids {
		if !slices.Contains(was, id) {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// addDominators names, for each system the head runs off its Pareto
// front, the systems that dominate it there.
func addDominators(systems []*System, h *bench.Report) {
	for _, s := range systems {
		s.DominatedBy = []Dominator{}
		if s.Head == nil || s.Head.OnPareto {
			continue
		}
		for _, dm := range h.DominatedBy(s.ID) {
			s.DominatedBy = append(s.DominatedBy, Dominator{By: dm.By, Better: dm.Better})
		}
	}
}

func findSystem(r *bench.Report, id string) *bench.SystemResult {
	for i := range r.Systems {
		if r.Systems[i].ID == id {
			return &r.Systems[i]
		}
	}
	return nil
}

func outcome(passed bool) string {
	if passed {
		return Pass
	}
	return Fail
}

func benchFlips(subject string, base, head []CaseVerdict) []Flip {
	bm := map[string]bool{}
	for _, c := range base {
		bm[c.ID] = c.Passed
	}
	hm := map[string]bool{}
	for _, c := range head {
		hm[c.ID] = c.Passed
	}
	return flips(subject, "", bm, hm)
}

// flips lists the cases present on both sides whose outcome differs,
// sorted by case id. Cases on one side only change the workload, not an
// outcome, and are left to the totals.
func flips(subject, split string, base, head map[string]bool) []Flip {
	var out []Flip
	for _, id := range slices.Sorted(maps.Keys(head)) {
		bp, ok := base[id]
		if !ok || bp == head[id] {
			continue
		}
		out = append(out, Flip{Subject: subject, Case: id, Split: split, Base: outcome(bp), Head: outcome(head[id])})
	}
	return out
}

func benchChanged(b *Bench) bool {
	if len(b.Joined)+len(b.Left)+len(b.Flips) > 0 {
		return true
	}
	for _, s := range b.Systems {
		if s.Base == nil || s.Head == nil || *s.Base != *s.Head {
			return true
		}
	}
	return false
}

func promotion(r *foundry.Report, exhausted bool) *Promotion {
	if r == nil {
		if exhausted {
			return &Promotion{Exhausted: true}
		}
		return nil
	}
	p := &Promotion{Digest: r.Promoted, Candidates: len(r.Candidates),
		Holdout: Rate{Passed: r.Holdout.Passed, Total: r.Holdout.Total}, HoldoutFailing: []string{}}
	for _, c := range r.Holdout.Cases {
		if !c.Passed {
			p.HoldoutFailing = append(p.HoldoutFailing, c.ID)
		}
	}
	slices.Sort(p.HoldoutFailing)
	if c := findCandidate(r, r.Promoted); c != nil {
		p.Key = c.ManifestKey
		p.Validation = Rate{Passed: c.Validation.Passed, Total: c.Validation.Total}
		p.Train = Rate{Passed: c.Train.Passed, Total: c.Train.Total}
	}
	return p
}

func findCandidate(r *foundry.Report, digest string) *foundry.CandidateResult {
	for i := range r.Candidates {
		if r.Candidates[i].ManifestDigest == digest {
			return &r.Candidates[i]
		}
	}
	return nil
}

func compareFoundry(b, h *foundry.Report, bx, hx bool) *Foundry {
	out := &Foundry{Base: promotion(b, bx), Head: promotion(h, hx), Added: []Candidate{}, Removed: []Candidate{}, Revised: []Candidate{}, Candidates: []*CandidatePair{}, Flips: []Flip{},
		BaseRanking: ranking(b), HeadRanking: ranking(h)}
	if out.Base != nil && out.Head != nil {
		out.PromotedChanged = out.Base.Key != out.Head.Key || out.Base.Digest != out.Head.Digest
	}
	if b == nil || h == nil {
		return out
	}
	compareCandidates(out, b, h)
	// Holdout cases run only on the promoted candidate: compare them when
	// the same organism is promoted on both sides.
	if out.Base.Key != "" && out.Base.Key == out.Head.Key {
		out.Flips = append(out.Flips, flips(out.Head.Key, foundry.SplitHoldout, holdoutOutcomes(b), holdoutOutcomes(h))...)
	}
	slices.SortStableFunc(out.Flips, func(a, b Flip) int {
		return cmp.Or(strings.Compare(a.Subject, b.Subject), strings.Compare(a.Case, b.Case))
	})
	return out
}

// compareCandidates pairs the two sides' candidates by key and says
// which were added, revised and removed, and which cases flipped.
func compareCandidates(out *Foundry, b, h *foundry.Report) {
	bk := candidatesByKey(b)
	hk := candidatesByKey(h)
	out.Candidates = pairCandidates(b, h, bk, hk)
	for _, k := range slices.Sorted(maps.Keys(hk)) {
		compareCandidate(out, k, bk[k], hk[k])
	}
	for _, k := range slices.Sorted(maps.Keys(bk)) {
		if _, ok := hk[k]; !ok {
			out.Removed = append(out.Removed, Candidate{Key: k, Digest: bk[k].ManifestDigest})
		}
	}
}

// pairCandidates pairs every candidate key's figures on the two sides,
// by key.
func pairCandidates(b, h *foundry.Report, bk, hk map[string]*foundry.CandidateResult) []*CandidatePair {
	all := maps.Clone(bk)
	maps.Copy(all, hk)
	out := []*CandidatePair{}
	for _, k := range slices.Sorted(maps.Keys(all)) {
		out = append(out, &CandidatePair{Key: k, Base: candidateStats(b, bk[k]), Head: candidateStats(h, hk[k])})
	}
	return out
}

// compareCandidate compares the head's candidate hc under key k with the
// base's bc (nil when the base had none): added, revised, and the cases
// that flipped, each with its split.
func compareCandidate(out *Foundry, k string, bc, hc *foundry.CandidateResult) {
	if bc == nil {
		out.Added = append(out.Added, Candidate{Key: k, Digest: hc.ManifestDigest})
		return
	}
	if bc.ManifestDigest != hc.ManifestDigest {
		out.Revised = append(out.Revised, Candidate{Key: k, Digest: hc.ManifestDigest, Was: bc.ManifestDigest})
	}
	bm, hm := map[string]bool{}, map[string]bool{}
	splits := map[string]string{}
	for _, c := range bc.Cases {
		bm[c.ID] = c.Passed
	}
	for _, c := range hc.Cases {
		hm[c.ID] = c.Passed
		splits[c.ID] = c.Split
	}
	for _, f := range flips(k, "", bm, hm) {
		f.Split = splits[f.Case]
		out.Flips = append(out.Flips, f)
	}
}

// holdoutOutcomes are the holdout's case outcomes by case id.
func holdoutOutcomes(r *foundry.Report) map[string]bool {
	m := map[string]bool{}
	for _, c := range r.Holdout.Cases {
		m[c.ID] = c.Passed
	}
	return m
}

func candidateStats(r *foundry.Report, c *foundry.CandidateResult) *CandidateStats {
	if c == nil {
		return nil
	}
	return &CandidateStats{Digest: c.ManifestDigest, Promoted: c.ManifestDigest == r.Promoted,
		Validation: Rate{Passed: c.Validation.Passed, Total: c.Validation.Total}, Train: Rate{Passed: c.Train.Passed, Total: c.Train.Total}}
}

func candidatesByKey(r *foundry.Report) map[string]*foundry.CandidateResult {
	m := map[string]*foundry.CandidateResult{}
	for i := range r.Candidates {
		c := &r.Candidates[i]
		// Keys are unique in an admitted population; keep the first if not.
		if _, dup := m[c.ManifestKey]; !dup {
			m[c.ManifestKey] = c
		}
	}
	return m
}

func foundryChanged(f *Foundry) bool {
	if f.PromotedChanged || len(f.Added)+len(f.Removed)+len(f.Revised)+len(f.Flips) > 0 {
		return true
	}
	if (f.Base == nil) != (f.Head == nil) {
		return true
	}
	if f.Base == nil {
		return false
	}
	return promotionChanged(*f.Base, *f.Head)
}

// promotionChanged reports whether the promotion differs between the
// sides in anything the comment shows.
func promotionChanged(b, h Promotion) bool {
	if !slices.Equal(b.HoldoutFailing, h.HoldoutFailing) {
		return true
	}
	return b.Key != h.Key || b.Digest != h.Digest || b.Validation != h.Validation || b.Train != h.Train ||
		b.Holdout != h.Holdout || b.Candidates != h.Candidates || b.Exhausted != h.Exhausted
}

// regressions lists what got worse in w, one entry per subject and metric.
func regressions(w *Workload) []*Regression {
	l := &regressionList{workload: w.Name}
	if b := w.Bench; b != nil {
		l.bench(b)
	}
	if f := w.Foundry; f != nil && f.Base != nil && f.Head != nil && !f.Base.Exhausted && !f.Head.Exhausted {
		l.foundry(f)
	}
	return l.out
}

// regressionList collects one workload's regressions.
type regressionList struct {
	workload string
	out      []*Regression
}

// rate adds a regression when a rate dropped or a case flipped to fail
// (of the metric's split, or any for "passed").
func (l *regressionList) rate(subject, metric string, b, h Rate, fl []Flip) {
	cases := []string{}
	for _, f := range fl {
		if f.Subject == subject && f.Regressed() && (metric == "passed" || f.Split == metric) {
			cases = append(cases, f.Case)
		}
	}
	drop := b.Value() - h.Value()
	if drop <= 0 && len(cases) == 0 {
		return
	}
	l.out = append(l.out, &Regression{Workload: l.workload, Subject: subject, Metric: metric, Base: b, Head: h, Drop: max(drop, 0), Cases: cases})
}

// grew adds a regression when a total grew.
func (l *regressionList) grew(subject, metric string, b, h float64) {
	if h <= b {
		return
	}
	a := &Amount{Base: b, Head: h}
	if b > 0 {
		a.Relative = h/b - 1
	}
	l.out = append(l.out, &Regression{Workload: l.workload, Subject: subject, Metric: metric, Cases: []string{}, Amount: a})
}

// bench adds the regressions of every system both sides ran.
func (l *regressionList) bench(b *Bench) {
	for _, s := range b.Systems {
		if s.Base != nil && s.Head != nil {
			l.system(s, b)
		}
	}
}

// system adds a bench system's regressions: its pass rate, its cost (or
// tokens, without prices) and its calls. An unknown total cannot be said
// to have grown (nor not to have): the table shows it as unknown
// instead.
func (l *regressionList) system(s *System, b *Bench) {
	l.rate(s.ID, "passed", Rate{Passed: s.Base.Passed, Total: s.Base.Total}, Rate{Passed: s.Head.Passed, Total: s.Head.Total}, b.Flips)
	switch {
	case b.HasCost:
		if s.Base.CostUnknown == 0 && s.Head.CostUnknown == 0 {
			l.grew(s.ID, MetricCost, s.Base.Cost, s.Head.Cost)
		}
	case s.Base.TokensUnknown == 0 && s.Head.TokensUnknown == 0:
		l.grew(s.ID, MetricTokens, float64(s.Base.Tokens), float64(s.Head.Tokens))
	}
	l.grew(s.ID, MetricCalls, float64(s.Base.Calls), float64(s.Head.Calls))
}

// foundry adds a foundry's regressions: each candidate's validation and
// train rates, and the promoted organism's.
func (l *regressionList) foundry(f *Foundry) {
	for _, c := range f.Candidates {
		if c.Base != nil && c.Head != nil {
			l.rate(c.Key, foundry.SplitValidation, c.Base.Validation, c.Head.Validation, f.Flips)
			l.rate(c.Key, foundry.SplitTrain, c.Base.Train, c.Head.Train, f.Flips)
		}
	}
	if f.Base.Key == f.Head.Key {
		l.rate(f.Head.Key, foundry.SplitHoldout, f.Base.Holdout, f.Head.Holdout, f.Flips)
		return
	}
	// A different organism ships: what matters is whether the shipped
	// candidate's rates got worse, and which holdout cases fail now that
	// did not before.
	var now []Flip
	for _, id := range f.Head.HoldoutFailing {
		if !slices.Contains(f.Base.HoldoutFailing, id) {
			now = append(now, Flip{Subject: "promoted", Case: id, Split: foundry.SplitHoldout, Base: Pass, Head: Fail})
		}
	}
	l.rate("promoted", foundry.SplitValidation, f.Base.Validation, f.Head.Validation, nil)
	l.rate("promoted", foundry.SplitTrain, f.Base.Train, f.Head.Train, nil)
	l.rate("promoted", foundry.SplitHoldout, f.Base.Holdout, f.Head.Holdout, now)
}
