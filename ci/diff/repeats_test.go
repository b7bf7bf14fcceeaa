package diff_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/algal-assay/assay/ci/diff"
)

// A pull request that moves the flakiness from one case to another: the
// diff says which case became flaky and which stopped, with pass rates
// and pass^k on both sides, and reads the pooled Pareto set.
func TestRepeatsBecameAndStoppedFlaky(t *testing.T) {
	t.Parallel()
	tree := func(old, new string) (string, *diff.Set) {
		tr := copyTree(t, "suites", "fixtures")
		mutate(t, tr, "suites/ticket-triage.bench.yaml", "revision: 1\n", "revision: 1\nrepeats: 3\n")
		mutate(t, tr, "suites/ticket-triage.bench.yaml", old, new)
		return tr, runTree(t, tr)
	}
	bt, bs := tree("cheap: { route: account, screen: account }", "cheap: { route: !repeats [account, other, account], screen: account }")
	ht, hs := tree("cheap: { route: technical, screen: technical }", "cheap: { route: !repeats [technical, technical, billing], screen: technical }")
	d, err := diff.Compute(bs, hs, diff.Options{Trim: []string{bt, ht}})
	if err != nil {
		t.Fatal(err)
	}
	w := find(t, d, "ticket-triage")
	r := w.Repeats
	if r == nil || r.BaseRepeats != 3 || r.HeadRepeats != 3 {
		t.Fatalf("repeats diff %+v", r)
	}
	if len(r.BecameFlaky) != 1 || r.BecameFlaky[0].Subject != "cheap-single" || r.BecameFlaky[0].Case != "export-crash" || r.BecameFlaky[0].Runs != 3 || !slices.Equal(r.BecameFlaky[0].PassedIn, []int{1, 2}) {
		t.Fatalf("became flaky %+v", r.BecameFlaky)
	}
	if len(r.StoppedFlaky) != 1 || r.StoppedFlaky[0].Subject != "cheap-single" || r.StoppedFlaky[0].Case != "change-email" || !slices.Equal(r.StoppedFlaky[0].PassedIn, []int{1, 3}) {
		t.Fatalf("stopped flaky %+v", r.StoppedFlaky)
	}
	if w.Status != diff.StatusChanged {
		t.Fatalf("status %s", w.Status)
	}
	// The bench comparison reads the pooled view: passed counts case runs
	// over all repeats.
	for _, s := range w.Bench.Systems {
		if s.Head.Total != 18 {
			t.Fatalf("%s: head total %d, want 18 case runs", s.ID, s.Head.Total)
		}
	}
	md := diff.Markdown(d, diff.RenderOptions{})
	for _, want := range []string{
		"## Flakiness (repeats)", "### ticket-triage (3 repeats)",
		"| contender | pass rate base → head | pass^k base → head | flaky at head |",
		"Became flaky:\n\n- `cheap-single` case `export-crash`: passed in 1, 2 of 3 repeats",
		"Stopped being flaky:\n\n- `cheap-single` case `change-email`: passed in 1, 3 of 3 repeats",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	if strings.Index(md, "## Flakiness (repeats)") < strings.Index(md, "## Promotions") {
		t.Error("the flakiness section comes before the promotions")
	}
	// Workloads without repeats on either side have no repeats diff.
	for _, x := range d.Workloads {
		if x.Name != "ticket-triage" && x.Repeats != nil {
			t.Errorf("%s has a repeats diff", x.Name)
		}
	}
}
