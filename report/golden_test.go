package report_test

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/algal-assay/assay/engine/golden"
	"github.com/algal-assay/assay/engine/vm"
	"github.com/algal-assay/assay/harness"
	"github.com/algal-assay/assay/harness/workload"
)

// The evidence these tests draw comes from running the repository's own
// workloads through the harness (which writes report.html itself), so the
// golden files are what a user finds in a run directory. The test package
// may import harness; the package itself imports only engine.

// workloads are the suites' workloads, one golden file each: two benches
// (cost on x; a reviewed extraction) and two foundries (listed candidates;
// a generated population with lineage).
var workloads = []string{"ticket-triage", "invoice-extraction", "intent-select", "code-normalizer"}

// runSuites runs every workload under ../suites into a fresh runs root and
// returns each workload's report.html.
func runSuites(t testing.TB, concurrency int) map[string][]byte {
	t.Helper()
	files, err := workload.Discover(filepath.Join("..", "suites"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	wb, err := vm.NewWorkbench(filepath.Join(dir, "store"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, f := range files {
		w, err := workload.Load(f)
		if err != nil {
			t.Fatal(err)
		}
		o, err := harness.Run(context.Background(), w, harness.Options{Runner: wb, Store: wb, Out: filepath.Join(dir, "runs"), Concurrency: concurrency})
		if err != nil {
			t.Fatalf("%s: %v", w.Name, err)
		}
		page, err := os.ReadFile(filepath.Join(o.RunDir, harness.ReportHTMLFile))
		if err != nil {
			t.Fatalf("%s: the run directory has no report.html: %v", w.Name, err)
		}
		out[w.Name] = page
	}
	return out
}

var (
	serialOnce sync.Once
	serial     map[string][]byte
)

func serialPages(t *testing.T) map[string][]byte {
	serialOnce.Do(func() { serial = runSuites(t, 1) })
	if serial == nil {
		t.Fatal("the serial run failed")
	}
	return serial
}

func TestGoldenReports(t *testing.T) {
	t.Parallel()
	pages := serialPages(t)
	for _, name := range workloads {
		got, ok := pages[name]
		if !ok {
			t.Fatalf("no run of %s under suites/", name)
		}
		golden.Check(t, filepath.Join("testdata", name+".golden"), got)
	}
}

// The same evidence gives the same bytes whatever the concurrency.
func TestReportsIgnoreConcurrency(t *testing.T) {
	t.Parallel()
	pages := serialPages(t)
	parallel := runSuites(t, 4)
	for _, name := range workloads {
		if string(pages[name]) != string(parallel[name]) {
			t.Errorf("%s: report.html differs between concurrency 1 and 4", name)
		}
	}
}

// A page is self-contained: nothing it shows is fetched.
func TestReportsLoadNothing(t *testing.T) {
	t.Parallel()
	// A copy: the serial pages are shared with the tests running beside.
	pages := maps.Clone(serialPages(t))
	pr, err := os.ReadFile(filepath.Join("testdata", "pr.golden"))
	if err != nil {
		t.Fatal(err)
	}
	pages["pr"] = pr
	for name, page := range pages {
		s := string(page)
		for _, bad := range []string{"<script", "<link", "src=", "@import", "url(http", "href=\"http"} {
			if strings.Contains(s, bad) {
				t.Errorf("%s: page contains %q", name, bad)
			}
		}
	}
}
