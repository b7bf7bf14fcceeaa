package console

import (
	"bytes"
	"strings"
	"testing"

	"github.com/algal-assay/assay/harness"
	"github.com/algal-assay/assay/harness/workload"
)

// Warnings (split leakage, an unfinished re-run left beside a complete
// run) reach the job's output, not only summary.md.
func TestPrintSummaryShowsWarnings(t *testing.T) {
	t.Parallel()
	o := &harness.Outcome{
		Workload: &workload.Workload{Name: "w", Kind: workload.KindBench, Revision: 1},
		RunDir:   "runs/w/.w-r1-x.partial-1",
		Status:   "failed",
		Warnings: []string{"this run is failed, so it was left in runs/w/.w-r1-x.partial-1; the complete run of the same inputs in runs/w/w-r1-x was kept"},
	}
	var b bytes.Buffer
	PrintSummary(&b, []*harness.Result{{Path: "w.bench.yaml", Workload: o.Workload, Outcome: o}})
	if !strings.Contains(b.String(), "  warning: this run is failed, so it was left in") {
		t.Fatalf("summary:\n%s", b.String())
	}
}
