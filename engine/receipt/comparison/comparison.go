// Package comparison holds the algal.replay-comparison.v1 record: what a
// counterfactual replay of a recorded receipt under a revised manifest
// found (the shared prefix, the first divergence, the verdict, or why it
// could not replay), as a typed Record with its canonical value (Value)
// and its strict parser (Parse), which enforces the bounds and the
// verdict's coherence with the record's own fields. The replay that
// produces a record is engine/vm's (vm.Compare); the reports that show
// one read it here.
package comparison

import (
	"fmt"
	"slices"
	"strings"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/receipt"
)

// Contract is the record's contract literal.
const Contract = "algal.replay-comparison.v1"

// Bounds of a comparison record (string bounds in UTF-16 code units).
const (
	MaxBytes  = 1_048_576
	MaxPrefix = 256
	MaxAdded  = 256
	MaxPath   = 4_096
	MaxDetail = 2_048
	MaxStatus = 64
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
	recordKeys      = []string{"contract", "receipt", "manifest", "supplied", "revision", "args", "verdict",
		"prefix", "prefixTruncated", "added", "addedTruncated", "divergence", "outcomes", "effectsMatch",
		"revisedReceipt", "reason"}
)

func parseErrorf(format string, a ...any) *fault.Error {
	return &fault.Error{Code: fault.Parse, Message: fmt.Sprintf(format, a...)}
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

// Record is an algal.replay-comparison.v1 record.
type Record struct {
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
}

// Value renders the record as canonical JSON values.
func (c *Record) Value() map[string]any {
	prefix := make([]any, len(c.Prefix))
	for i, e := range c.Prefix {
		prefix[i] = map[string]any{"path": e.Path, "digest": e.Digest}
	}
	added := make([]any, len(c.Added))
	for i, p := range c.Added {
		added[i] = p
	}
	v := map[string]any{
		"contract":        Contract,
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

// Parse reads an algal.replay-comparison.v1 record strictly:
// closed key sets, the bounds, and verdict coherence (a record may not
// claim a verdict its own fields deny). Every rejection is PARSE_FAILED.
func Parse(v any) (*Record, error) {
	b, err := canon.Encode(v)
	if err != nil {
		return nil, parseErrorf("replay comparison is not canonical JSON: %v", err)
	}
	if len(b) > MaxBytes {
		return nil, parseErrorf("replay comparison is %d bytes, over the %d-byte bound", len(b), MaxBytes)
	}
	p := &cparser{}
	// divergence and reason may be omitted (read as null); Value always
	// writes them.
	o := p.object(v, "replay comparison", recordKeys, slices.DeleteFunc(slices.Clone(recordKeys),
		func(k string) bool { return k == "divergence" || k == "reason" }))
	if p.err != nil {
		return nil, p.err
	}
	c := &Record{}
	if o["contract"] != Contract {
		return nil, parseErrorf("contract: expected %q", Contract)
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
	breaks  func(c *Record) bool
	message string
}{
	{func(c *Record) bool { return c.Verdict == VerdictCouldNotReplay && c.Reason == nil },
		"verdict could-not-replay requires a reason"},
	{func(c *Record) bool { return c.Verdict != VerdictCouldNotReplay && c.Reason != nil },
		"reason is only carried by a could-not-replay verdict"},
	{func(c *Record) bool { return c.Verdict == VerdictIdentical && !c.showsIdentical() },
		"verdict identical contradicts its evidence (a divergence, an added path, unmatched effects or outcome, or no revised receipt)"},
	{func(c *Record) bool { return c.Verdict == VerdictDiverged && c.RevisedReceipt == "" },
		"verdict diverged requires a revised receipt"},
	{func(c *Record) bool { return c.Verdict == VerdictDiverged && c.showsNoDivergence() },
		"verdict diverged shows no divergence"},
	{func(c *Record) bool {
		return c.Reason != nil && c.Reason.Code == ReasonManifestInvalid && c.RevisedReceipt != ""
	}, "a manifest-invalid comparison carries no revised receipt"},
}

// coherent enforces the verdict rules, the first broken one reported.
func (c *Record) coherent() error {
	for _, r := range coherenceRules {
		if r.breaks(c) {
			return parseErrorf("%s", r.message)
		}
	}
	return nil
}

// showsIdentical: no divergence, no added path, matched effects and
// outcome, and a revised receipt.
func (c *Record) showsIdentical() bool {
	return c.Divergence == nil && c.EffectsMatch != nil && *c.EffectsMatch && len(c.Added) == 0 &&
		c.RevisedOutcome != "" && c.RevisedOutcome == c.OriginalOutcome && c.RevisedReceipt != ""
}

// showsNoDivergence: nothing in the record differs.
func (c *Record) showsNoDivergence() bool {
	return c.Divergence == nil && c.EffectsMatch != nil && *c.EffectsMatch &&
		c.RevisedOutcome == c.OriginalOutcome && len(c.Added) == 0
}

// cparser collects the first parse failure so field reads stay linear.
type cparser struct{ err *fault.Error }

func (p *cparser) fail(format string, a ...any) {
	if p.err == nil {
		p.err = parseErrorf("replay comparison "+format, a...)
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

// prefix reads the prefix list: at most MaxPrefix {path, digest}
// entries with distinct paths.
func (p *cparser) prefix(v any) []PrefixEntry {
	prefix, ok := v.([]any)
	if !ok || len(prefix) > MaxPrefix {
		p.fail("prefix: must be an array of at most %d entries", MaxPrefix)
	}
	seen := map[string]bool{}
	out := []PrefixEntry{}
	for i, e := range prefix {
		at := fmt.Sprintf("prefix[%d]", i)
		eo := p.object(e, at, []string{"path", "digest"}, []string{"path", "digest"})
		path := p.text(eo["path"], at+".path", MaxPath)
		if seen[path] && p.err == nil {
			p.fail("%s.path: repeats %q", at, path)
		}
		seen[path] = true
		out = append(out, PrefixEntry{Path: path, Digest: p.digest(eo["digest"], at+".digest")})
	}
	return out
}

// added reads the added list: at most MaxAdded paths, UTF-16
// sorted and unique.
func (p *cparser) added(v any) []string {
	added, ok := v.([]any)
	if !ok || len(added) > MaxAdded {
		p.fail("added: must be an array of at most %d entries", MaxAdded)
	}
	out := []string{}
	for i, a := range added {
		s := p.text(a, fmt.Sprintf("added[%d]", i), MaxPath)
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
	return &CellSide{Status: p.text(m["status"], at+".status", MaxStatus), Digest: p.digest(m["digest"], at+".digest")}
}

func (p *cparser) divergence(v any) *Divergence {
	m := p.object(v, "divergence", []string{"kind", "path", "original", "revised", "detail"}, []string{"kind", "original", "revised"})
	d := &Divergence{Kind: p.enum(m["kind"], "divergence.kind", divergenceKinds)}
	if m["path"] != nil {
		d.Path = p.text(m["path"], "divergence.path", MaxPath)
	}
	d.Original = p.side(m["original"], "divergence.original")
	d.Revised = p.side(m["revised"], "divergence.revised")
	if x, ok := m["detail"]; ok {
		d.Detail = p.optText(x, "divergence.detail", MaxDetail)
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
		r.Path = p.text(x, "reason.path", MaxPath)
	}
	if x, ok := m["request"]; ok {
		r.Request = p.digest(x, "reason.request")
	}
	if x, ok := m["detail"]; ok {
		r.Detail = p.optText(x, "reason.detail", MaxDetail)
	}
	if r.Code != ReasonManifestInvalid && r.Path == "" {
		p.fail("reason: %s names its path", r.Code)
	}
	return r
}
