package diff

import (
	"encoding/hex"

	"github.com/algal-assay/assay/engine/bench"
	"github.com/algal-assay/assay/engine/canon"
)

// SystemVerdicts is one bench system's cases as a comparison reads them.
type SystemVerdicts struct {
	ID    string
	Cases []CaseVerdict
}

// CaseVerdict is one case of a bench system: its id, verdict and receipt,
// the only fields flips, receipt labels and the flakiness table read. A
// run set holds one per case and system on each side, so it is kept
// small: the receipt digest as its 32 bytes rather than a 71-byte string,
// and the id shared with the report's case list.
type CaseVerdict struct {
	ID      string
	Passed  bool
	receipt [32]byte
	// hasReceipt is false for a case without a receipt digest.
	hasReceipt bool
}

// Receipt is the case's receipt digest ("sha256:<hex>"), or "".
func (c CaseVerdict) Receipt() string {
	if !c.hasReceipt {
		return ""
	}
	return "sha256:" + hex.EncodeToString(c.receipt[:])
}

// benchVerdicts is rep's systems' case verdicts, and a copy of rep
// without per-case results (whose case list keeps only ids): its totals,
// usage, attribution, Pareto set, prices and axes stay whole.
func benchVerdicts(rep *bench.Report) (*bench.Report, []SystemVerdicts) {
	if rep == nil {
		return nil, nil
	}
	out := *rep
	out.Cases = make([]bench.Case, len(rep.Cases))
	ids := make(map[string]string, len(rep.Cases))
	for i, c := range rep.Cases {
		out.Cases[i] = bench.Case{ID: c.ID}
		ids[c.ID] = c.ID
	}
	out.Systems = make([]bench.SystemResult, len(rep.Systems))
	verdicts := make([]SystemVerdicts, len(rep.Systems))
	for i, s := range rep.Systems {
		cases := make([]CaseVerdict, len(s.Cases))
		for j, c := range s.Cases {
			id, ok := ids[c.ID]
			if !ok {
				id = c.ID
			}
			cases[j] = CaseVerdict{ID: id, Passed: c.Passed}
			cases[j].receipt, cases[j].hasReceipt = digestBytes(c.ReceiptDigest)
		}
		verdicts[i] = SystemVerdicts{ID: s.ID, Cases: cases}
		s.Cases = nil
		out.Systems[i] = s
	}
	return &out, verdicts
}

// digestBytes is the 32 bytes of a "sha256:<lowercase hex>" digest; a
// parsed report's receipt digests are all of that form (evidence.DigestField).
func digestBytes(d string) ([32]byte, bool) {
	var b [32]byte
	if !canon.IsDigest(d) {
		return b, false
	}
	_, err := hex.Decode(b[:], []byte(d[len("sha256:"):]))
	return b, err == nil
}

// systemVerdicts returns the verdicts of system id, or nil.
func systemVerdicts(vs []SystemVerdicts, id string) []CaseVerdict {
	for i := range vs {
		if vs[i].ID == id {
			return vs[i].Cases
		}
	}
	return nil
}
