package evidence

import (
	"fmt"

	"github.com/algal-assay/assay/engine/canon"
)

// Verification is what checking a report's claims found: bench and
// foundry verification and a workload's verify phase all give one. A
// report that parses but does not hold has mismatches, one line each.
type Verification struct {
	OK     bool   `json:"ok"`
	Digest string `json:"digest"`
	// Outcome is the account outcome (complete or exhausted) when a
	// foundry habitat account was verified on its own; empty otherwise.
	Outcome         string   `json:"outcome,omitempty"`
	CheckedReceipts int      `json:"checkedReceipts"`
	Mismatches      []string `json:"mismatches"`
}

// Value returns the verification as a canonical JSON value; outcome is
// present only when set.
func (v *Verification) Value() map[string]any {
	ms := make([]any, len(v.Mismatches))
	for i, m := range v.Mismatches {
		ms[i] = m
	}
	out := map[string]any{"ok": v.OK, "digest": v.Digest, "checkedReceipts": float64(v.CheckedReceipts), "mismatches": ms}
	if v.Outcome != "" {
		out["outcome"] = v.Outcome
	}
	return out
}

// Bad records a mismatch.
func (v *Verification) Bad(format string, a ...any) {
	v.Mismatches = append(v.Mismatches, fmt.Sprintf(format, a...))
}

// CheckDigest recomputes the digest a report value claims, that of its
// body (every key but "digest"), and records a mismatch when it is not
// v.Digest. Only a value canon cannot encode is an error.
func (v *Verification) CheckDigest(report map[string]any) error {
	d, err := canon.Digest(body(report))
	if err != nil {
		return err
	}
	if d != v.Digest {
		v.Bad("digest: claimed %s, computed %s", v.Digest, d)
	}
	return nil
}

// body is a report value without its "digest" key: what the digest
// covers.
func body(report map[string]any) map[string]any {
	body := make(map[string]any, len(report))
	for k, x := range report {
		if k != "digest" {
			body[k] = x
		}
	}
	return body
}

// WithDigest is a report body with its digest added when set: a report's
// Value.
func WithDigest(body map[string]any, digest string) map[string]any {
	if digest != "" {
		body["digest"] = digest
	}
	return body
}
