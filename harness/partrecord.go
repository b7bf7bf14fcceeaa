package harness

import (
	"context"
	"crypto/sha256"
	"fmt"
	"path/filepath"

	"github.com/algal-assay/assay/engine/bench"
	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/evidence"
	"github.com/algal-assay/assay/harness/workload"
	"github.com/algal-assay/assay/internal/atomicfile"
)

// A shard verifies the parts it runs on its own cores, as a run's verify
// phase would (checkPart: the report is its config's, every receipt it
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

// PartRecordContract is the contract of a part's verification record.
const PartRecordContract = "assay.part-verification.v1"

// PartRecordFile is the verification record a shard writes beside part
// p's report.
func PartRecordFile(p workload.Part) string { return p.Name() + "-verified.json" }

// recordPart verifies the part report a shard wrote in dir and, when it
// verifies, writes its record (PartRecord); it says whether it did.
func recordPart(ctx context.Context, c *workload.Compiled, dir string, p workload.Part, st evidence.Store) (bool, error) {
	b, _, err := PartRecord(ctx, c, dir, p, st)
	if err != nil || b == nil {
		return false, err
	}
	return true, atomicfile.Write(filepath.Join(dir, PartRecordFile(p)), b)
}

// PartRecord verifies part p's report in dir in full, as a shard does
// (checkPart), and returns the bytes of the verification record a shard
// writes for it; nil when it writes none: the part does not verify
// (mismatches say why) or its receipts have unknown usage. It never reads
// a record. An error is a report that is not its config's at all, or a
// store that cannot be read. `assay ci verify` holds a shard's records to
// it, so a record is re-derived, never trusted.
func PartRecord(ctx context.Context, c *workload.Compiled, dir string, p workload.Part, st evidence.Store) (record []byte, mismatches []string, _ error) {
	report, err := canon.ReadBounded(filepath.Join(dir, p.ReportFile()), 0)
	if err != nil {
		return nil, nil, err
	}
	v, err := canon.Parse(report, 0)
	if err != nil {
		return nil, nil, canon.InFile(p.ReportFile(), report, err)
	}
	rep, err := bench.ParseReport(v)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %v", p.ReportFile(), err)
	}
	cfg, err := bench.LoadConfig(filepath.Join(dir, p.ConfigFile()))
	if err != nil {
		return nil, nil, fmt.Errorf("%s: the part's config does not admit: %v", p.ReportFile(), err)
	}
	pc, err := checkPart(ctx, c, p, rep, v, cfg, st)
	if err != nil {
		return nil, nil, err
	}
	if len(pc.mismatches) > 0 || len(pc.unknown) > 0 {
		return nil, pc.mismatches, nil
	}
	b, err := canon.Encode(map[string]any{
		"contract": PartRecordContract, "part": float64(p.N),
		"report": canon.DigestBytes(report), "slug": c.Slug,
		"checkedReceipts": float64(pc.checked),
	})
	if err != nil {
		return nil, nil, err
	}
	return append(b, '\n'), nil, nil
}

// readPartRecord is the verification record b of part p taken as the
// verify phase's result for the report bytes report, when it is p's
// record of exactly those bytes checked in a run of slug (the slug this
// run compiled, so the part's config is the one checked against); nil
// otherwise (the part is then verified in full).
func readPartRecord(p workload.Part, b, report []byte, slug string) *verifiedPart {
	v, err := canon.Parse(b, 0)
	if err != nil {
		return nil
	}
	m, _ := v.(map[string]any)
	n, _ := m["part"].(float64)
	checked, _ := m["checkedReceipts"].(float64)
	if m["contract"] != PartRecordContract || n != float64(p.N) || checked < 0 || checked != float64(int(checked)) ||
		m["report"] != canon.DigestBytes(report) || m["slug"] != slug {
		return nil
	}
	return &verifiedPart{sum: sha256.Sum256(report), checked: int(checked)}
}
