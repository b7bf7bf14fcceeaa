package diff_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/algal-assay/assay/ci/diff"
	"github.com/algal-assay/assay/ci/verify"
	"github.com/algal-assay/assay/engine/golden"
	"github.com/algal-assay/assay/engine/vm"
	"github.com/algal-assay/assay/harness"
	"github.com/algal-assay/assay/harness/workload"
)

// repoRoot is the module root, two levels above this package.
const repoRoot = "../.."

// copyTree copies the named top-level directories of the repository into
// a fresh temporary tree.
func copyTree(t testing.TB, dirs ...string) string {
	t.Helper()
	dst := t.TempDir()
	if err := copyDirs(dst, dirs...); err != nil {
		t.Fatal(err)
	}
	return dst
}

func copyDirs(dst string, dirs ...string) error {
	for _, d := range dirs {
		if err := os.CopyFS(filepath.Join(dst, d), os.DirFS(filepath.Join(repoRoot, d))); err != nil {
			return err
		}
	}
	return nil
}

// mutate replaces old with new in tree/rel, which must contain old exactly
// once, so a fixture edit cannot silently stop applying.
func mutate(t testing.TB, tree, rel, old, new string) {
	t.Helper()
	p := filepath.Join(tree, rel)
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), old); n != 1 {
		t.Fatalf("%s: %q occurs %d times, want 1", rel, old, n)
	}
	if err := os.WriteFile(p, []byte(strings.Replace(string(data), old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// runTree runs every workload under tree/suites into tree/runs, receipts
// into tree/.store.
func runTree(t testing.TB, tree string) *diff.Set {
	t.Helper()
	set, err := runDir(tree)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

func runDir(tree string) (*diff.Set, error) {
	files, err := workload.Discover(filepath.Join(tree, "suites"))
	if err != nil {
		return nil, err
	}
	wb, err := vm.NewWorkbench(filepath.Join(tree, ".store"))
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		w, err := workload.Load(f)
		if err != nil {
			return nil, err
		}
		if _, err := harness.Run(context.Background(), w, harness.Options{Runner: wb, Store: wb, Out: filepath.Join(tree, "runs"), Concurrency: 2}); err != nil {
			return nil, fmt.Errorf("%s: %w", w.Name, err)
		}
	}
	return loadSet(tree)
}

// loadSet reads tree/runs against tree/.store and tree/suites.
func loadSet(tree string) (*diff.Set, error) {
	ev, err := evidence(tree)
	if err != nil {
		return nil, err
	}
	return diff.LoadSet(context.Background(), filepath.Join(tree, "runs"), ev)
}

func evidence(tree string) (diff.Evidence, error) {
	wb, err := vm.NewWorkbench(filepath.Join(tree, ".store"))
	if err != nil {
		return diff.Evidence{}, err
	}
	ws, err := verify.LoadWorkloads(filepath.Join(tree, "suites"))
	if err != nil {
		return diff.Evidence{}, err
	}
	return diff.Evidence{Store: wb, StoreDir: filepath.Join(tree, ".store"), Workloads: ws}, nil
}

var (
	baseOnce sync.Once
	baseTree string
	baseSet  *diff.Set
	baseErr  error
)

// base runs the unmodified fixtures once for all the tests of the package.
func base(t *testing.T) (string, *diff.Set) {
	t.Helper()
	baseOnce.Do(func() {
		if baseTree, baseErr = os.MkdirTemp("", "assay-diff-base-*"); baseErr != nil {
			return
		}
		if baseErr = copyDirs(baseTree, "suites", "fixtures"); baseErr != nil {
			return
		}
		baseSet, baseErr = runDir(baseTree)
	})
	if baseErr != nil {
		t.Fatalf("base run: %v", baseErr)
	}
	return baseTree, baseSet
}

func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	if baseTree != "" {
		os.RemoveAll(baseTree)
	}
	os.Exit(code)
}

// checkGolden compares got with testdata/name.golden.md.
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", name+".golden.md"), []byte(got))
}

const pointer = "Full report: the job summary; data: the `assay-pr-check` artifact."

// archiveBase copies the base run's receipts into tree/receipts, as a
// repository that commits its receipts would hold them.
func archiveBase(t *testing.T, bt, tree string) int {
	t.Helper()
	archive := filepath.Join(tree, "receipts")
	if err := os.MkdirAll(archive, 0o755); err != nil {
		t.Fatal(err)
	}
	recs, err := filepath.Glob(filepath.Join(bt, ".store", "runs", "*.json"))
	if err != nil || len(recs) == 0 {
		t.Fatalf("no base receipts: %v", err)
	}
	for _, r := range recs {
		data, err := os.ReadFile(r)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(archive, filepath.Base(r)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return len(recs)
}

// edit is one change to the head tree's fixtures: old, which must stand
// in file exactly once, becomes new.
type edit struct{ file, old, new string }

// headDiff diffs the base run against a head tree: a fresh copy of the
// repository's suites and fixtures with edits applied, then run. With
// replay, the head tree first archives the base's receipts (as a
// repository that commits its receipts would) and the diff replays those
// the edits touch; archived is how many receipts that is.
func headDiff(t *testing.T, replay bool, edits ...edit) (d *diff.Diff, archived int) {
	t.Helper()
	bt, bs := base(t)
	ht := copyTree(t, "suites", "fixtures")
	opts := diff.Options{BaseLabel: "base", HeadLabel: "head", Trim: []string{bt, ht}}
	if replay {
		archived = archiveBase(t, bt, ht)
		opts.Replay = &diff.ReplayInput{Archive: filepath.Join(ht, "receipts"), BaseTree: bt, HeadTree: ht}
	}
	for _, e := range edits {
		mutate(t, ht, e.file, e.old, e.new)
	}
	d, err := diff.Compute(bs, runTree(t, ht), opts)
	if err != nil {
		t.Fatal(err)
	}
	return d, archived
}

// The frontier model now misroutes three tickets: frontier-single drops to
// 3/6, is dominated by cheap-single (more passes at a fraction of the
// cost, as many calls) and leaves the Pareto set; the head's gates on
// frontier-single fail.
func TestGoldenParetoChange(t *testing.T) {
	t.Parallel()
	const f = "suites/ticket-triage.bench.yaml"
	d, _ := headDiff(t, false,
		edit{f, "frontier: { route: technical }", "frontier: { route: billing }"},
		edit{f, "frontier: { route: account }", "frontier: { route: billing }"},
		edit{f, "frontier: { route: technical, escalate: technical }", "frontier: { route: billing, escalate: technical }"})

	tt := find(t, d, "ticket-triage")
	if tt.Status != diff.StatusChanged || strings.Join(tt.Bench.Left, ",") != "frontier-single" ||
		len(tt.Bench.Joined) != 0 {
		t.Fatalf("ticket-triage: status %s, joined %v, left %v", tt.Status, tt.Bench.Joined, tt.Bench.Left)
	}
	if len(tt.Bench.Flips) != 3 || d.Verdict.Passed || len(d.Regressions) != 1 || d.Regressions[0].Subject != "frontier-single" {
		t.Fatalf("flips %v, verdict %+v, regressions %d", tt.Bench.Flips, d.Verdict, len(d.Regressions))
	}
	for _, name := range []string{"code-normalizer", "intent-select", "invoice-extraction"} {
		if w := find(t, d, name); w.Status != diff.StatusUnchanged {
			t.Errorf("%s: status %s, want unchanged", name, w.Status)
		}
	}
	checkGolden(t, "pareto", diff.Markdown(d, diff.RenderOptions{Pointer: pointer}))
}

// The large model now answers both disputed validation cases and the
// cascade's escalation misreads one: the large model is promoted instead of
// the cascade.
func TestGoldenPromotionChange(t *testing.T) {
	t.Parallel()
	const f = "suites/intent-select.foundry.yaml"
	d, _ := headDiff(t, false,
		edit{f, "large: { intent: refund, escalate: refund }", "large: { intent: refund, escalate: bug }"},
		edit{f, "screen: other }\n      large: { intent: how-to }", "screen: other }\n      large: { intent: other }"})

	is := find(t, d, "intent-select")
	fd := is.Foundry
	if !fd.PromotedChanged || fd.Base.Key != "organism:assay-intent-cascade" || fd.Head.Key != "organism:assay-intent-large" {
		t.Fatalf("promotion: %+v -> %+v", fd.Base, fd.Head)
	}
	if v, h := fd.Head.Validation, fd.Head.Holdout; v.Passed != 3 || v.Total != 3 || h.Passed != 2 || h.Total != 2 {
		t.Fatalf("head rates: %+v", fd.Head)
	}
	if d.Verdict.Passed || strings.Join(d.Verdict.Failed, ",") != "intent-select" {
		t.Fatalf("verdict %+v: the promoted gate must fail", d.Verdict)
	}
	checkGolden(t, "promotion", diff.Markdown(d, diff.RenderOptions{Pointer: pointer}))
}

// Revising an organism touches the archived receipts that ran it: they are
// replayed against the head manifest; receipts of untouched organisms are
// only counted.
func TestGoldenOrganismReplay(t *testing.T) {
	t.Parallel()
	d, n := headDiff(t, true,
		// A new escalation prompt: receipts that escalated asked the old
		// question, which the record cannot answer for the new one.
		edit{"fixtures/triage/triage-escalating.algal.json", "A first pass could not route this support ticket.", "A first pass could not route this ticket; read it closely."})

	r := d.Replays
	if r == nil || r.Receipts != n || r.Touched == 0 || len(r.Results) != r.Touched {
		t.Fatalf("replays: %+v", r)
	}
	verdicts := map[string]int{}
	for _, x := range r.Results {
		if x.Key != "organism:assay-triage-escalating" || x.HeadManifest == x.BaseManifest {
			t.Errorf("replay %+v", x)
		}
		verdicts[x.Verdict]++
	}
	// Four tickets never escalate and replay identically; the two that
	// escalated need the frontier's answer to a question never recorded.
	if verdicts["identical"] != 4 || verdicts["could-not-replay"] != 2 {
		t.Errorf("verdicts %v, want identical 4 and could-not-replay 2", verdicts)
	}
	checkGolden(t, "organism", diff.Markdown(d, diff.RenderOptions{Pointer: pointer}))
}

func find(t *testing.T, d *diff.Diff, name string) *diff.Workload {
	t.Helper()
	for _, w := range d.Workloads {
		if w.Name == name {
			return w
		}
	}
	t.Fatalf("workload %s not in diff", name)
	return nil
}
