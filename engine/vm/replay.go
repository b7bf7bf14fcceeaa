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
	"github.com/algal-assay/assay/engine/receipt/comparison"
	"github.com/algal-assay/assay/engine/store"
)

// The verdicts and divergence kinds of a comparison record, as callers of
// Compare test its result (the record's vocabulary is package
// comparison's).
const (
	VerdictIdentical      = comparison.VerdictIdentical
	VerdictDiverged       = comparison.VerdictDiverged
	VerdictCouldNotReplay = comparison.VerdictCouldNotReplay
	DivergeCell           = comparison.DivergeCell
	DivergeEffects        = comparison.DivergeEffects
	DivergeOutcome        = comparison.DivergeOutcome
	DivergeWork           = comparison.DivergeWork
	DivergeFailure        = comparison.DivergeFailure
)

// missingCodes are the cell failures that mean "the record or host could
// not answer" rather than "the program decided to fail".
var missingCodes = []string{fault.EffectUnbound, fault.ToolUnknown, fault.FnUnknown, fault.InputMissing}

func replayErrorf(code, format string, a ...any) *fault.Error {
	return &fault.Error{Code: code, Message: fmt.Sprintf(format, a...)}
}

// Comparison is what Compare found: the algal.replay-comparison.v1
// record, and the revised receipt the replay produced (not part of the
// record).
type Comparison struct {
	comparison.Record
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
		return c.couldNot(&comparison.Reason{Code: comparison.ReasonManifestInvalid, Detail: detail(CodedMessage(err))})
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
	return &Comparison{Record: comparison.Record{Receipt: orig.Digest, Manifest: orig.ManifestDigest, Args: ad,
		OriginalOutcome: orig.Outcome, Prefix: []comparison.PrefixEntry{}, Added: []string{}}}, orig, args, nil
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

// detail bounds a diagnostic to comparison.MaxDetail bytes (so also code
// units) at a rune boundary.
func detail(s string) *string {
	if len(s) > comparison.MaxDetail {
		// A cut inside a multi-byte rune leaves invalid bytes; drop them.
		s = strings.ToValidUTF8(s[:comparison.MaxDetail], "")
	}
	return &s
}

// couldNot closes a comparison that never produced a revised run.
func (c *Comparison) couldNot(r *comparison.Reason) (*Comparison, error) {
	c.Verdict = VerdictCouldNotReplay
	c.Reason = r
	return c.sealed()
}

// sealed re-parses the record, so a comparison this package emits always
// satisfies the bounds and coherence rules its parser enforces.
func (c *Comparison) sealed() (*Comparison, error) {
	if _, err := comparison.Parse(c.Value()); err != nil {
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
		return c.couldNot(&comparison.Reason{Code: comparison.ReasonManifestInvalid, Detail: detail(CodedMessage(err))})
	}
	if key := missingInput(m, args); key != "" {
		return c.couldNot(&comparison.Reason{Code: comparison.ReasonMissingInput, Path: key,
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
		c.Divergence = &comparison.Divergence{Kind: DivergeCell, Path: added[0], Revised: side(rev.Cells[added[0]])}
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
			c.Divergence = &comparison.Divergence{Kind: DivergeCell, Path: p, Original: a, Revised: b}
			return
		}
		if len(c.Prefix) < comparison.MaxPrefix {
			c.Prefix = append(c.Prefix, comparison.PrefixEntry{Path: p, Digest: a.Digest})
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
	if len(added) > comparison.MaxAdded {
		c.Added, c.AddedTruncated = added[:comparison.MaxAdded], true
	}
	if c.Added == nil {
		c.Added = []string{}
	}
	return added
}

// unanswered finds an unanswered request anywhere in the revised run:
// unless the recorded run failed the same way, the comparison cannot say
// what the revision would have done past it.
func unanswered(orig, rev *receipt.Receipt) *comparison.Reason {
	for _, p := range activationOrder(rev) {
		cr := rev.Cells[p]
		if cr == nil || cr.Status != receipt.StatusFailed || cr.Failure == nil || !slices.Contains(missingCodes, cr.Failure.Code) {
			continue
		}
		if or := orig.Cells[p]; or != nil && (sameCell(or, cr) || (or.Failure != nil && *or.Failure == *cr.Failure)) {
			continue
		}
		why := comparison.ReasonMissingEffect
		if cr.Failure.Code == fault.InputMissing {
			why = comparison.ReasonMissingInput
		}
		return &comparison.Reason{Code: why, Path: p, Request: lastRequest(rev, p), Detail: detail(cr.Failure.Message)}
	}
	return nil
}

// receiptDivergence is the first receipt-level difference (effects,
// outcome, failure, work) when every cell matched; nil when none.
func (c *Comparison) receiptDivergence(orig, rev *receipt.Receipt, effectsMatch bool) *comparison.Divergence {
	switch {
	case !effectsMatch:
		return &comparison.Divergence{Kind: DivergeEffects, Detail: detail("effect sequences differ")}
	case c.OriginalOutcome != c.RevisedOutcome:
		return &comparison.Divergence{Kind: DivergeOutcome, Detail: detail(c.OriginalOutcome + " vs " + c.RevisedOutcome)}
	case !sameFailure(orig.Failure, rev.Failure):
		return &comparison.Divergence{Kind: DivergeFailure, Detail: detail(failureCode(orig) + " vs " + failureCode(rev))}
	case orig.Work != rev.Work:
		return &comparison.Divergence{Kind: DivergeWork, Detail: detail("units " + units(orig.Work.Units) + " vs " + units(rev.Work.Units))}
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
func side(c *receipt.Cell) *comparison.CellSide {
	if c == nil {
		return nil
	}
	d, err := canon.Digest(c.Value())
	if err != nil {
		return nil
	}
	return &comparison.CellSide{Status: c.Status, Digest: d}
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
