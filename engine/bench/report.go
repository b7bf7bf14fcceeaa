package bench

import (
	"cmp"
	"math"
	"slices"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/evidence"
	"github.com/algal-assay/assay/engine/expr"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/receipt"
)

// Work is a receipt's work ledger.
type Work = evidence.Work

// Tally is calls, tokens and dollars; it serves both usage (Calls unused)
// and attribution entries.
type Tally struct {
	Calls, TokensIn, TokensOut int64
	Cost                       float64
	// UnknownTokens counts the calls whose server reported no token
	// counts (evidence.TokensUnknown); UnknownCost those calls and the
	// calls of a model the price card has no price for. The sums above
	// then understate what was spent, so tables show the tokens or cost
	// as unknown, never as the 0 they sum to. Reports do not carry them
	// (upstream's tallies are closed): Measure derives them from the
	// receipts, and Remeasure restores them on a parsed report.
	UnknownTokens, UnknownCost int64
}

func (t *Tally) add(o Tally) {
	t.Calls += o.Calls
	t.TokensIn += o.TokensIn
	t.TokensOut += o.TokensOut
	t.Cost += o.Cost
	t.UnknownTokens += o.UnknownTokens
	t.UnknownCost += o.UnknownCost
}

func (t Tally) usageValue() map[string]any {
	return map[string]any{"tokensIn": float64(t.TokensIn), "tokensOut": float64(t.TokensOut), "cost": t.Cost}
}

func (t Tally) attributionValue() map[string]any {
	return map[string]any{"calls": float64(t.Calls), "tokensIn": float64(t.TokensIn), "tokensOut": float64(t.TokensOut), "cost": t.Cost}
}

func attributionValue(m map[string]Tally) map[string]any {
	out := make(map[string]any, len(m))
	for k, t := range m {
		out[k] = t.attributionValue()
	}
	return out
}

// CaseResult is one system's evidence for one case.
type CaseResult struct {
	ID            string
	Passed        bool
	Outcome       string
	Outputs       map[string]any
	Expect        map[string]any
	ReceiptDigest string
	EffectCalls   int64
	Work          Work
	Usage         Tally
	Attribution   map[string]Tally
}

func (c *CaseResult) value() map[string]any {
	return map[string]any{
		"id": c.ID, "passed": c.Passed, "outcome": c.Outcome, "outputs": c.Outputs, "expect": c.Expect,
		"receiptDigest": c.ReceiptDigest, "effectCalls": float64(c.EffectCalls), "work": c.Work.Value(),
		"usage": c.Usage.usageValue(), "attribution": attributionValue(c.Attribution),
	}
}

// SystemResult aggregates one system over the workload.
type SystemResult struct {
	ID             string
	ManifestDigest string
	ManifestKey    string
	Passed, Total  int64
	EffectCalls    int64
	Work           Work
	Usage          Tally
	Attribution    map[string]Tally
	Cases          []CaseResult
	AxisValues     map[string]float64 // only when the config declares axes
}

// Aggregate is the record an axis program sees: the system result without
// its case list.
func (s *SystemResult) Aggregate() map[string]any {
	return map[string]any{
		"id": s.ID, "manifestKey": s.ManifestKey, "manifestDigest": s.ManifestDigest,
		"passed": float64(s.Passed), "total": float64(s.Total), "effectCalls": float64(s.EffectCalls),
		"work": s.Work.Value(), "usage": s.Usage.usageValue(), "attribution": attributionValue(s.Attribution),
	}
}

func (s *SystemResult) value() map[string]any {
	v := s.Aggregate()
	cases := make([]any, len(s.Cases))
	for i := range s.Cases {
		cases[i] = s.Cases[i].value()
	}
	v["cases"] = cases
	if s.AxisValues != nil {
		av := make(map[string]any, len(s.AxisValues))
		for k, x := range s.AxisValues {
			av[k] = x
		}
		v["axisValues"] = av
	}
	return v
}

// aggregate recomputes a system's totals from its cases, in case order so
// floating-point sums are reproducible.
func (s *SystemResult) aggregate() {
	s.Passed, s.Total, s.EffectCalls = 0, int64(len(s.Cases)), 0
	s.Work, s.Usage, s.Attribution = Work{}, Tally{}, map[string]Tally{}
	for i := range s.Cases {
		c := &s.Cases[i]
		if c.Passed {
			s.Passed++
		}
		s.EffectCalls += c.EffectCalls
		s.Work.Add(c.Work)
		s.Usage.add(c.Usage)
		for _, k := range canon.SortedKeys(c.Attribution) {
			t := s.Attribution[k]
			t.add(c.Attribution[k])
			s.Attribution[k] = t
		}
	}
}

// Report is an algal.bench.v1 report.
type Report struct {
	Workload string
	Cases    []Case
	Systems  []SystemResult
	Pareto   []string
	Prices   map[string]Price
	Scorer   *evidence.Scorer
	Axes     []Axis
	Digest   string
}

// Value returns the report as a canonical JSON value, digest included when
// set.
func (r *Report) Value() map[string]any {
	return evidence.WithDigest(r.body(), r.Digest)
}

func (r *Report) body() map[string]any {
	cases := make([]any, len(r.Cases))
	for i, c := range r.Cases {
		cases[i] = c.value()
	}
	systems := make([]any, len(r.Systems))
	for i := range r.Systems {
		systems[i] = r.Systems[i].value()
	}
	pareto := make([]any, len(r.Pareto))
	for i, id := range r.Pareto {
		pareto[i] = id
	}
	v := map[string]any{
		"contract": ReportContract, "workload": r.Workload, "cases": cases,
		"systems": systems, "pareto": pareto,
	}
	if r.Prices != nil {
		pv := make(map[string]any, len(r.Prices))
		for k, p := range r.Prices {
			pv[k] = map[string]any{"input": p.Input, "output": p.Output}
		}
		v["prices"] = pv
	}
	if r.Scorer != nil {
		v["scorer"] = r.Scorer.Envelope
	}
	if r.Axes != nil {
		axes := make([]any, len(r.Axes))
		for i, a := range r.Axes {
			axes[i] = map[string]any{"name": a.Name, "dir": a.Dir, "expr": a.Expr}
		}
		v["axes"] = axes
	}
	return v
}

// Encode returns the canonical bytes of the report.
func (r *Report) Encode() ([]byte, error) { return canon.Encode(r.Value()) }

// WorkloadDigest is the digest of the case list in config order.
func WorkloadDigest(cases []Case) (string, error) {
	l := make([]any, len(cases))
	for i, c := range cases {
		l[i] = c.value()
	}
	return canon.Digest(l)
}

// Measure reads a receipt's effect list into effect calls, usage and
// attribution. The attribution key is the effect's usage.model, else its
// executor, else "unknown"; costs come from the price card (dollars per
// million tokens) and sum in effect order. A call whose tokens are
// unknown, or that spent tokens on a key the card does not price, is
// counted in UnknownTokens / UnknownCost.
func Measure(rec map[string]any, prices map[string]Price) (calls int64, usage Tally, attribution map[string]Tally) {
	attribution = map[string]Tally{}
	effects := receipt.Unchecked(rec).Effects()
	for _, e := range effects {
		key := e.Model
		if key == "" {
			key = e.Executor
		}
		if key == "" {
			key = "unknown"
		}
		tin, tout := int64(e.TokensIn), int64(e.TokensOut)
		cost := 0.0
		p, priced := prices[key]
		if priced {
			cost = (float64(tin)*p.Input + float64(tout)*p.Output) / 1e6
		}
		one := Tally{TokensIn: tin, TokensOut: tout, Cost: cost}
		if e.TokensUnknown {
			one.UnknownTokens, one.UnknownCost = 1, 1
		} else if prices != nil && !priced && tin+tout > 0 {
			one.UnknownCost = 1
		}
		usage.add(one)
		one.Calls = 1
		t := attribution[key]
		t.add(one)
		attribution[key] = t
	}
	return int64(len(effects)), usage, attribution
}

// CostUnknown reports whether the tally's cost is unknown.
func (t Tally) CostUnknown() bool { return t.UnknownCost > 0 }

// Remeasure restores the unknown-usage counts of a parsed report (which
// does not carry them) for every case, attribution entry and system
// total; measured gives a receipt's Measure usage and attribution by its
// storage digest. The report's own numbers are left as they are:
// verification judges those.
func Remeasure(r *Report, measured func(digest string) (usage Tally, attribution map[string]Tally, err error)) error {
	for si := range r.Systems {
		s := &r.Systems[si]
		var total Tally
		attr := map[string]Tally{}
		for ci := range s.Cases {
			c := &s.Cases[ci]
			usage, attribution, err := measured(c.ReceiptDigest)
			if err != nil {
				return err
			}
			c.Usage.UnknownTokens, c.Usage.UnknownCost = usage.UnknownTokens, usage.UnknownCost
			total.UnknownTokens += usage.UnknownTokens
			total.UnknownCost += usage.UnknownCost
			for k, t := range attribution {
				if a, ok := c.Attribution[k]; ok {
					a.UnknownTokens, a.UnknownCost = t.UnknownTokens, t.UnknownCost
					c.Attribution[k] = a
				}
				sa := attr[k]
				sa.UnknownTokens += t.UnknownTokens
				sa.UnknownCost += t.UnknownCost
				attr[k] = sa
			}
		}
		s.Usage.UnknownTokens, s.Usage.UnknownCost = total.UnknownTokens, total.UnknownCost
		for k, t := range attr {
			if a, ok := s.Attribution[k]; ok {
				a.UnknownTokens, a.UnknownCost = t.UnknownTokens, t.UnknownCost
				s.Attribution[k] = a
			}
		}
	}
	return nil
}

// axisValues evaluates every axis over a system aggregate.
func axisValues(axes []Axis, s *SystemResult) (map[string]float64, error) {
	if axes == nil {
		return nil, nil
	}
	agg := s.Aggregate()
	out := make(map[string]float64, len(axes))
	for _, a := range axes {
		v, _, err := a.prog.Eval(agg, AxisFuel)
		if err != nil {
			return nil, fail(fault.AxisInvalid, "axes["+a.Name+"]", "system %q: %s", s.ID, expr.Describe(err))
		}
		f, ok := v.(float64)
		if !ok || math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fail(fault.AxisInvalid, "axes["+a.Name+"]", "system %q: axis returned %s, not a finite number", s.ID, evidence.Describe(v))
		}
		out[a.Name] = f
	}
	return out, nil
}

// criterion is one Pareto axis read off a system: the value and whether
// greater is better.
type criterion struct {
	name string
	up   bool
	get  func(*SystemResult) float64
}

// Criterion names for the default Pareto criteria.
const (
	CriterionPassed = "passed"
	CriterionCost   = "cost"   // with a price card
	CriterionTokens = "tokens" // without one
	CriterionCalls  = "calls"
)

func defaultCriteria(hasPrices bool) []criterion {
	cost := criterion{name: CriterionTokens, get: func(s *SystemResult) float64 { return float64(s.Usage.TokensIn + s.Usage.TokensOut) }}
	if hasPrices {
		cost = criterion{name: CriterionCost, get: func(s *SystemResult) float64 { return s.Usage.Cost }}
	}
	return []criterion{
		{name: CriterionPassed, up: true, get: func(s *SystemResult) float64 { return float64(s.Passed) }},
		cost,
		{name: CriterionCalls, get: func(s *SystemResult) float64 { return float64(s.EffectCalls) }},
	}
}

func axisCriteria(axes []Axis) []criterion {
	out := make([]criterion, len(axes))
	for i, a := range axes {
		name := a.Name
		out[i] = criterion{name: name, up: a.Dir == "up", get: func(s *SystemResult) float64 { return s.AxisValues[name] }}
	}
	return out
}

func (r *Report) criteria() []criterion {
	if r.Axes != nil {
		return axisCriteria(r.Axes)
	}
	return defaultCriteria(r.Prices != nil)
}

// Criterion is one Pareto criterion as a report reader sees it.
type Criterion struct {
	Name string
	Up   bool // greater is better
}

// Criteria are the criteria the report's Pareto set was computed on, in
// order: the declared axes, else passed, cost (tokens without a price
// card) and calls.
func (r *Report) Criteria() []Criterion {
	crit := r.criteria()
	out := make([]Criterion, len(crit))
	for i, c := range crit {
		out[i] = Criterion{Name: c.name, Up: c.up}
	}
	return out
}

// Dominance is one system dominating another: at least as good on every
// criterion and strictly better on Better (criterion names, in criteria
// order).
type Dominance struct {
	By     string
	Better []string
}

// DominatedBy lists the systems that dominate system id, in report order,
// so a report can say why a system is off the Pareto set; nil when id is
// on it (or unknown).
func (r *Report) DominatedBy(id string) []Dominance {
	i := slices.IndexFunc(r.Systems, func(s SystemResult) bool { return s.ID == id })
	if i < 0 {
		return nil
	}
	s := &r.Systems[i]
	crit := r.criteria()
	var out []Dominance
	for i := range r.Systems {
		o := &r.Systems[i]
		if o.ID == s.ID {
			continue
		}
		if better, ok := betterOn(crit, o, s); ok && len(better) > 0 {
			out = append(out, Dominance{By: o.ID, Better: better})
		}
	}
	return out
}

// betterOn names the criteria on which o is better than s, in criteria
// order; atLeast is false when s is better than o on any.
func betterOn(crit []criterion, o, s *SystemResult) (better []string, atLeast bool) {
	atLeast = true
	for _, c := range crit {
		switch d := c.better(o, s); {
		case d < 0:
			atLeast = false
		case d > 0:
			better = append(better, c.name)
		}
	}
	return better, atLeast
}

// dominates reports whether o is at least as good as s on every
// criterion and strictly better on one.
func dominates(crit []criterion, o, s *SystemResult) bool {
	better, atLeast := betterOn(crit, o, s)
	return atLeast && len(better) > 0
}

// better compares a and b on one criterion: >0 when a is better.
func (c criterion) better(a, b *SystemResult) int {
	x, y := c.get(a), c.get(b)
	if c.up {
		return cmp.Compare(x, y)
	}
	return cmp.Compare(y, x)
}

// Pareto returns the non-dominated systems, best first: a system is
// dominated when another is at least as good on every criterion and
// strictly better on one. Survivors sort by the criteria in order, then by
// id, so ties are deterministic.
func Pareto(systems []SystemResult, prices map[string]Price, axes []Axis) []string {
	crit := defaultCriteria(prices != nil)
	if axes != nil {
		crit = axisCriteria(axes)
	}
	var kept []*SystemResult
	for i := range systems {
		if !dominatedIn(systems, i, crit) {
			kept = append(kept, &systems[i])
		}
	}
	slices.SortFunc(kept, func(a, b *SystemResult) int {
		for _, c := range crit {
			if d := c.better(a, b); d != 0 {
				return -d
			}
		}
		return cmp.Compare(a.ID, b.ID)
	})
	ids := make([]string, len(kept))
	for i, s := range kept {
		ids[i] = s.ID
	}
	return ids
}

// dominatedIn reports whether another of systems (not one under the same
// id) dominates systems[i].
func dominatedIn(systems []SystemResult, i int, crit []criterion) bool {
	for j := range systems {
		if i != j && systems[j].ID != systems[i].ID && dominates(crit, &systems[j], &systems[i]) {
			return true
		}
	}
	return false
}

// finish computes the derived parts of a report (workload, aggregates,
// axis values, Pareto set) and its digest.
func (r *Report) finish() error {
	var err error
	if r.Workload, err = WorkloadDigest(r.Cases); err != nil {
		return err
	}
	for i := range r.Systems {
		s := &r.Systems[i]
		s.aggregate()
		if s.AxisValues, err = axisValues(r.Axes, s); err != nil {
			return err
		}
	}
	r.Pareto = Pareto(r.Systems, r.Prices, r.Axes)
	r.Digest, err = canon.Digest(r.body())
	return err
}
