package parts

import (
	"context"
	"crypto/sha256"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/algal-assay/assay/engine/bench"
	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/evidence"
	"github.com/algal-assay/assay/engine/manifest"
	"github.com/algal-assay/assay/harness/gate"
	"github.com/algal-assay/assay/harness/workload"
)

// The aggregate of a bench run in parts is derived, never measured: the
// verify phase (and `ci verify` after it) reads each part's report from
// the run directory, verifies it against the store, checks that it is the
// report of the part's config (its case list, systems, prices, scorer and
// axes) and that its cases consumed the responses they declared, and
// folds it into per-system sums. A system's sums add its parts' totals in
// chunk order (integers exactly, costs as float sums in that order), so
// the aggregate does not depend on how the parts were run. aggregate.json
// is that fold written out; anything that reads it can re-derive it.

// Derivation is what folding a run's parts yields.
type Derivation struct {
	// Report is the workload-level bench report the gates, summary and
	// diffs read: every system's sums over its parts, the Pareto set over
	// them, and case verdicts (ID, Passed, Outcome; the full result only
	// for cases a gate outcomes rule names), with no receipts: every
	// case's for a re-derivation, only those gate messages name for a run
	// (its main job keeps only what it prints).
	Report *bench.Report
	// Value is aggregate.json's canonical value.
	Value        map[string]any
	Verification *evidence.Verification
	// Digests are the part reports' digests, in part order.
	Digests []string
	// Canonical holds, in part order, when DeriveOptions.Canonical asked,
	// the SHA-256 of the canonical form a run writes each part report's
	// value in (canon.Encode of the value parsed, then a newline): a file
	// of that digest is that form (a zero sum: none is).
	Canonical [][sha256.Size]byte
}

// aggregator folds verified parts.
type aggregator struct {
	c       *workload.Compiled
	systems []bench.SystemResult
	index   map[string]int
	chunks  []any // the case-list digest of each chunk, in order
	cases   []bench.Case
	parts   []any
	report  map[string]any // the first part report's prices, scorer and axes values
	axes    []bench.Axis
	prices  map[string]bench.Price
	scorer  *evidence.Scorer
	keep    map[string]map[string]bool // system -> cases kept whole
	// all keeps every case's verdict (ci/diff compares them across runs);
	// otherwise a system keeps only the cases gate messages name: those
	// outcome rules name and its first gate.MaxListedFailures failures.
	all     bool
	failing map[string]int
}

func newAggregator(c *workload.Compiled, all bool) *aggregator {
	a := &aggregator{c: c, index: map[string]int{}, keep: map[string]map[string]bool{}, all: all, failing: map[string]int{}}
	for i, s := range c.Workload.Systems {
		a.index[s.ID] = i
		a.systems = append(a.systems, bench.SystemResult{ID: s.ID, Attribution: map[string]bench.Tally{}})
	}
	for _, r := range c.Workload.Gate.Rules {
		if r.Kind == workload.RuleOutcomes && r.System != "" {
			if a.keep[r.System] == nil {
				a.keep[r.System] = map[string]bool{}
			}
			a.keep[r.System][r.Case] = true
		}
	}
	return a
}

// add folds one verified part report (v is its value as read).
func (a *aggregator) add(p workload.Part, rep *bench.Report, v map[string]any) {
	if a.report == nil {
		// Only these members: the rest of the value (every case of the
		// part) is released with the part.
		a.report = map[string]any{}
		for _, k := range []string{"prices", "scorer", "axes"} {
			if x, ok := v[k]; ok {
				a.report[k] = x
			}
		}
		a.axes, a.prices, a.scorer = rep.Axes, rep.Prices, rep.Scorer
	}
	if p.SystemFrom == 0 {
		a.chunks = append(a.chunks, rep.Workload)
		for _, cs := range rep.Cases {
			a.cases = append(a.cases, bench.Case{ID: cs.ID})
		}
	}
	ids := make([]any, len(rep.Systems))
	for i := range rep.Systems {
		ps := &rep.Systems[i]
		ids[i] = ps.ID
		s := &a.systems[a.index[ps.ID]]
		s.ManifestDigest, s.ManifestKey = ps.ManifestDigest, ps.ManifestKey
		s.Passed += ps.Passed
		s.Total += ps.Total
		s.EffectCalls += ps.EffectCalls
		s.Work.Add(ps.Work)
		bench.AddTally(&s.Usage, ps.Usage)
		keys := make([]string, 0, len(ps.Attribution))
		for k := range ps.Attribution {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, canon.CompareKeys)
		for _, k := range keys {
			t := s.Attribution[k]
			bench.AddTally(&t, ps.Attribution[k])
			s.Attribution[k] = t
		}
		for _, cr := range ps.Cases {
			switch {
			case a.keep[ps.ID][cr.ID]:
			case a.all || !cr.Passed && a.failing[ps.ID] < gate.MaxListedFailures:
				cr = bench.CaseResult{ID: cr.ID, Passed: cr.Passed, Outcome: cr.Outcome}
			default:
				continue
			}
			if !cr.Passed {
				a.failing[ps.ID]++
			}
			s.Cases = append(s.Cases, cr)
		}
	}
	a.parts = append(a.parts, map[string]any{
		"name": p.Name(), "report": p.ReportFile(), "digest": rep.Digest, "workload": rep.Workload,
		"systems": ids, "cases": map[string]any{"from": float64(p.CaseFrom), "to": float64(p.CaseTo)},
	})
}

// GateVerdicts is rep, the report of a derivation that kept every case
// verdict (DeriveOptions.AllCases), with only the verdicts a derivation
// without AllCases keeps: each case an outcome rule names, whole, and
// each system's first gate.MaxListedFailures other failures, in the same
// order. Everything else is rep's; rep is left as it is. A host that
// needs both (ci verify of one run compared case by case) folds the parts
// once, not twice.
func GateVerdicts(c *workload.Compiled, rep *bench.Report) *bench.Report {
	keep := newAggregator(c, false).keep
	out := *rep
	out.Systems = make([]bench.SystemResult, len(rep.Systems))
	for i, s := range rep.Systems {
		failing := 0
		var cases []bench.CaseResult
		for _, cr := range s.Cases {
			if !keep[s.ID][cr.ID] && (cr.Passed || failing >= gate.MaxListedFailures) {
				continue
			}
			if !cr.Passed {
				failing++
			}
			cases = append(cases, cr)
		}
		s.Cases = cases
		out.Systems[i] = s
	}
	return &out
}

// finish computes the axis values, the Pareto set and the digest.
func (a *aggregator) finish() (*bench.Report, map[string]any, error) {
	r := &bench.Report{Cases: a.cases, Systems: a.systems, Prices: a.prices, Scorer: a.scorer, Axes: a.axes}
	var err error
	if r.Workload, err = canon.Digest(a.chunks); err != nil {
		return nil, nil, err
	}
	systems := make([]any, len(r.Systems))
	for i := range r.Systems {
		s := &r.Systems[i]
		if s.AxisValues, err = bench.AxisValues(r.Axes, s); err != nil {
			return nil, nil, err
		}
		sv := s.Aggregate()
		if s.AxisValues != nil {
			av := map[string]any{}
			for k, x := range s.AxisValues {
				av[k] = x
			}
			sv["axisValues"] = av
		}
		systems[i] = sv
	}
	r.Pareto = bench.Pareto(r.Systems, r.Prices, r.Axes)
	pareto := make([]any, len(r.Pareto))
	for i, id := range r.Pareto {
		pareto[i] = id
	}
	v := map[string]any{
		"contract": workload.AggregateContract, "workload": r.Workload, "cases": float64(len(a.cases)),
		"parts": a.parts, "systems": systems, "pareto": pareto,
	}
	for _, k := range []string{"prices", "scorer", "axes"} {
		if x, ok := a.report[k]; ok {
			v[k] = x
		}
	}
	if r.Digest, err = canon.Digest(v); err != nil {
		return nil, nil, err
	}
	v["digest"] = r.Digest
	return r, v, nil
}

// Check checks one part's report rep (parsed from v) as a run's verify
// phase does: it is the report of the part's config cfg, it verifies
// against the store, and its cases consumed the responses they declared.
// An error means the report is not the part's at all. The harness
// supplies it (its verify phase's replay and scripted alignment);
// ConfigDifferences is its first step.
type Check func(ctx context.Context, p workload.Part, rep *bench.Report, v any, cfg *bench.Config) (*Checked, error)

// Checked is what a Check found.
type Checked struct {
	// Receipts counts the receipts replayed; Mismatches name the report
	// file.
	Receipts   int
	Mismatches []string
	// Unknown is the usage the check measured of the receipts whose
	// tokens or cost are unknown, by digest.
	Unknown map[string]*Usage
}

// DeriveOptions say where a derivation takes each part's config from and
// what it keeps.
type DeriveOptions struct {
	// written admits each part's config from the file the run wrote
	// (a run's own verify phase, whose workload no longer holds its case
	// data); otherwise it is compiled from the workload (a re-derivation,
	// which trusts nothing in the directory).
	Written bool
	// allCases keeps every case's verdict.
	AllCases bool
	// Canonical also gives the digest of each part report's value in the
	// canonical form a run writes (Derivation.Canonical), from the value
	// parsed here: a verifier that must hold the file to that form
	// compares its digest instead of parsing it a second time.
	Canonical bool
	// verified are the parts, by number, whose reports this run took
	// from an unfinished run (Leftovers.Take) or a shard (ReadRecord) after
	// checking them.
	Verified map[int]*Verified
}

// Derive verifies every part report in dir (check says how) and folds
// them. A part whose report is missing, does not parse or is not its
// config's report makes the aggregate underivable: that is an error
// naming the file. A part that parses but does not verify is a mismatch.
func Derive(ctx context.Context, c *workload.Compiled, dir string, opt DeriveOptions, check Check) (*Derivation, error) {
	load := ManifestCache()
	a := newAggregator(c, opt.AllCases)
	out := &evidence.Verification{OK: true, Mismatches: []string{}}
	var canonical [][sha256.Size]byte
	if opt.Canonical {
		canonical = make([][sha256.Size]byte, len(c.Parts))
	}
	for i, p := range c.Parts {
		name := p.ReportFile()
		vp := opt.Verified[p.N]
		v, sum, err := readPartReport(filepath.Join(dir, name), vp != nil)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", name, err)
		}
		if opt.Canonical {
			canonical[i] = canonicalSum(v)
		}
		rep, err := bench.ParseReport(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", name, err)
		}
		if vp != nil && sum == vp.Sum {
			// The bytes the resume pre-check verified (Verified says
			// why its result stands).
			if err := bench.Remeasure(rep, vp.measured); err != nil {
				return nil, fmt.Errorf("%s: %v", name, err)
			}
			out.CheckedReceipts += vp.Checked
			a.add(p, rep, v.(map[string]any))
			continue
		}
		var cfg *bench.Config
		if opt.Written {
			cfg, err = bench.LoadConfig(filepath.Join(dir, p.ConfigFile()))
		} else {
			cfg, err = c.PartConfig(p, load)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: the part's config does not admit: %v", name, err)
		}
		pc, err := check(ctx, p, rep, v, cfg)
		if err != nil {
			return nil, err
		}
		out.CheckedReceipts += pc.Receipts
		out.Mismatches = append(out.Mismatches, pc.Mismatches...)
		a.add(p, rep, v.(map[string]any))
	}
	rep, value, err := a.finish()
	if err != nil {
		return nil, err
	}
	out.OK = len(out.Mismatches) == 0
	out.Digest = rep.Digest
	digests := make([]string, len(a.parts))
	for i, p := range a.parts {
		digests[i] = p.(map[string]any)["digest"].(string)
	}
	return &Derivation{Report: rep, Value: value, Verification: out, Digests: digests, Canonical: canonical}, nil
}

// canonicalSum is the SHA-256 of v's canonical form as a run writes it:
// canon.Encode(v) and a newline. The encoding is garbage before the
// part's check makes its own, and the file's bytes are never held beside
// the value (canon.ReadFile maps a large file). A value that does not
// encode has the zero sum, which no file's bytes hash to.
func canonicalSum(v any) (sum [sha256.Size]byte) {
	e, err := canon.Encode(v)
	if err != nil {
		return sum
	}
	h := sha256.New()
	h.Write(e)
	h.Write([]byte{'\n'})
	h.Sum(sum[:0])
	return sum
}

// Verified is what the resume pre-check of a reused part found (or a
// shard's verification record says it found): the
// SHA-256 of the report bytes it checked, the receipts it replayed, and
// the usage it measured that a report does not carry.
//
// The verify phase's check of a part (Check) depends on nothing but
// the report's bytes, the part's config file and the store. When the
// bytes it reads from the run directory are the very bytes the pre-check
// checked (the same digest), its config is the file this run's compile
// phase wrote, from which both read it (the verify phase trusts that file
// for every part), and the store is the one both read, whose objects are
// content-addressed and checked against their digest on every read, then
// checking again can only repeat the pre-check: the pre-check's result is
// the verify phase's. Any other bytes (an edit after the take) are
// checked in full. Nothing read from a file is taken on trust: the
// result kept is what this process computed from the receipts.
type Verified struct {
	Sum     [sha256.Size]byte
	Checked int
	// unknown holds, by receipt digest, the usage of the part's receipts
	// whose tokens or cost are unknown; every other receipt of the
	// part's cases has none (the pre-check measured each of them).
	Unknown map[string]*Usage
}

// Usage is the measured usage of a receipt whose tokens or cost are
// unknown (a live server omitted usage, a model has no price): what a
// report does not carry.
type Usage struct {
	Tally       bench.Tally
	Attribution map[string]bench.Tally
}

// measured is bench.Remeasure's view of the kept usage.
func (v *Verified) measured(digest string) (bench.Tally, map[string]bench.Tally, error) {
	if m := v.Unknown[digest]; m != nil {
		return m.Tally, m.Attribution, nil
	}
	return bench.Tally{}, nil, nil
}

// readPartReport reads and parses a part report; with sum it also gives
// the SHA-256 of the bytes parsed (read onto the heap, not mapped).
func readPartReport(path string, sum bool) (any, [sha256.Size]byte, error) {
	if !sum {
		v, err := canon.ReadFile(path, 0)
		return v, [sha256.Size]byte{}, err
	}
	b, err := canon.ReadBounded(path, 0)
	if err != nil {
		return nil, [sha256.Size]byte{}, err
	}
	v, err := canon.Parse(b, 0)
	if err != nil {
		return nil, [sha256.Size]byte{}, canon.InFile(path, b, err)
	}
	return v, sha256.Sum256(b), nil
}

// ConfigDifferences says how a part's report differs from what its
// config makes: another case list, other systems or manifests, another price
// card, scorer or axes.
func ConfigDifferences(p workload.Part, rep *bench.Report, v map[string]any, cfg *bench.Config) []string {
	var bad []string
	if d, err := bench.WorkloadDigest(cfg.Cases); err != nil || d != rep.Workload {
		bad = append(bad, fmt.Sprintf("its workload is %s, but cases %d to %d of the workload digest to %s", rep.Workload, p.CaseFrom+1, p.CaseTo, d))
	}
	if len(rep.Systems) != len(cfg.Systems) {
		bad = append(bad, fmt.Sprintf("it holds %d systems, but the part has %d", len(rep.Systems), len(cfg.Systems)))
	} else {
		for i, s := range cfg.Systems {
			if rs := rep.Systems[i]; rs.ID != s.ID || rs.ManifestDigest != s.Manifest.Digest {
				bad = append(bad, fmt.Sprintf("systems[%d] is %q (%s), but the part's is %q (%s)", i, rs.ID, rs.ManifestDigest, s.ID, s.Manifest.Digest))
			}
		}
	}
	want := (&bench.Report{Prices: cfg.Prices, Scorer: cfg.Scorer, Axes: cfg.Axes}).Value()
	for _, k := range []string{"prices", "scorer", "axes"} {
		if !sameJSON(v[k], want[k]) {
			bad = append(bad, fmt.Sprintf("its %s is %s, but the part's config gives %s", k, gate.ShortJSON(v[k]), gate.ShortJSON(want[k])))
		}
	}
	return bad
}

func sameJSON(a, b any) bool {
	x, err1 := canon.Encode(a)
	y, err2 := canon.Encode(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}

// ManifestCache reads each manifest file once.
func ManifestCache() bench.ManifestLoader {
	cached := map[string]*manifest.Manifest{}
	return func(path string) (*manifest.Manifest, error) {
		if m, ok := cached[path]; ok {
			return m, nil
		}
		m, err := manifest.ReadFile(path)
		if err == nil {
			cached[path] = m
		}
		return m, err
	}
}
