package report

// The pull-request check's model: a Diff of two sets of runs, the pull
// request's base and head, as ci/diff computes it (ci/diff.Compute). The
// comment (pr_md.go), the job summary (pr_md_plot.go) and pr.html
// (pr_diff.go, pr.go) render from it, and its JSON is the artifact's
// diff.json; ci/diff keeps aliases of these names for its callers.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"

	"github.com/algal-assay/assay/engine/bench"
	"github.com/algal-assay/assay/engine/foundry"
	"github.com/algal-assay/assay/engine/significance"
)

// Workload kinds a diff compares.
const (
	KindBench   = "bench"
	KindFoundry = "foundry"
)

// Workload statuses.
const (
	StatusChanged   = "changed"
	StatusUnchanged = "unchanged"
	StatusAdded     = "added"   // runs at head only
	StatusRemoved   = "removed" // runs at base only
)

// Case outcomes in a flip; Absent when the case does not exist on a side.
const (
	Pass   = "pass"
	Fail   = "fail"
	Absent = "absent"
)

// Diff is the comparison of two run sets.
type Diff struct {
	Base        string          `json:"base"`
	Head        string          `json:"head"`
	Verdict     DiffVerdict     `json:"verdict"`
	Workloads   []*DiffWorkload `json:"workloads"`
	Regressions []*Regression   `json:"regressions"`
	Replays     *Replays        `json:"replays"`
	// Problems are head-side failures that have no run directory (a
	// workload that did not load); the check adds them.
	Problems []string `json:"problems"`
	Notes    []string `json:"notes"`
}

// DiffVerdict is the one-line outcome at head.
type DiffVerdict struct {
	Passed    bool     `json:"passed"`
	Workloads int      `json:"workloads"` // run at head
	Failed    []string `json:"failed"`    // head workloads that fail (unverified, failed gate, failed run, a regression the compare block fails on)
	Changed   []string `json:"changed"`   // workloads whose results differ from base, added or removed
}

// DiffSide is what one run directory says about a workload.
type DiffSide struct {
	Slug     string `json:"slug"`
	Status   string `json:"status"`
	Verified bool   `json:"verified"`
	Gates    bool   `json:"gatesPassed"`
	Passed   bool   `json:"passed"`
}

// DiffWorkload is one workload's comparison.
type DiffWorkload struct {
	Name   string    `json:"name"`
	Kind   string    `json:"kind"`
	Status string    `json:"status"`
	Base   *DiffSide `json:"base"`
	Head   *DiffSide `json:"head"`
	// FailedGates and Mismatches are the head's failing rules and
	// verification mismatches.
	FailedGates []GateRule   `json:"failedGates"`
	Mismatches  []string     `json:"mismatches"`
	Bench       *DiffBench   `json:"bench,omitempty"`
	Foundry     *DiffFoundry `json:"foundry,omitempty"`
	// Statistics is how the workload's changes are tested (ci/diff's
	// statistics.go).
	Statistics *Statistics `json:"statistics,omitempty"`
	// Repeats compares flakiness when a side ran with repeats.
	Repeats *DiffRepeats `json:"repeats,omitempty"`
	// File is the workload file, relative to the repository, as the
	// head's (else the base's) gate positions name it; "" when unknown.
	File string `json:"file"`

	// BaseBench, HeadBench, BaseFoundry and HeadFoundry are the reports
	// of the runs compared (nil on a side without one), kept for the plot
	// tables, the Pareto criteria and pr.html: they are evidence, not part
	// of the diff's JSON, so a diff decoded from JSON has none.
	BaseBench, HeadBench     *bench.Report   `json:"-"`
	BaseFoundry, HeadFoundry *foundry.Report `json:"-"`
}

// DiffBench is the comparison of two bench reports.
type DiffBench struct {
	Systems []*DiffSystem `json:"systems"`
	// ParetoBase and ParetoHead are the sets in report order; Joined and
	// Left are sorted.
	ParetoBase []string `json:"paretoBase"`
	ParetoHead []string `json:"paretoHead"`
	Joined     []string `json:"joined"`
	Left       []string `json:"left"`
	HasCost    bool     `json:"hasCost"`
	Flips      []Flip   `json:"flips"`
}

// DiffSystem compares one bench system. Base or Head is nil when the system
// exists on one side only.
type DiffSystem struct {
	ID     string       `json:"id"`
	Base   *SystemStats `json:"base"`
	Head   *SystemStats `json:"head"`
	Pareto string       `json:"pareto"` // "joined", "left", "stays", "out", or "" when on one side only
	// DominatedBy says, for a system off the head's Pareto set, who
	// dominates it there and on which criteria.
	DominatedBy []Dominator `json:"dominatedBy"`
	// Change is the paired test of base against head on the cases both
	// sides ran; nil when the system is on one side only.
	Change *significance.Change `json:"change"`
}

// Dominator is a system that dominates another: at least as good on every
// Pareto criterion and strictly better on Better.
type Dominator struct {
	By     string   `json:"by"`
	Better []string `json:"better"`
}

// SystemStats are a system's totals on one side.
type SystemStats struct {
	ManifestKey    string  `json:"manifestKey"`
	ManifestDigest string  `json:"manifestDigest"`
	Passed         int64   `json:"passed"`
	Total          int64   `json:"total"`
	Tokens         int64   `json:"tokens"`
	Cost           float64 `json:"cost"`
	Calls          int64   `json:"calls"`
	OnPareto       bool    `json:"onPareto"`
	// PassRateCI95 is the pass rate's 95% interval (Wilson's; clustered
	// by case with repeats).
	PassRateCI95 significance.Interval `json:"passRateCI95"`
	// TokensUnknown and CostUnknown count the calls whose tokens (a
	// server omitted usage) or cost (that, or a model the price card does
	// not price) are unknown, as re-derived from the receipts: Tokens and
	// Cost then understate, and the comment shows them as unknown.
	TokensUnknown int64 `json:"tokensUnknown,omitempty"`
	CostUnknown   int64 `json:"costUnknown,omitempty"`
}

// Flip is a case whose outcome differs between the sides.
type Flip struct {
	Subject string `json:"subject"` // system id, or candidate manifest key
	Case    string `json:"case"`
	Split   string `json:"split,omitempty"`
	Base    string `json:"base"`
	Head    string `json:"head"`
}

// Regressed reports whether the flip went from pass to fail.
func (f Flip) Regressed() bool { return f.Base == Pass && f.Head == Fail }

// DiffFoundry is the comparison of two foundry reports.
type DiffFoundry struct {
	Base            *Promotion  `json:"base"`
	Head            *Promotion  `json:"head"`
	PromotedChanged bool        `json:"promotedChanged"`
	Added           []Candidate `json:"added"`
	Removed         []Candidate `json:"removed"`
	// Revised are candidates whose key is on both sides with a different
	// manifest digest (Digest is the head's, Was the base's).
	Revised []Candidate `json:"revised"`
	// Candidates pairs every candidate by manifest key, sorted by key;
	// Base or Head is nil for one added or removed.
	Candidates []*CandidatePair `json:"candidates"`
	Flips      []Flip           `json:"flips"`
	// BaseRanking and HeadRanking are each side's promotion order with
	// the column that decided every place.
	BaseRanking []RankPlace `json:"baseRanking"`
	HeadRanking []RankPlace `json:"headRanking"`
	// PromotedChange is the paired test of the base's promoted candidate
	// against the head's on the validation cases both ran.
	PromotedChange *significance.Change `json:"promotedChange"`
}

// RankPlace is one place of a foundry's promotion order.
type RankPlace struct {
	Place      int    `json:"place"`
	Key        string `json:"key"`
	Digest     string `json:"digest"`
	Promoted   bool   `json:"promoted"`
	Validation Rate   `json:"validation"`
	Train      Rate   `json:"train"`
	AgentCalls int64  `json:"agentCalls"`
	Units      int64  `json:"units"`
	// DecidedBy is the column that separates this place from the one
	// above (the winner: from the runner-up): validation, train, agent
	// calls, work units or digest; "" for a population of one.
	DecidedBy string `json:"decidedBy"`
	Why       string `json:"why"`
}

// CandidatePair is one candidate key on both sides.
type CandidatePair struct {
	Key  string          `json:"key"`
	Base *CandidateStats `json:"base"`
	Head *CandidateStats `json:"head"`
	// Change is the paired test of the candidate's validation cases, base
	// against head; nil unless it is on both sides.
	Change *significance.Change `json:"change"`
}

// CandidateStats are a candidate's rates on one side.
type CandidateStats struct {
	Digest     string `json:"digest"`
	Validation Rate   `json:"validation"`
	Train      Rate   `json:"train"`
	Promoted   bool   `json:"promoted"`
}

// Promotion is one side's promoted candidate and its rates.
type Promotion struct {
	Key        string `json:"key"`
	Digest     string `json:"digest"`
	Validation Rate   `json:"validation"`
	Train      Rate   `json:"train"`
	Holdout    Rate   `json:"holdout"`
	Candidates int    `json:"candidates"`
	// Exhausted: the habitat budget ran out before promotion.
	Exhausted bool `json:"exhausted"`
	// HoldoutFailing are the holdout cases the promoted candidate fails.
	HoldoutFailing []string `json:"holdoutFailing"`
	// Margin is how clearly the candidate beat the runner-up on
	// validation; nil for a population of one.
	Margin *Margin `json:"margin"`
}

// Candidate names a foundry candidate.
type Candidate struct {
	Key    string `json:"key"`
	Digest string `json:"digest"`
	Was    string `json:"was,omitempty"`
}

// Rate is passed out of total.
type Rate struct {
	Passed int64 `json:"passed"`
	Total  int64 `json:"total"`
	// PassRateCI95 is the rate's 95% interval where the diff gives one
	// (candidate and promotion rates).
	PassRateCI95 significance.Interval `json:"passRateCI95,omitzero"`
}

// Ratio is the rate as "passed/total".
func (r Rate) Ratio() string { return fmt.Sprintf("%d/%d", r.Passed, r.Total) }

// Value is the rate as a fraction, 0 when there are no cases.
func (r Rate) Value() float64 {
	if r.Total == 0 {
		return 0
	}
	return float64(r.Passed) / float64(r.Total)
}

// Regression measures besides "passed" and the foundry splits.
const (
	MetricCost   = "cost"
	MetricTokens = "tokens"
	MetricCalls  = "calls"
)

// Regression is a measure that got worse at head.
type Regression struct {
	Workload string `json:"workload"`
	Subject  string `json:"subject"`
	Metric   string `json:"metric"`
	Base     Rate   `json:"base"`
	Head     Rate   `json:"head"`
	// Drop is base rate minus head rate (0..1); cases may flip to fail
	// with no drop when others flip the other way.
	Drop float64 `json:"drop"`
	// Cases now failing that passed at base (for the holdout of a newly
	// promoted organism: failing at head and not at base).
	Cases []string `json:"cases"`
	// Amount is set for a measure that is not a pass rate (cost, tokens,
	// calls): the two totals and the relative change.
	Amount *Amount `json:"amount,omitempty"`
}

// Amount is a total that grew at head.
type Amount struct {
	Base float64 `json:"base"`
	Head float64 `json:"head"`
	// Relative is head/base − 1 (1 = doubled); 0 when base is 0.
	Relative float64 `json:"relative"`
}

// Settle recomputes the verdict from the workloads and problems; call it
// after adding problems.
func (d *Diff) Settle() {
	v := DiffVerdict{Passed: true, Failed: []string{}, Changed: []string{}}
	for _, w := range d.Workloads {
		if w.Status != StatusUnchanged {
			v.Changed = append(v.Changed, w.Name)
		}
		if w.Head == nil {
			continue
		}
		v.Workloads++
		if w.headFails() {
			v.Failed = append(v.Failed, w.Name)
			v.Passed = false
		}
	}
	if len(d.Problems) > 0 {
		v.Passed = false
	}
	d.Verdict = v
}

// headFails reports whether the head's run fails, or a comparison the
// workload fails on does.
func (w *DiffWorkload) headFails() bool {
	return !w.Head.Passed || w.Statistics != nil && len(w.Statistics.Failures) > 0
}

// JSON renders the diff as indented JSON with a trailing newline.
func (d *Diff) JSON() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(d); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Statistics is how a workload's changes are tested (engine/significance)
// and what the workload's `compare:` block makes of them.
type Statistics struct {
	// Test is mcnemar-exact, or paired-mean when a side ran with repeats.
	Test   string              `json:"test"`
	Alpha  significance.Figure `json:"alpha"`
	FailOn string              `json:"failOn"`
	// Cases is how many cases the test pairs at most (a bench's cases, a
	// foundry's validation cases, at head); MinFlips the fewest that must
	// flip one way before a change can be significant, 0 when none can.
	Cases    int `json:"cases"`
	MinFlips int `json:"minFlips"`
	// Failures are the changes that fail the check under FailOn.
	Failures []string `json:"failures"`
}

// alphaRat is Alpha as the exact decimal the workload wrote (nil, the
// default, when unset).
func (st *Statistics) alphaRat() *big.Rat {
	if st.Alpha == 0 {
		return nil
	}
	return significance.Alpha(float64(st.Alpha))
}

// Margin is how clearly a foundry side's promoted candidate beat the next
// one on the validation cases: the paired test of the two (winnerOnly
// counts the cases only the winner passes, or, with repeats, whose pass
// rate is higher for the winner).
type Margin struct {
	Winner       string              `json:"winner"`
	RunnerUp     string              `json:"runnerUp"`
	Split        string              `json:"split"`
	Test         string              `json:"test"`
	PairedCases  int                 `json:"pairedCases"`
	WinnerOnly   int                 `json:"winnerOnly"`
	RunnerUpOnly int                 `json:"runnerUpOnly"`
	PValue       significance.Figure `json:"pValue"`
	Significant  bool                `json:"significant"`
}

// DiffRepeats compares a workload run with repeats on either side: each
// contender's pass rate and pass^k (k = that side's repeats) and its
// flaky cases, and which cases became or stopped being flaky. A side run
// once has a pass rate, pass^1 and no flaky case (one sample cannot be
// flaky). With repeats, the Bench and Foundry comparisons read the pooled
// view (harness/repeats: Aggregate.PooledBench): passed counts case runs over all
// repeats, tokens, cost and calls are per-repeat means, a case passes
// when it passed in every repeat, and the Pareto set is the pooled one.
type DiffRepeats struct {
	BaseRepeats  int                `json:"baseRepeats"` // 0 when the side has no run
	HeadRepeats  int                `json:"headRepeats"`
	Contenders   []*RepeatContender `json:"contenders"`
	BecameFlaky  []FlakyCase        `json:"becameFlaky"`
	StoppedFlaky []FlakyCase        `json:"stoppedFlaky"`
}

// RepeatContender is one system or candidate on both sides.
type RepeatContender struct {
	ID   string       `json:"id"`
	Base *RepeatStats `json:"base"`
	Head *RepeatStats `json:"head"`
}

// RepeatStats are one side's samples of one contender. Rates are exact
// fractions ("11/12"), "n/a" when undefined.
type RepeatStats struct {
	Repeats  int      `json:"repeats"`
	Samples  int      `json:"samples"`
	Passes   int      `json:"passes"`
	PassRate string   `json:"passRate"`
	PassHatK string   `json:"passHatK"`
	Flaky    []string `json:"flaky"`
}

// FlakyCase is a case that is flaky on one side: the repeats it passed
// in there, of how many.
type FlakyCase struct {
	Subject  string `json:"subject"`
	Case     string `json:"case"`
	PassedIn []int  `json:"passedIn"`
	Runs     int    `json:"runs"`
}

// Replay verdicts besides the engine's identical, diverged and
// could-not-replay.
const (
	VerdictRemoved = "removed" // no head manifest carries the key any more
	VerdictError   = "error"   // the receipt could not be compared (it does not check)
)

// Replays is the archive comparison.
type Replays struct {
	Archive  string `json:"archive"`
	Receipts int    `json:"receipts"` // receipts read
	Touched  int    `json:"touched"`  // receipts whose organism the change touched
	// Requests counts the live request bodies of a recording archive
	// (values/<hex>.json, see harness/archive): not receipts, but not
	// strangers either, so they are neither replayed nor skipped.
	Requests int `json:"requests,omitempty"`
	// Skipped lists archive files that are neither algal.run.v1 receipts
	// nor verified request bodies.
	Skipped []string `json:"skipped"`
	Results []Replay `json:"results"`
}

// Replay is one archived receipt compared with one head revision.
type Replay struct {
	File    string `json:"file"` // relative to the archive
	Receipt string `json:"receipt"`
	// Stored is the receipt's content digest (canonical JSON), the name
	// reports give it as receiptDigest.
	Stored       string `json:"stored"`
	Key          string `json:"key"`
	BaseManifest string `json:"baseManifest"`
	BasePath     string `json:"basePath"`
	HeadManifest string `json:"headManifest"` // "" when removed or when the head file does not admit
	HeadPath     string `json:"headPath"`
	Verdict      string `json:"verdict"`
	// Divergence is the kind of the first divergence of a diverged
	// replay (cell, effects, outcome, failure, or work: only the work
	// accounting differs, the behaviour is the same).
	Divergence string `json:"divergence,omitempty"`
	Detail     string `json:"detail"`
	// Workload, Subject (system or candidate key), Case and Split name the
	// base run case that recorded the receipt; "" when no base report
	// names it.
	Workload string `json:"workload"`
	Subject  string `json:"subject"`
	Case     string `json:"case"`
	Split    string `json:"split,omitempty"`
}

// GateRule is one rule's verdict in gate.json.
type GateRule struct {
	Name    string `json:"name"`
	Rule    string `json:"rule"`
	At      string `json:"at"`
	Passed  bool   `json:"passed"`
	Message string `json:"message"`
}
