package foundry

import (
	"fmt"
	"math"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/evidence"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/manifest"
)

// The habitat budget: one account for every run of one activity, apart
// from each run's own root budget. Each run reserves its declared ceiling
// (the manifest's maxWork and maxAgentCalls, plus one run) and is admitted
// only when that fits beside what is already charged; afterwards it is
// charged what its receipt records and the rest is released. The first
// refusal is terminal and recorded with the limits it would exceed.
const (
	BudgetContract = "algal.habitat-budget.v1"
	// ActivityFoundry is the activity a foundry account records.
	ActivityFoundry = "foundry"

	MaxBudgetRuns   = 4_096
	MaxCeilingWork  = 100_000_000
	MaxCeilingCalls = 64
	MaxBudgetWork   = MaxBudgetRuns * MaxCeilingWork
	MaxBudgetCalls  = MaxBudgetRuns * MaxCeilingCalls
	// MaxRunWork bounds the work one run may be charged.
	MaxRunWork = 4_294_967_295
)

var activities = []string{"experiment", "foundry", "search"}

// Ceiling is what one run may spend (its reservation) or what it was
// charged.
type Ceiling struct{ Work, Attempts int64 }

func (c Ceiling) value() map[string]any {
	return map[string]any{"work": float64(c.Work), "attempts": float64(c.Attempts)}
}

// BudgetRun is one admitted, charged run.
type BudgetRun struct {
	Manifest string
	Receipt  string
	Ceiling  Ceiling
	Charged  Ceiling
}

// Refusal is the reservation that did not fit.
type Refusal struct {
	Manifest string
	Ceiling  Ceiling
	// Reasons name the exceeded limits in sorted order.
	Reasons []string
}

// Account is an algal.habitat-budget.v1 account.
type Account struct {
	Activity string
	Limits   Limits
	Runs     []BudgetRun
	Charged  Limits // totals: work, attempts, runs
	Refused  *Refusal

	pending *BudgetRun
}

// NewAccount opens an empty account.
func NewAccount(activity string, l Limits) *Account {
	return &Account{Activity: activity, Limits: l}
}

// Exhausted reports whether a reservation was refused.
func (a *Account) Exhausted() bool { return a.Refused != nil }

// exceeded names the limits a reservation of c would exceed after what is
// already charged, in sorted order.
func exceeded(l, charged Limits, c Ceiling) []string {
	var reasons []string
	if charged.Attempts+c.Attempts > l.Attempts {
		reasons = append(reasons, "attempts")
	}
	if charged.Runs+1 > l.Runs {
		reasons = append(reasons, "runs")
	}
	if charged.Work+c.Work > l.Work {
		reasons = append(reasons, "work")
	}
	return reasons
}

// ceilingOf is a manifest's declared ceiling.
func ceilingOf(m *manifest.Manifest) Ceiling {
	return Ceiling{Work: int64(m.Budgets.MaxWork), Attempts: int64(m.Budgets.MaxAgentCalls)}
}

// Reserve reserves m's declared ceiling before its run starts. A refusal
// is recorded as the terminal outcome and returned as BUDGET_EXHAUSTED;
// every later reservation fails too.
func (a *Account) Reserve(m *manifest.Manifest) error {
	if a.pending != nil {
		return fail("INTERNAL", "budget", "the previous run was neither charged nor released")
	}
	if a.Refused != nil {
		return fail(fault.BudgetExhausted, "budget", "habitat budget exhausted: %v", a.Refused.Reasons)
	}
	c := ceilingOf(m)
	if c.Work < 1 || c.Work > MaxCeilingWork || c.Attempts < 0 || c.Attempts > MaxCeilingCalls {
		return fail(fault.Parse, "budget", "manifest %s declares a ceiling outside the account bounds", m.Digest)
	}
	if reasons := exceeded(a.Limits, a.Charged, c); len(reasons) > 0 {
		a.Refused = &Refusal{Manifest: m.Digest, Ceiling: c, Reasons: reasons}
		return fail(fault.BudgetExhausted, "budget", "habitat budget exhausted: %v", reasons)
	}
	a.pending = &BudgetRun{Manifest: m.Digest, Ceiling: c}
	return nil
}

// Charge charges the reserved run what its receipt records and releases
// the rest of the reservation.
func (a *Account) Charge(receiptDigest string, receipt map[string]any) error {
	p := a.pending
	if p == nil {
		return fail("INTERNAL", "budget", "no reservation to charge")
	}
	if d, _ := receipt["manifestDigest"].(string); d != p.Manifest {
		return fail("INTERNAL", "budget", "receipt %s ran manifest %s, not the reserved %s", receiptDigest, d, p.Manifest)
	}
	w := evidence.ReceiptWork(receipt)
	if w.Units > MaxRunWork || w.AgentCalls > p.Ceiling.Attempts {
		return fail("INTERNAL", "budget", "receipt %s records more than its run may be charged", receiptDigest)
	}
	p.Receipt = receiptDigest
	p.Charged = Ceiling{Work: w.Units, Attempts: w.AgentCalls}
	a.Runs = append(a.Runs, *p)
	a.Charged.Work += w.Units
	a.Charged.Attempts += w.AgentCalls
	a.Charged.Runs++
	a.pending = nil
	return nil
}

// Release drops an open reservation of a run that produced no receipt.
func (a *Account) Release() { a.pending = nil }

// Value is the closed record.
func (a *Account) Value() map[string]any {
	runs := make([]any, len(a.Runs))
	for i, r := range a.Runs {
		runs[i] = map[string]any{"manifest": r.Manifest, "receipt": r.Receipt, "ceiling": r.Ceiling.value(), "charged": r.Charged.value()}
	}
	v := map[string]any{
		"contract": BudgetContract, "activity": a.Activity, "limits": limitsValue(a.Limits), "runs": runs,
		"charged": limitsValue(a.Charged), "outcome": "complete", "refused": nil,
	}
	if a.Refused != nil {
		reasons := make([]any, len(a.Refused.Reasons))
		for i, r := range a.Refused.Reasons {
			reasons[i] = r
		}
		v["outcome"] = "exhausted"
		v["refused"] = map[string]any{"manifest": a.Refused.Manifest, "ceiling": a.Refused.Ceiling.value(), "reasons": reasons}
	}
	return v
}

// Encode returns the canonical bytes of the record.
func (a *Account) Encode() ([]byte, error) { return canon.Encode(a.Value()) }

func limitsValue(l Limits) map[string]any {
	return map[string]any{"work": float64(l.Work), "attempts": float64(l.Attempts), "runs": float64(l.Runs)}
}

func bounded(v any, field string, min, max int64) (int64, error) {
	f, ok := v.(float64)
	if !ok || f != math.Trunc(f) || f < float64(min) || f > float64(max) {
		return 0, fail(fault.Parse, field, "must be an integer in %d..%d", min, max)
	}
	return int64(f), nil
}

func parseLimits(v any, field string) (Limits, error) {
	m, err := evidence.Closed(v, field, "work", "attempts", "runs")
	if err != nil {
		return Limits{}, err
	}
	var l Limits
	if l.Work, err = bounded(m["work"], field+".work", 1, MaxBudgetWork); err != nil {
		return Limits{}, err
	}
	if l.Attempts, err = bounded(m["attempts"], field+".attempts", 0, MaxBudgetCalls); err != nil {
		return Limits{}, err
	}
	if l.Runs, err = bounded(m["runs"], field+".runs", 1, MaxBudgetRuns); err != nil {
		return Limits{}, err
	}
	return l, nil
}

func parseCeiling(v any, field string) (Ceiling, error) {
	m, err := evidence.Closed(v, field, "work", "attempts")
	if err != nil {
		return Ceiling{}, err
	}
	var c Ceiling
	if c.Work, err = bounded(m["work"], field+".work", 1, MaxCeilingWork); err != nil {
		return Ceiling{}, err
	}
	if c.Attempts, err = bounded(m["attempts"], field+".attempts", 0, MaxCeilingCalls); err != nil {
		return Ceiling{}, err
	}
	return c, nil
}

// ParseAccount reads an algal.habitat-budget.v1 record strictly and
// recomputes its arithmetic: every run fitted the limits at its turn, the
// totals are the sum of the charges, and a refusal names exactly the
// limits its ceiling exceeds. field prefixes error locations.
func ParseAccount(v any, field string) (*Account, error) {
	at := func(s string) string {
		if field == "" {
			return s
		}
		return field + "." + s
	}
	root := field
	if root == "" {
		root = "account"
	}
	fields := []string{"contract", "activity", "limits", "runs", "charged", "outcome", "refused"}
	m, err := evidence.Closed(v, root, fields...)
	if err != nil {
		return nil, err
	}
	// The record is closed both ways: a complete account writes
	// "refused": null rather than leaving it out.
	if err := requireKeys(m, root, fields...); err != nil {
		return nil, err
	}
	if m["contract"] != BudgetContract {
		return nil, fail(fault.Parse, at("contract"), "must be %s", BudgetContract)
	}
	a := &Account{}
	a.Activity, _ = m["activity"].(string)
	known := false
	for _, k := range activities {
		known = known || k == a.Activity
	}
	if !known {
		return nil, fail(fault.Parse, at("activity"), "must be experiment, foundry or search")
	}
	if a.Limits, err = parseLimits(m["limits"], at("limits")); err != nil {
		return nil, err
	}
	rawRuns, ok := m["runs"].([]any)
	if !ok || int64(len(rawRuns)) > a.Limits.Runs {
		return nil, fail(fault.Parse, at("runs"), "must be a list of at most limits.runs entries")
	}
	for i, rr := range rawRuns {
		rat := at(fmt.Sprintf("runs[%d]", i))
		r, err := evidence.Closed(rr, rat, "manifest", "receipt", "ceiling", "charged")
		if err != nil {
			return nil, err
		}
		var run BudgetRun
		if run.Manifest, err = evidence.DigestField(r["manifest"], rat+".manifest"); err != nil {
			return nil, err
		}
		if run.Receipt, err = evidence.DigestField(r["receipt"], rat+".receipt"); err != nil {
			return nil, err
		}
		if run.Ceiling, err = parseCeiling(r["ceiling"], rat+".ceiling"); err != nil {
			return nil, err
		}
		ch, err := evidence.Closed(r["charged"], rat+".charged", "work", "attempts")
		if err != nil {
			return nil, err
		}
		if run.Charged.Work, err = bounded(ch["work"], rat+".charged.work", 0, MaxRunWork); err != nil {
			return nil, err
		}
		// The runtime refuses an attempt past maxAgentCalls, so attempts
		// never exceed the ceiling; work may, by the last activation.
		if run.Charged.Attempts, err = bounded(ch["attempts"], rat+".charged.attempts", 0, run.Ceiling.Attempts); err != nil {
			return nil, err
		}
		if len(exceeded(a.Limits, a.Charged, run.Ceiling)) > 0 {
			return nil, fail(fault.Parse, rat, "was admitted beyond the limits")
		}
		a.Charged.Work += run.Charged.Work
		a.Charged.Attempts += run.Charged.Attempts
		a.Charged.Runs++
		a.Runs = append(a.Runs, run)
	}
	ch, err := evidence.Closed(m["charged"], at("charged"), "work", "attempts", "runs")
	if err != nil {
		return nil, err
	}
	if ch["work"] != float64(a.Charged.Work) || ch["attempts"] != float64(a.Charged.Attempts) || ch["runs"] != float64(a.Charged.Runs) {
		return nil, fail(fault.Parse, at("charged"), "claimed %s, the runs sum to %s", limitsText(ch), limitsText(limitsValue(a.Charged)))
	}
	switch m["outcome"] {
	case "complete":
		if m["refused"] != nil {
			return nil, fail(fault.Parse, at("refused"), "a complete account has no refusal")
		}
	case "exhausted":
		rf, err := evidence.Closed(m["refused"], at("refused"), "manifest", "ceiling", "reasons")
		if err != nil {
			return nil, err
		}
		ref := &Refusal{}
		if ref.Manifest, err = evidence.DigestField(rf["manifest"], at("refused.manifest")); err != nil {
			return nil, err
		}
		if ref.Ceiling, err = parseCeiling(rf["ceiling"], at("refused.ceiling")); err != nil {
			return nil, err
		}
		want := exceeded(a.Limits, a.Charged, ref.Ceiling)
		if len(want) == 0 {
			return nil, fail(fault.Parse, at("refused.ceiling"), "fits within the limits")
		}
		listed, _ := rf["reasons"].([]any)
		same := len(listed) == len(want)
		for i := 0; same && i < len(want); i++ {
			same = listed[i] == want[i]
		}
		if !same {
			return nil, fail(fault.Parse, at("refused.reasons"), "must name exactly the exceeded limits %v", want)
		}
		ref.Reasons = want
		a.Refused = ref
	default:
		return nil, fail(fault.Parse, at("outcome"), "must be complete or exhausted")
	}
	return a, nil
}

func limitsText(m map[string]any) string {
	b, _ := canon.Encode(m)
	return string(b)
}
