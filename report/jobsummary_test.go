package report_test

import (
	"strings"
	"testing"

	"github.com/algal-assay/assay/report"
)

func evidence() *report.Evidence {
	return &report.Evidence{Roots: []string{"runs"}, Files: []report.EvidenceFile{
		{Path: "runs/a/receipt.json", Kind: "receipt", OK: true, Digest: "sha256:aa", Detail: "sha256:aa"},
		{Path: "runs/b,1/report.json", Kind: "bench", Mismatches: []string{"digest differs\nsecond line", "x"}, Detail: "digest differs second line (+1 more)"},
	}, Leftovers: []report.Leftover{{Path: "runs/.staging-1", Kind: "interrupted", Description: "staging directory | of a run"}}}
}

// The job summary puts failures first and keeps every cell on one line;
// the sentence counts files and leftovers.
func TestJobSummaryFailuresFirst(t *testing.T) {
	t.Parallel()
	e := evidence()
	got := report.JobSummary(e)
	fail := strings.Index(got, "| ❌ FAIL | `runs/b,1/report.json` |")
	ok := strings.Index(got, "| ok | `runs/a/receipt.json` | receipt | `sha256:aa` |")
	if fail < 0 || ok < 0 || fail > ok {
		t.Errorf("want the failure row before the ok row:\n%s", got)
	}
	if !strings.Contains(got, "❌ **1 of 2 files failed to verify; 1 leftover of interrupted writes listed**") ||
		!strings.Contains(got, "- `runs/.staging-1` interrupted: staging directory \\| of a run\n") {
		t.Errorf("job summary:\n%s", got)
	}
	if e.OK() || e.Failed() != 1 {
		t.Errorf("OK %v Failed %d, want false 1", e.OK(), e.Failed())
	}
	if s := (&report.Evidence{Roots: []string{"a", "b"}}).Sentence(); s != "no receipts, reports, budget accounts or run directories found under a, b" {
		t.Errorf("empty sentence = %q", s)
	}
}

// Annotations escape what would end a workflow command or start another.
func TestAnnotationsEscape(t *testing.T) {
	t.Parallel()
	got := report.Annotations(evidence(), "")
	want := []string{
		"::error file=runs/b%2C1/report.json::bench does not verify: digest differs second line (+1 more)",
		"::notice file=runs/.staging-1::interrupted: staging directory | of a run",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("annotations =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	text := report.EvidenceText(evidence())
	if !strings.HasPrefix(text, "ok   runs/a/receipt.json  receipt  sha256:aa\nFAIL runs/b,1/report.json  bench  digest differs second line (+1 more)\nnote ") {
		t.Errorf("text =\n%s", text)
	}
}
