package parts

import (
	"crypto/sha256"
	"strings"
	"testing"

	"github.com/algal-assay/assay/harness/workload"
)

// A shard's record is taken only for the part, the report bytes and the
// slug it was written for.
func TestRecordIsTakenOnlyForItsPartBytesAndSlug(t *testing.T) {
	t.Parallel()
	p := workload.Part{N: 2, CaseFrom: 256, CaseTo: 512, SystemFrom: 0, SystemTo: 3}
	report := []byte(`{"digest":"x"}` + "\n")
	rec, err := EncodeRecord(p, report, "w-r1-0123456789", 768)
	if err != nil {
		t.Fatal(err)
	}
	if RecordFile(p) != "part-0002-verified.json" || !strings.Contains(string(rec), RecordContract) {
		t.Fatalf("record %s in %s", rec, RecordFile(p))
	}
	v := ReadRecord(p, rec, report, "w-r1-0123456789")
	if v == nil || v.Checked != 768 || v.Sum != sha256.Sum256(report) {
		t.Fatalf("the record of these bytes reads as %+v", v)
	}
	other := workload.Part{N: 3, CaseFrom: 512, CaseTo: 768, SystemTo: 3}
	for name, got := range map[string]*Verified{
		"other bytes": ReadRecord(p, rec, []byte(`{"digest":"y"}`+"\n"), "w-r1-0123456789"),
		"other slug":  ReadRecord(p, rec, report, "w-r1-abcdefabcd"),
		"other part":  ReadRecord(other, rec, report, "w-r1-0123456789"),
		"not json":    ReadRecord(p, []byte("{"), report, "w-r1-0123456789"),
	} {
		if got != nil {
			t.Errorf("%s: the record was taken (%+v)", name, got)
		}
	}
}

func TestResumeNote(t *testing.T) {
	t.Parallel()
	r := &Resume{Reused: []int{1, 3}, Ran: []int{2, 4}}
	if got, want := r.Note(4), "resumed an unfinished run: 2 of 4 parts reused (each verified against the store and its part config), 2 run; --fresh runs every part"; got != want {
		t.Errorf("note %q, want %q", got, want)
	}
	r.Rejected = []string{"a: torn", "b: edited"}
	if got := r.Note(4); !strings.Contains(got, "; 2 leftover part report(s) did not verify and their parts ran again (a: torn), ...; --fresh") {
		t.Errorf("note %q", got)
	}
}
