package vm

// Counterfactual replay (algal.replay-comparison.v1): run a revised
// manifest against the evidence a recorded receipt holds and say, in a
// bounded record, how far the revision reproduces the recorded trace.
//
// The record is authoritative for every request it covers: recorded effect
// records answer by request digest ahead of any live executor, recorded
// slot reads and organism provenance replay from the recorded cells, and a
// host tool is never called (its answers come only from the record). What
// the record cannot answer reaches the live executors the caller admits,
// as a fresh run would; with none, the request is unbound and the verdict
// is could-not-replay instead of an invented answer. The revised run writes
// only to an overlay of the caller's store.

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/effect"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/manifest"
	"github.com/algal-assay/assay/engine/receipt"
	"github.com/algal-assay/assay/engine/store"
)

// ReplayContract is the comparison record's contract literal.
const ReplayContract = "algal.replay-comparison.v1"

// Bounds of a comparison record (string bounds in UTF-16 code units).
const (
	MaxReplayBytes  = 1_048_576
	MaxReplayPrefix = 256
	MaxReplayAdded  = 256
	MaxReplayPath   = 4_096
	MaxReplayDetail = 2_048
	MaxReplayStatus = 64
)

// Verdicts.
const (
	VerdictIdentical      = "identical"
	VerdictDiverged       = "diverged"
	VerdictCouldNotReplay = "could-not-replay"
)

// could-not-replay reason codes.
const (
	ReasonManifestInvalid = "manifest-invalid"
	ReasonMissingInput    = "missing-input"
	ReasonMissingEffect   = "missing-effect"
)

// Divergence kinds: a cell, or one of the receipt-level kinds.
const (
	DivergeCell    = "cell"
	DivergeEffects = "effects"
	DivergeOutcome = "outcome"
	DivergeWork    = "work"
	DivergeFailure = "failure"
)

var (
	verdicts        = []string{VerdictIdentical, VerdictDiverged, VerdictCouldNotReplay}
	reasonCodes     = []string{ReasonManifestInvalid, ReasonMissingInput, ReasonMissingEffect}
	divergenceKinds = []string{DivergeCell, DivergeEffects, DivergeOutcome, DivergeWork, DivergeFailure}
	comparisonKeys  = []string{"contract", "receipt", "manifest", "supplied", "revision", "args", "verdict",
		"prefix", "prefixTruncated", "added", "addedTruncated", "divergence", "outcomes", "effectsMatch",
		"revisedReceipt", "reason"}
	// missingCodes are the cell failures that mean "the record or host could
	// not answer" rather than "the program decided to fail".
	missingCodes = []string{fault.EffectUnbound, fault.ToolUnknown, fault.FnUnknown, fault.InputMissing}
)

func replayErrorf(code, format string, a ...any) *fault.Error {
	return &fault.Error{Code: code, Message: fmt.Sprintf(format, a...)}
}

// CellSide is one run's view of a divergent cell.
type CellSide struct {
	Status string
	Digest string // digest of the canonical cell record
}

// PrefixEntry is one reproduced cell of the shared prefix.
type PrefixEntry struct {
	Path   string
	Digest string
}

// Divergence is the first difference between the runs.
type Divergence struct {
	Kind string
	// Path is the cell path of a cell divergence; "" (null) for a
	// receipt-level one.
	Path string
	// Original and Revised are nil when the path never activated on that
	// side.
	Original, Revised *CellSide
	Detail            *string
}

// Reason says why a comparison could not replay.
type Reason struct {
	Code string
	// Path is "cell.port" for missing-input and the cell path for
	// missing-effect; "" when absent.
	Path string
	// Request is the unanswered request digest, when one was issued.
	Request string
	Detail  *string
}

// Comparison is an algal.replay-comparison.v1 record, plus the revised
// receipt the comparison produced (not part of the record).
type Comparison struct {
	Receipt  string // intrinsic digest of the recorded receipt
	Manifest string // manifest digest the recorded run ran under
	Supplied string // canonical digest of the revision as supplied
	Revision string // admitted revision manifest digest; "" (null) when it did not admit
	Args     string // digest of the merged args the revised run used
	Verdict  string

	Prefix          []PrefixEntry // in recorded activation order
	PrefixTruncated bool
	Added           []string // revised-only cell paths, UTF-16 sorted
	AddedTruncated  bool

	Divergence *Divergence
	// OriginalOutcome and RevisedOutcome ("" when the revision never ran).
	OriginalOutcome, RevisedOutcome string
	// EffectsMatch is nil when the revision never ran.
	EffectsMatch   *bool
	RevisedReceipt string // intrinsic digest of the revised receipt; "" (null) when none
	Reason         *Reason

	// Revised is the revised run's sealed receipt when one was produced.
	Revised map[string]any
}

// ReplayOptions is what a comparison may use besides the record.
type ReplayOptions struct {
	// Store is read through an overlay (child manifests, values, unrecorded
	// slot reads); the comparison never writes it. Nil means empty.
	Store store.Store
	// Args override the recorded args per cell per port: an override
	// replaces a port value, never a whole cell.
	Args Args
	// Executors answer, in admission order, the requests the record cannot
	// (the tail after a divergence). None means such requests are unbound.
	Executors []effect.Executor
	// Fns and Signatures are host registry functions, as for Run.
	Fns        map[string]Fn
	Signatures map[string]manifest.Signature
	// ToolSignatures type host tools the revision may name. Their answers
	// come only from the record: no live tool is ever called.
	ToolSignatures map[string]manifest.Signature
	// Context bounds live executor calls.
	Context context.Context
}

// Compare replays an admitted revised manifest against rec. The supplied
// digest is the revision's own manifest digest.
func Compare(rec map[string]any, revised *manifest.Manifest, opts ReplayOptions) (*Comparison, error) {
	c, orig, args, err := begin(rec, opts)
	if err != nil {
		return nil, err
	}
	c.Supplied = revised.Digest
	return c.replay(orig, revised, args, opts)
}

// CompareValue replays a revision given as decoded JSON. A revision that
// does not parse or admit is a could-not-replay record (manifest-invalid),
// not an error; an error means the request itself is unusable (a receipt
// that fails its checks, malformed args, a host fault).
func CompareValue(rec map[string]any, revision any, opts ReplayOptions) (*Comparison, error) {
	c, orig, args, err := begin(rec, opts)
	if err != nil {
		return nil, err
	}
	if c.Supplied, err = canon.Digest(revision); err != nil {
		return nil, replayErrorf(fault.Parse, "revision is not canonical JSON: %v", err)
	}
	m, err := manifest.ParseValue(revision)
	if err != nil {
		return c.couldNot(&Reason{Code: ReasonManifestInvalid, Detail: detail(CodedMessage(err))})
	}
	return c.replay(orig, m, args, opts)
}

// begin checks the recorded receipt, decodes it and merges the args.
func begin(rec map[string]any, opts ReplayOptions) (*Comparison, *receipt.Receipt, Args, error) {
	if err := receipt.Check(rec); err != nil {
		return nil, nil, nil, err
	}
	orig, err := receipt.FromValue(rec)
	if err != nil {
		return nil, nil, nil, err
	}
	args, err := mergeArgs(orig.Args, opts.Args)
	if err != nil {
		return nil, nil, nil, err
	}
	ad, err := canon.Digest(args.object())
	if err != nil {
		return nil, nil, nil, replayErrorf(fault.Parse, "args are not canonical JSON: %v", err)
	}
	return &Comparison{Receipt: orig.Digest, Manifest: orig.ManifestDigest, Args: ad, OriginalOutcome: orig.Outcome,
		Prefix: []PrefixEntry{}, Added: []string{}}, orig, args, nil
}

// mergeArgs lays override over base per cell per port, copying so neither
// input is modified.
func mergeArgs(base, override Args) (Args, error) {
	merged := make(map[string]ports, len(base)+len(override))
	for _, src := range []Args{base, override} {
		for _, cell := range canon.SortedKeys(src) {
			from, ok := src.cellPorts(cell)
			if !ok {
				return nil, replayErrorf(fault.Parse, "args.%s must be an object of ports", cell)
			}
			dst := merged[cell]
			if dst == nil {
				dst = make(ports, len(from))
				merged[cell] = dst
			}
			for p, v := range from {
				dst[p] = v
			}
		}
	}
	out := make(Args, len(merged))
	for cell, p := range merged {
		out[cell] = p.object()
	}
	return out, nil
}

// CodedMessage renders err as "CODE: message" when it carries a contract
// code, and as its message otherwise.
func CodedMessage(err error) string {
	if c := fault.CodeOf(err); c != "" {
		return c + ": " + err.Error()
	}
	return err.Error()
}

// detail bounds a diagnostic to MaxReplayDetail bytes (so also code
// units) at a rune boundary.
func detail(s string) *string {
	if len(s) > MaxReplayDetail {
		// A cut inside a multi-byte rune leaves invalid bytes; drop them.
		s = strings.ToValidUTF8(s[:MaxReplayDetail], "")
	}
	return &s
}

// couldNot closes a comparison that never produced a revised run.
func (c *Comparison) couldNot(r *Reason) (*Comparison, error) {
	c.Verdict = VerdictCouldNotReplay
	c.Reason = r
	return c.sealed()
}

// sealed re-parses the record, so a comparison this package emits always
// satisfies the bounds and coherence rules its parser enforces.
func (c *Comparison) sealed() (*Comparison, error) {
	if _, err := ParseComparison(c.Value()); err != nil {
		return nil, replayErrorf(fault.Internal, "produced comparison: %v", err)
	}
	return c, nil
}

func (c *Comparison) replay(orig *receipt.Receipt, m *manifest.Manifest, args Args, opts ReplayOptions) (*Comparison, error) {
	base := opts.Store
	if base == nil {
		base = store.NewMemStore()
	}
	execs := append([]effect.Executor{effect.NewReplay(orig.Effects)}, opts.Executors...)
	// The router has no tool registry: a tool request the record cannot
	// answer is a hard unbound miss, never a live call.
	host := &Host{Store: store.NewOverlay(base), Router: effect.NewRouter(execs...), Fns: opts.Fns,
		Signatures: opts.Signatures, Context: opts.Context, recorded: orig.Cells, toolSigs: recordedHostTools(opts.ToolSignatures, orig.Effects)}

	// Admission under this host is evidence, not a usage error: an unknown
	// function, an unadmitted tool or an unresolvable child cannot run.
	ctx := opts.Context
	if ctx == nil {
		ctx = context.Background()
	}
	r := &runner{host: host, ctx: ctx, fetched: map[string]string{}}
	var err error
	if r.tools, err = toolSignatures(host); err != nil {
		return nil, err
	}
	c.Revision = m.Digest
	if err := r.compile(m); err != nil {
		return c.couldNot(&Reason{Code: ReasonManifestInvalid, Detail: detail(CodedMessage(err))})
	}
	if key := missingInput(m, args); key != "" {
		return c.couldNot(&Reason{Code: ReasonMissingInput, Path: key,
			Detail: detail("wired input " + key + " has no recorded or supplied value")})
	}

	p, err := runChecked(m, args, host)
	if err != nil {
		return nil, err
	}
	typed, revised := p.typed, p.rec
	c.Revised = revised
	c.RevisedOutcome = typed.Outcome
	c.RevisedReceipt = typed.Digest
	c.compare(orig, typed)
	return c.sealed()
}

// missingInput returns the first "cell.port" of a root input cell that an
// edge reads but the args do not supply: left alone it would be a silently
// dead edge, and the record has no value to replay for it.
func missingInput(m *manifest.Manifest, args Args) string {
	wired := map[manifest.Endpoint]bool{}
	for _, e := range m.Edges {
		wired[e.From] = true
	}
	for _, c := range m.Cells {
		if c.Kind != manifest.KindInput {
			continue
		}
		given, _ := args.cellPorts(c.ID)
		for _, p := range c.Declared {
			if _, ok := given[p.Name]; !ok && wired[manifest.Endpoint{Cell: c.ID, Port: p.Name}] {
				return c.ID + "." + p.Name
			}
		}
	}
	return ""
}

// compare fills prefix, added, divergence, effectsMatch, the verdict and
// any could-not-replay reason from the two receipts.
func (c *Comparison) compare(orig, rev *receipt.Receipt) {
	c.comparePrefix(orig, rev)
	added := c.compareAdded(orig, rev)
	if c.Divergence == nil && len(added) > 0 {
		c.Divergence = &Divergence{Kind: DivergeCell, Path: added[0], Revised: side(rev.Cells[added[0]])}
	}
	reason := unanswered(orig, rev)
	match := sameEffects(orig.Effects, rev.Effects)
	c.EffectsMatch = &match
	if c.Divergence == nil {
		c.Divergence = c.receiptDivergence(orig, rev, match)
	}
	switch {
	case reason != nil:
		c.Verdict, c.Reason = VerdictCouldNotReplay, reason
	case c.Divergence == nil:
		c.Verdict = VerdictIdentical
	default:
		c.Verdict = VerdictDiverged
	}
}

// comparePrefix walks the recorded trace in activation order: cells
// whose records match form the prefix, and the first that does not is the
// divergence.
func (c *Comparison) comparePrefix(orig, rev *receipt.Receipt) {
	for _, p := range activationOrder(orig) {
		a, b := side(orig.Cells[p]), side(rev.Cells[p])
		if a == nil || b == nil || a.Digest != b.Digest {
			c.Divergence = &Divergence{Kind: DivergeCell, Path: p, Original: a, Revised: b}
			return
		}
		if len(c.Prefix) < MaxReplayPrefix {
			c.Prefix = append(c.Prefix, PrefixEntry{Path: p, Digest: a.Digest})
		} else {
			c.PrefixTruncated = true
		}
	}
}

// compareAdded records the revised-only cell paths (UTF-16 sorted,
// bounded) and returns them all.
func (c *Comparison) compareAdded(orig, rev *receipt.Receipt) []string {
	var added []string
	for _, p := range activationOrder(rev) {
		if _, ok := orig.Cells[p]; !ok {
			added = append(added, p)
		}
	}
	slices.SortFunc(added, canon.CompareUTF16)
	c.Added = added
	if len(added) > MaxReplayAdded {
		c.Added, c.AddedTruncated = added[:MaxReplayAdded], true
	}
	if c.Added == nil {
		c.Added = []string{}
	}
	return added
}

// unanswered finds an unanswered request anywhere in the revised run:
// unless the recorded run failed the same way, the comparison cannot say
// what the revision would have done past it.
func unanswered(orig, rev *receipt.Receipt) *Reason {
	for _, p := range activationOrder(rev) {
		cr := rev.Cells[p]
		if cr == nil || cr.Status != receipt.StatusFailed || cr.Failure == nil || !slices.Contains(missingCodes, cr.Failure.Code) {
			continue
		}
		if or := orig.Cells[p]; or != nil && (sameCell(or, cr) || (or.Failure != nil && *or.Failure == *cr.Failure)) {
			continue
		}
		why := ReasonMissingEffect
		if cr.Failure.Code == fault.InputMissing {
			why = ReasonMissingInput
		}
		return &Reason{Code: why, Path: p, Request: lastRequest(rev, p), Detail: detail(cr.Failure.Message)}
	}
	return nil
}

// receiptDivergence is the first receipt-level difference (effects,
// outcome, failure, work) when every cell matched; nil when none.
func (c *Comparison) receiptDivergence(orig, rev *receipt.Receipt, effectsMatch bool) *Divergence {
	switch {
	case !effectsMatch:
		return &Divergence{Kind: DivergeEffects, Detail: detail("effect sequences differ")}
	case c.OriginalOutcome != c.RevisedOutcome:
		return &Divergence{Kind: DivergeOutcome, Detail: detail(c.OriginalOutcome + " vs " + c.RevisedOutcome)}
	case !sameFailure(orig.Failure, rev.Failure):
		return &Divergence{Kind: DivergeFailure, Detail: detail(failureCode(orig) + " vs " + failureCode(rev))}
	case orig.Work != rev.Work:
		return &Divergence{Kind: DivergeWork, Detail: detail("units " + units(orig.Work.Units) + " vs " + units(rev.Work.Units))}
	}
	return nil
}

var cellEvents = []string{"cell.commit", "cell.skip", "cell.fail", "cell.suspend"}

// activationOrder lists a receipt's cell paths in first-activation order
// from its event log, then any cell the log does not name (the log is
// bounded) in UTF-16 order. It is a listing order, not a scheduling claim.
func activationOrder(rec *receipt.Receipt) []string {
	seen := make(map[string]bool, len(rec.Cells))
	order := make([]string, 0, len(rec.Cells))
	for _, e := range rec.Events {
		if e.Path != nil && *e.Path != "" && !seen[*e.Path] && slices.Contains(cellEvents, e.Kind) {
			seen[*e.Path] = true
			order = append(order, *e.Path)
		}
	}
	var rest []string
	for p := range rec.Cells {
		if !seen[p] {
			rest = append(rest, p)
		}
	}
	slices.SortFunc(rest, canon.CompareUTF16)
	return append(order, rest...)
}

// side is one run's view of a cell: nil when the path never activated.
func side(c *receipt.Cell) *CellSide {
	if c == nil {
		return nil
	}
	d, err := canon.Digest(c.Value())
	if err != nil {
		return nil
	}
	return &CellSide{Status: c.Status, Digest: d}
}

// sameCell compares two cell records' canonical forms.
func sameCell(a, b *receipt.Cell) bool { return same(a.Value(), b.Value()) }

func sameEffects(a, b []effect.Record) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !same(a[i].Value(), b[i].Value()) {
			return false
		}
	}
	return true
}

func sameFailure(a, b *receipt.RunFailure) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// same compares canonical forms (absent and null are the same).
func same(a, b any) bool {
	x, err1 := canon.Encode(a)
	y, err2 := canon.Encode(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}

// lastRequest is the last effect request digest the cell issued: the one
// left unanswered when the cell failed unbound.
func lastRequest(rec *receipt.Receipt, path string) string {
	d := ""
	for _, e := range rec.Events {
		if e.Kind == "effect" && e.Path != nil && *e.Path == path && e.Digest != "" {
			d = e.Digest
		}
	}
	return d
}

func failureCode(rec *receipt.Receipt) string {
	if rec.Failure != nil {
		return rec.Failure.Code
	}
	return "none"
}

func units(n int) string { return strconv.Itoa(n) }

// Value renders the record as canonical JSON values.
func (c *Comparison) Value() map[string]any {
	prefix := make([]any, len(c.Prefix))
	for i, e := range c.Prefix {
		prefix[i] = map[string]any{"path": e.Path, "digest": e.Digest}
	}
	added := make([]any, len(c.Added))
	for i, p := range c.Added {
		added[i] = p
	}
	v := map[string]any{
		"contract":        ReplayContract,
		"receipt":         c.Receipt,
		"manifest":        c.Manifest,
		"supplied":        c.Supplied,
		"revision":        orNull(c.Revision),
		"args":            c.Args,
		"verdict":         c.Verdict,
		"prefix":          prefix,
		"prefixTruncated": c.PrefixTruncated,
		"added":           added,
		"addedTruncated":  c.AddedTruncated,
		"divergence":      nil,
		"outcomes":        map[string]any{"original": c.OriginalOutcome, "revised": orNull(c.RevisedOutcome)},
		"effectsMatch":    nil,
		"revisedReceipt":  orNull(c.RevisedReceipt),
		"reason":          nil,
	}
	if c.EffectsMatch != nil {
		v["effectsMatch"] = *c.EffectsMatch
	}
	if d := c.Divergence; d != nil {
		dv := map[string]any{"kind": d.Kind, "path": orNull(d.Path), "original": sideValue(d.Original), "revised": sideValue(d.Revised)}
		if d.Detail != nil {
			dv["detail"] = *d.Detail
		}
		v["divergence"] = dv
	}
	if r := c.Reason; r != nil {
		rv := map[string]any{"code": r.Code}
		if r.Path != "" {
			rv["path"] = r.Path
		}
		if r.Request != "" {
			rv["request"] = r.Request
		}
		if r.Detail != nil {
			rv["detail"] = *r.Detail
		}
		v["reason"] = rv
	}
	return v
}

func orNull(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func sideValue(s *CellSide) any {
	if s == nil {
		return nil
	}
	return map[string]any{"status": s.Status, "digest": s.Digest}
}

// ParseComparison reads an algal.replay-comparison.v1 record strictly:
// closed key sets, the bounds, and verdict coherence (a record may not
// claim a verdict its own fields deny). Every rejection is PARSE_FAILED.
func ParseComparison(v any) (*Comparison, error) {
	b, err := canon.Encode(v)
	if err != nil {
		return nil, replayErrorf(fault.Parse, "replay comparison is not canonical JSON: %v", err)
	}
	if len(b) > MaxReplayBytes {
		return nil, replayErrorf(fault.Parse, "replay comparison is %d bytes, over the %d-byte bound", len(b), MaxReplayBytes)
	}
	p := &cparser{}
	// divergence and reason may be omitted (read as null); Value always
	// writes them.
	o := p.object(v, "replay comparison", comparisonKeys, slices.DeleteFunc(slices.Clone(comparisonKeys),
		func(k string) bool { return k == "divergence" || k == "reason" }))
	if p.err != nil {
		return nil, p.err
	}
	c := &Comparison{}
	if o["contract"] != ReplayContract {
		return nil, replayErrorf(fault.Parse, "contract: expected %q", ReplayContract)
	}
	c.Receipt = p.digest(o["receipt"], "receipt")
	c.Manifest = p.digest(o["manifest"], "manifest")
	c.Supplied = p.digest(o["supplied"], "supplied")
	c.Revision = p.nullDigest(o["revision"], "revision")
	c.Args = p.digest(o["args"], "args")
	c.Verdict = p.enum(o["verdict"], "verdict", verdicts)
	c.RevisedReceipt = p.nullDigest(o["revisedReceipt"], "revisedReceipt")

	c.Prefix = p.prefix(o["prefix"])
	c.Added = p.added(o["added"])
	c.PrefixTruncated = p.boolean(o["prefixTruncated"], "prefixTruncated")
	c.AddedTruncated = p.boolean(o["addedTruncated"], "addedTruncated")

	oo := p.object(o["outcomes"], "outcomes", []string{"original", "revised"}, []string{"original", "revised"})
	c.OriginalOutcome = p.text(oo["original"], "outcomes.original", receipt.MaxOutcomeLen)
	if oo["revised"] != nil {
		c.RevisedOutcome = p.text(oo["revised"], "outcomes.revised", receipt.MaxOutcomeLen)
	}
	c.EffectsMatch = p.optBoolean(o["effectsMatch"], "effectsMatch")
	if o["divergence"] != nil {
		c.Divergence = p.divergence(o["divergence"])
	}
	if o["reason"] != nil {
		c.Reason = p.reason(o["reason"])
	}
	if p.err != nil {
		return nil, p.err
	}
	if err := c.coherent(); err != nil {
		return nil, err
	}
	return c, nil
}

// coherenceRules are the verdict rules: a record for which a rule's
// breaks holds is refused with its message.
var coherenceRules = []struct {
	breaks  func(c *Comparison) bool
	message string
}{
	{func(c *Comparison) bool { return c.Verdict == VerdictCouldNotReplay && c.Reason == nil },
		"verdict could-not-replay requires a reason"},
	{func(c *Comparison) bool { return c.Verdict != VerdictCouldNotReplay && c.Reason != nil },
		"reason is only carried by a could-not-replay verdict"},
	{func(c *Comparison) bool { return c.Verdict == VerdictIdentical && !c.showsIdentical() },
		"verdict identical contradicts its evidence (a divergence, an added path, unmatched effects or outcome, or no revised receipt)"},
	{func(c *Comparison) bool { return c.Verdict == VerdictDiverged && c.RevisedReceipt == "" },
		"verdict diverged requires a revised receipt"},
	{func(c *Comparison) bool { return c.Verdict == VerdictDiverged && c.showsNoDivergence() },
		"verdict diverged shows no divergence"},
	{func(c *Comparison) bool {
		return c.Reason != nil && c.Reason.Code == ReasonManifestInvalid && c.RevisedReceipt != ""
	}, "a manifest-invalid comparison carries no revised receipt"},
}

// coherent enforces the verdict rules, the first broken one reported.
func (c *Comparison) coherent() error {
	for _, r := range coherenceRules {
		if r.breaks(c) {
			return replayErrorf(fault.Parse, "%s", r.message)
		}
	}
	return nil
}

// showsIdentical: no divergence, no added path, matched effects and
// outcome, and a revised receipt.
func (c *Comparison) showsIdentical() bool {
	return c.Divergence == nil && c.EffectsMatch != nil && *c.EffectsMatch && len(c.Added) == 0 &&
		c.RevisedOutcome != "" && c.RevisedOutcome == c.OriginalOutcome && c.RevisedReceipt != ""
}

// showsNoDivergence: nothing in the record differs.
func (c *Comparison) showsNoDivergence() bool {
	return c.Divergence == nil && c.EffectsMatch != nil && *c.EffectsMatch &&
		c.RevisedOutcome == c.OriginalOutcome && len(c.Added) == 0
}

// cparser collects the first parse failure so field reads stay linear.
type cparser struct{ err *fault.Error }

func (p *cparser) fail(format string, a ...any) {
	if p.err == nil {
		p.err = replayErrorf(fault.Parse, "replay comparison "+format, a...)
	}
}

func (p *cparser) object(v any, at string, allowed, required []string) map[string]any {
	m, ok := v.(map[string]any)
	if !ok {
		p.fail("%s: must be an object", at)
		return map[string]any{}
	}
	for _, k := range canon.SortedKeys(m) {
		if !slices.Contains(allowed, k) {
			p.fail("%s: unknown key %q", at, k)
		}
	}
	for _, k := range required {
		if _, ok := m[k]; !ok {
			p.fail("%s: missing %q", at, k)
		}
	}
	return m
}

func (p *cparser) text(v any, at string, max int) string {
	s, ok := v.(string)
	switch {
	case !ok:
		p.fail("%s: must be a string", at)
	case s == "":
		p.fail("%s: must not be empty", at)
	case canon.UTF16Len(s) > max:
		p.fail("%s: longer than %d code units", at, max)
	}
	return s
}

func (p *cparser) optText(v any, at string, max int) *string {
	s, ok := v.(string)
	if !ok {
		p.fail("%s: must be a string", at)
		return nil
	}
	if canon.UTF16Len(s) > max {
		p.fail("%s: longer than %d code units", at, max)
	}
	return &s
}

func (p *cparser) digest(v any, at string) string {
	s, ok := v.(string)
	if !ok || !canon.IsDigest(s) {
		p.fail("%s: must be a sha256: digest", at)
	}
	return s
}

func (p *cparser) nullDigest(v any, at string) string {
	if v == nil {
		return ""
	}
	return p.digest(v, at)
}

func (p *cparser) boolean(v any, at string) bool {
	b, ok := v.(bool)
	if !ok {
		p.fail("%s: must be a boolean", at)
	}
	return b
}

func (p *cparser) enum(v any, at string, allowed []string) string {
	s, ok := v.(string)
	if !ok || !slices.Contains(allowed, s) {
		p.fail("%s: must be one of %s", at, strings.Join(allowed, ", "))
	}
	return s
}

// prefix reads the prefix list: at most MaxReplayPrefix {path, digest}
// entries with distinct paths.
func (p *cparser) prefix(v any) []PrefixEntry {
	prefix, ok := v.([]any)
	if !ok || len(prefix) > MaxReplayPrefix {
		p.fail("prefix: must be an array of at most %d entries", MaxReplayPrefix)
	}
	seen := map[string]bool{}
	out := []PrefixEntry{}
	for i, e := range prefix {
		at := fmt.Sprintf("prefix[%d]", i)
		eo := p.object(e, at, []string{"path", "digest"}, []string{"path", "digest"})
		path := p.text(eo["path"], at+".path", MaxReplayPath)
		if seen[path] && p.err == nil {
			p.fail("%s.path: repeats %q", at, path)
		}
		seen[path] = true
		out = append(out, PrefixEntry{Path: path, Digest: p.digest(eo["digest"], at+".digest")})
	}
	return out
}

// added reads the added list: at most MaxReplayAdded paths, UTF-16
// sorted and unique.
func (p *cparser) added(v any) []string {
	added, ok := v.([]any)
	if !ok || len(added) > MaxReplayAdded {
		p.fail("added: must be an array of at most %d entries", MaxReplayAdded)
	}
	out := []string{}
	for i, a := range added {
		s := p.text(a, fmt.Sprintf("added[%d]", i), MaxReplayPath)
		if n := len(out); n > 0 && p.err == nil && canon.CompareUTF16(out[n-1], s) >= 0 {
			p.fail("added: must be sorted and unique (%q after %q)", s, out[n-1])
		}
		out = append(out, s)
	}
	return out
}

// optBoolean reads a boolean or null (nil).
func (p *cparser) optBoolean(v any, at string) *bool {
	switch b := v.(type) {
	case nil:
		return nil
	case bool:
		return &b
	}
	p.fail("%s: must be a boolean or null", at)
	return nil
}

func (p *cparser) side(v any, at string) *CellSide {
	if v == nil {
		return nil
	}
	keys := []string{"status", "digest"}
	m := p.object(v, at, keys, keys)
	return &CellSide{Status: p.text(m["status"], at+".status", MaxReplayStatus), Digest: p.digest(m["digest"], at+".digest")}
}

func (p *cparser) divergence(v any) *Divergence {
	m := p.object(v, "divergence", []string{"kind", "path", "original", "revised", "detail"}, []string{"kind", "original", "revised"})
	d := &Divergence{Kind: p.enum(m["kind"], "divergence.kind", divergenceKinds)}
	if m["path"] != nil {
		d.Path = p.text(m["path"], "divergence.path", MaxReplayPath)
	}
	d.Original = p.side(m["original"], "divergence.original")
	d.Revised = p.side(m["revised"], "divergence.revised")
	if x, ok := m["detail"]; ok {
		d.Detail = p.optText(x, "divergence.detail", MaxReplayDetail)
	}
	if d.Kind == DivergeCell && d.Path == "" {
		p.fail("divergence: a cell divergence names its path")
	}
	if d.Kind == DivergeCell && d.Original == nil && d.Revised == nil {
		p.fail("divergence: a cell divergence carries at least one side")
	}
	return d
}

func (p *cparser) reason(v any) *Reason {
	m := p.object(v, "reason", []string{"code", "path", "request", "detail"}, []string{"code"})
	r := &Reason{Code: p.enum(m["code"], "reason.code", reasonCodes)}
	if x, ok := m["path"]; ok {
		r.Path = p.text(x, "reason.path", MaxReplayPath)
	}
	if x, ok := m["request"]; ok {
		r.Request = p.digest(x, "reason.request")
	}
	if x, ok := m["detail"]; ok {
		r.Detail = p.optText(x, "reason.detail", MaxReplayDetail)
	}
	if r.Code != ReasonManifestInvalid && r.Path == "" {
		p.fail("reason: %s names its path", r.Code)
	}
	return r
}
