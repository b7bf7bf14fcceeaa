package assaysuite

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/algal-assay/assay/harness/workload"
)

// A label filter that selects none of the repository's workload specs is
// explained, with the nearest labels; one that selects any is not.
func TestUnmatchedLabelFilter(t *testing.T) {
	paths, err := workload.Discover(filepath.Join("..", "..", "suites"))
	if err != nil {
		t.Fatal(err)
	}
	ws, _ := workload.LoadAll(paths)
	specs := specLabels(paths, ws)
	for _, ok := range []string{"", "ticket-triage", "gate", "bench && !ticket-triage", "/triage/", "invoice-extraction || nothing"} {
		if msg := unmatchedFilter(ok, specs); msg != "" {
			t.Errorf("filter %q: %s", ok, msg)
		}
	}
	msg := unmatchedFilter("tiket-triage", specs)
	for _, want := range []string{`-ginkgo.label-filter="tiket-triage" matches no workload's spec, so nothing would run`, `did you mean "ticket-triage" for "tiket-triage"?`, "the labels are: ", "intent-select"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
	if got := filterTokens("(ticket-ruoter && !gate) || /x/ || env:ci"); strings.Join(got, " ") != "ticket-ruoter gate" {
		t.Errorf("filterTokens = %q", got)
	}
}
