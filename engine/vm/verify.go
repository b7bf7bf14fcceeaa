package vm

import (
	"fmt"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/effect"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/manifest"
	"github.com/algal-assay/assay/engine/receipt"
	"github.com/algal-assay/assay/engine/store"
)

// VerifyOptions is what an offline verification may read. It never runs
// anything live: effects come only from the checked receipt.
type VerifyOptions struct {
	// Store is read through an overlay; verification never writes it.
	Store store.Store
	// Fns and Signatures must match the host registry of the original
	// run when it used host functions.
	Fns        map[string]Fn
	Signatures map[string]manifest.Signature
	// ToolSignatures types host tools whose recorded effects replay.
	ToolSignatures map[string]manifest.Signature
	// Canonical, when set, must be the checked receipt's canonical
	// encoding (canon.Encode(rec): the bytes it was read as, when
	// canon.ParseCanonical found them canonical). The replay is then
	// checked against them: their digest with the digest member taken out
	// is the recorded digest's check, and the replay is not encoded.
	Canonical []byte
}

// Report is a verification result.
type Report struct {
	OK         bool
	Digest     string // digest of the replayed receipt ("" when no replay ran)
	Outcome    string
	Mismatches []string
}

// Value renders the report as {"ok","digest"?,"outcome"?,"mismatches"}.
func (r *Report) Value() map[string]any {
	ms := make([]any, len(r.Mismatches))
	for i, m := range r.Mismatches {
		ms[i] = m
	}
	v := map[string]any{"ok": r.OK, "mismatches": ms}
	if r.Digest != "" {
		v["digest"] = r.Digest
		v["outcome"] = r.Outcome
	}
	return v
}

// Verify replays rec offline against m and reports every divergence.
// The replay serves recorded effects by request digest (in record order
// when a digest repeats), slot reads and transport provenance from the
// recorded cells, and writes only to an overlay of the store; the whole
// replayed receipt is then compared with the recorded one, so a change
// anywhere in the receipt is a mismatch.
func Verify(rec map[string]any, m *manifest.Manifest, opts VerifyOptions) (*Report, error) {
	if err := receipt.Validate(rec); err != nil {
		return &Report{Mismatches: []string{err.Error()}}, nil
	}
	recorded, err := receipt.FromValue(rec)
	if recorded.ManifestDigest != m.Digest {
		return &Report{Mismatches: []string{fmt.Sprintf("manifestDigest: %s vs %s", recorded.ManifestDigest, m.Digest)}}, nil
	}
	if err != nil {
		return &Report{Mismatches: []string{err.Error()}}, nil
	}
	base := opts.Store
	if base == nil {
		base = store.NewMemStore()
	}
	replay := effect.NewReplay(recorded.Effects)
	router := effect.NewRouter(replay)
	host := &Host{Store: store.NewOverlay(base), Router: router, Fns: opts.Fns, Signatures: opts.Signatures,
		recorded: recorded.Cells, toolSigs: recordedHostTools(opts.ToolSignatures, recorded.Effects)}
	p, err := runUnsealed(m, recorded.Args, host)
	if err != nil {
		return nil, err
	}
	typed, got := p.typed, p.rec
	if sameAsStored(rec, got, recorded.Digest, opts.Canonical) {
		typed.Digest = recorded.Digest
		return &Report{OK: true, Digest: typed.Digest, Outcome: typed.Outcome}, nil
	}
	if err := p.seal(false); err != nil {
		return nil, err
	}
	// The runtime stamp is not copied from the checked receipt (upstream
	// copies it): this engine writes one fixed stamp, so a receipt
	// claiming another runtime is a mismatch even when re-sealed.
	//
	// The common case: the replay is the recorded receipt, digest field
	// included. Then the recorded digest is the replay's, which is the
	// digest of the replay's content and so of the record's own, and the
	// replay (the validated record, byte for byte) needs no validation of
	// its own: canon.Equal proves all of that without encoding the record.
	if recorded.Digest == typed.Digest && canon.Equal(rec, got) {
		return &Report{OK: true, Digest: typed.Digest, Outcome: typed.Outcome}, nil
	}
	if err := p.validate(); err != nil {
		return nil, err
	}
	own, ownErr := receipt.Digest(rec)
	if ownErr == nil && own == recorded.Digest && own == typed.Digest {
		return &Report{OK: true, Digest: own, Outcome: typed.Outcome}, nil
	}
	// Only a divergence pays for the field-by-field diff. Diff reports
	// named fields only (its catch-all fires only when no named check
	// did), so an edit that left the recorded digest stale is also named
	// as such, in the native verifier's words.
	mm := receipt.Diff(rec, got)
	if ownErr != nil || own != recorded.Digest {
		mm = append(mm, "receipt or manifest digest mismatch")
	}
	return &Report{OK: len(mm) == 0, Digest: typed.Digest, Outcome: typed.Outcome, Mismatches: mm}, nil
}

// sameAsStored reports, without encoding the replay got (unsealed),
// whether it is the recorded receipt rec, whose canonical bytes are
// canonical and whose digest field is digest: that the recorded digest is
// the digest of the recorded content (the stored bytes with the digest
// member taken out, which for canonical bytes are the canonical bytes of
// that content) and that the replay sealed with it equals the record.
// Then the replay's own seal would be that digest, and Verify's common
// case (the replay is the record, digest field included) holds; when
// anything differs, or there are no canonical bytes, Verify seals the
// replay and compares as it does without them.
func sameAsStored(rec, got map[string]any, digest string, canonical []byte) bool {
	if canonical == nil {
		return false
	}
	if d, ok := canon.DigestWithout(canonical, "digest"); !ok || d != digest {
		return false
	}
	got["digest"] = digest
	if canon.Equal(rec, got) {
		return true
	}
	delete(got, "digest")
	return false
}

// Resume continues a suspended (or any verifiable) run: the checkpoint
// must verify offline first; then every recorded effect except the
// suspended ones replays by request digest ahead of the host's live
// executors, so the completed prefix is served from the record and only
// missing or suspended requests reach the world. The result is a new
// receipt.
func Resume(cp map[string]any, m *manifest.Manifest, host *Host) (map[string]any, error) {
	if err := receipt.Check(cp); err != nil {
		return nil, err
	}
	sigs, err := toolSignatures(host)
	if err != nil {
		return nil, err
	}
	rep, err := Verify(cp, m, VerifyOptions{Store: host.Store, Fns: host.Fns, Signatures: host.Signatures, ToolSignatures: sigs})
	if err != nil {
		return nil, err
	}
	if !rep.OK {
		return nil, &fault.Error{Code: fault.ReceiptMismatch, Message: "checkpoint does not verify: " + rep.Mismatches[0]}
	}
	checkpoint, err := receipt.FromValue(cp)
	if err != nil {
		return nil, err
	}
	kept := checkpoint.Effects[:0:0]
	for _, r := range checkpoint.Effects {
		if r.Err == nil || r.Err.Code != fault.EffectSuspended {
			kept = append(kept, r)
		}
	}
	execs := []effect.Executor{effect.NewReplay(kept)}
	var tools *effect.Tools
	if host.Router != nil {
		execs = append(execs, host.Router.Executors()...)
		tools = host.Router.Tools
	}
	router := effect.NewRouter(execs...)
	router.Tools = tools
	h := *host
	h.Router = router
	return Run(m, checkpoint.Args, &h)
}
