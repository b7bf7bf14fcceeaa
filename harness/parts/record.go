package parts

import (
	"crypto/sha256"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/harness/workload"
)

// A shard verifies the parts it runs on its own cores, as a run's verify
// phase would (Check: the report is its config's, every receipt it
// names is in the shard's store and replays to it, its cases consumed the
// responses they declared), and writes beside each part that verifies a
// verification record, part-NNNN-verified.json: the SHA-256 of the report
// bytes it checked, the run's slug (which digests the workload, every
// input and so every part config: the same slug, the same config), and
// how many receipts it replayed. `assay ci merge` takes a part whose
// report is those very bytes, in a run of the same slug, as verified
// instead of
// replaying its receipts again on one machine, so no part is verified
// twice and the merge's work does not grow with the shards' (issue 31). A
// part without a record, or whose bytes differ from the ones recorded, is
// verified in full by the merge.
//
// A record is a shard's word, as the part report is: the merge trusts the
// shards of its batch as a run trusts its own verify phase. It is not
// evidence: `ci verify` of the merged runs re-derives every part from the
// receipts and never reads a record. A part whose receipts have unknown
// usage (a live backend omitted it, a model has no price) gets no record,
// so the usage a report does not carry is always measured where it is
// used.

// RecordContract is the contract of a part's verification record.
const RecordContract = "assay.part-verification.v1"

// RecordFile is the verification record a shard writes beside part
// p's report.
func RecordFile(p workload.Part) string { return p.Name() + "-verified.json" }

// EncodeRecord is the verification record of part p's report bytes
// report, checked in a run of slug with checked receipts replayed.
func EncodeRecord(p workload.Part, report []byte, slug string, checked int) ([]byte, error) {
	b, err := canon.Encode(map[string]any{
		"contract": RecordContract, "part": float64(p.N),
		"report": canon.DigestBytes(report), "slug": slug,
		"checkedReceipts": float64(checked),
	})
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// ReadRecord is the verification record b of part p taken as the
// verify phase's result for the report bytes report, when it is p's
// record of exactly those bytes checked in a run of slug (the slug this
// run compiled, so the part's config is the one checked against); nil
// otherwise (the part is then verified in full).
func ReadRecord(p workload.Part, b, report []byte, slug string) *Verified {
	v, err := canon.Parse(b, 0)
	if err != nil {
		return nil
	}
	m, _ := v.(map[string]any)
	n, _ := m["part"].(float64)
	checked, _ := m["checkedReceipts"].(float64)
	if m["contract"] != RecordContract || n != float64(p.N) || checked < 0 || checked != float64(int(checked)) ||
		m["report"] != canon.DigestBytes(report) || m["slug"] != slug {
		return nil
	}
	return &Verified{Sum: sha256.Sum256(report), Checked: int(checked)}
}
