package foundry

import (
	"fmt"
	"math"
	"slices"

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
	a.record(*p)
	a.pending = nil
	return nil
}

// record adds a charged run to the account and its charge to the totals.
func (a *Account) record(run BudgetRun) {
	a.Runs = append(a.Runs, run)
	a.Charged.Work += run.Charged.Work
	a.Charged.Attempts += run.Charged.Attempts
	a.Charged.Runs++
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
	f := accountField(field)
	m, err := accountRecord(v, f)
	if err != nil {
		return nil, err
	}
	a := &Account{}
	if a.Activity, err = parseActivity(m["activity"], f.at("activity")); err != nil {
		return nil, err
	}
	if a.Limits, err = parseLimits(m["limits"], f.at("limits")); err != nil {
		return nil, err
	}
	if err := a.parseRuns(m["runs"], f); err != nil {
		return nil, err
	}
	if err := a.checkCharged(m["charged"], f.at("charged")); err != nil {
		return nil, err
	}
	if a.Refused, err = a.parseOutcome(m, f); err != nil {
		return nil, err
	}
	return a, nil
}

// accountField is where an account sits in the document that holds it
// ("" for an account file of its own).
type accountField string

// at is the location of the account's member s.
func (f accountField) at(s string) string {
	if f == "" {
		return s
	}
	return string(f) + "." + s
}

// root is the location of the account itself.
func (f accountField) root() string {
	if f == "" {
		return "account"
	}
	return string(f)
}

// accountFields are an account's members, every one required.
var accountFields = []string{"contract", "activity", "limits", "runs", "charged", "outcome", "refused"}

// accountRecord reads the account's object and checks its contract.
func accountRecord(v any, f accountField) (map[string]any, error) {
	m, err := evidence.Closed(v, f.root(), accountFields...)
	if err != nil {
		return nil, err
	}
	// The record is closed both ways: a complete account writes
	// "refused": null rather than leaving it out.
	if err := requireKeys(m, f.root(), accountFields...); err != nil {
		return nil, err
	}
	if m["contract"] != BudgetContract {
		return nil, fail(fault.Parse, f.at("contract"), "must be %s", BudgetContract)
	}
	return m, nil
}

func parseActivity(v any, field string) (string, error) {
	activity, _ := v.(string)
	if !slices.Contains(activities, activity) {
		return "", fail(fault.Parse, field, "must be experiment, foundry or search")
	}
	return activity, nil
}

// parseRuns reads the account's runs in order, admitting each against
// the limits beside what the runs before it were charged.
func (a *Account) parseRuns(v any, f accountField) error {
	rawRuns, ok := v.([]any)
	if !ok || int64(len(rawRuns)) > a.Limits.Runs {
		return fail(fault.Parse, f.at("runs"), "must be a list of at most limits.runs entries")
	}
	for i, rr := range rawRuns {
		rat := f.at(fmt.Sprintf("runs[%d]", i))
		run, err := parseBudgetRun(rr, rat)
		if err != nil {
			return err
		}
		if len(exceeded(a.Limits, a.Charged, run.Ceiling)) > 0 {
			return fail(fault.Parse, rat, "was admitted beyond the limits")
		}
		a.record(run)
	}
	return nil
}

func parseBudgetRun(v any, field string) (BudgetRun, error) {
	r, err := evidence.Closed(v, field, "manifest", "receipt", "ceiling", "charged")
	if err != nil {
		return BudgetRun{}, err
	}
	var run BudgetRun
	if run.Manifest, err = evidence.DigestField(r["manifest"], field+".manifest"); err != nil {
		return BudgetRun{}, err
	}
	if run.Receipt, err = evidence.DigestField(r["receipt"], field+".receipt"); err != nil {
		return BudgetRun{}, err
	}
	if run.Ceiling, err = parseCeiling(r["ceiling"], field+".ceiling"); err != nil {
		return BudgetRun{}, err
	}
	if run.Charged, err = parseCharge(r["charged"], field+".charged", run.Ceiling); err != nil {
		return BudgetRun{}, err
	}
	return run, nil
}

// parseCharge reads what a run of ceiling c was charged.
func parseCharge(v any, field string, c Ceiling) (Ceiling, error) {
	ch, err := evidence.Closed(v, field, "work", "attempts")
	if err != nil {
		return Ceiling{}, err
	}
	var charged Ceiling
	if charged.Work, err = bounded(ch["work"], field+".work", 0, MaxRunWork); err != nil {
		return Ceiling{}, err
	}
	// The runtime refuses an attempt past maxAgentCalls, so attempts
	// never exceed the ceiling; work may, by the last activation.
	if charged.Attempts, err = bounded(ch["attempts"], field+".attempts", 0, c.Attempts); err != nil {
		return Ceiling{}, err
	}
	return charged, nil
}

// checkCharged checks the account's claimed totals against the sum of
// its runs' charges.
func (a *Account) checkCharged(v any, field string) error {
	ch, err := evidence.Closed(v, field, "work", "attempts", "runs")
	if err != nil {
		return err
	}
	if sum := limitsValue(a.Charged); !canon.Equal(ch, sum) {
		return fail(fault.Parse, field, "claimed %s, the runs sum to %s", limitsText(ch), limitsText(sum))
	}
	return nil
}

// parseOutcome reads the account's outcome: complete, with no refusal, or
// exhausted by the refusal it records.
func (a *Account) parseOutcome(m map[string]any, f accountField) (*Refusal, error) {
	switch m["outcome"] {
	case "complete":
		if m["refused"] != nil {
			return nil, fail(fault.Parse, f.at("refused"), "a complete account has no refusal")
		}
		return nil, nil
	case "exhausted":
		return a.parseRefusal(m["refused"], f)
	}
	return nil, fail(fault.Parse, f.at("outcome"), "must be complete or exhausted")
}

// parseRefusal reads a refusal and checks that its ceiling exceeds the
// limits, beside what the runs were charged, and that its reasons name
// exactly those limits.
func (a *Account) parseRefusal(v any, f accountField) (*Refusal, error) {
	rf, err := evidence.Closed(v, f.at("refused"), "manifest", "ceiling", "reasons")
	if err != nil {
		return nil, err
	}
	ref := &Refusal{}
	if ref.Manifest, err = evidence.DigestField(rf["manifest"], f.at("refused.manifest")); err != nil {
		return nil, err
	}
	if ref.Ceiling, err = parseCeiling(rf["ceiling"], f.at("refused.ceiling")); err != nil {
		return nil, err
	}
	want := exceeded(a.Limits, a.Charged, ref.Ceiling)
	if len(want) == 0 {
		return nil, fail(fault.Parse, f.at("refused.ceiling"), "fits within the limits")
	}
	listed, _ := rf["reasons"].([]any)
	if !slices.EqualFunc(listed, want, func(l any, w string) bool { return l == w }) {
		return nil, fail(fault.Parse, f.at("refused.reasons"), "must name exactly the exceeded limits %v", want)
	}
	ref.Reasons = want
	return ref, nil
}

func limitsText(m map[string]any) string {
	b, _ := canon.Encode(m)
	return string(b)
}
