package diff_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/algal-assay/assay/ci/diff"
	ghci "github.com/algal-assay/assay/ci/github"
)

// The same inputs give byte-identical JSON and Markdown, whatever the
// order runs were loaded or how often the diff is rendered.
func TestDeterministic(t *testing.T) {
	t.Parallel()
	bt, bs := base(t)
	ht := copyTree(t, "suites", "fixtures")
	mutate(t, ht, "suites/ticket-triage.bench.yaml", "frontier: { route: technical }", "frontier: { route: billing }")
	hs := runTree(t, ht)
	var js, mds []string
	for range 3 {
		d, err := diff.Compute(bs, hs, diff.Options{Trim: []string{bt, ht}})
		if err != nil {
			t.Fatal(err)
		}
		b, err := d.JSON()
		if err != nil {
			t.Fatal(err)
		}
		js = append(js, string(b))
		mds = append(mds, diff.Markdown(d, diff.RenderOptions{}))
	}
	for i := 1; i < len(js); i++ {
		if js[i] != js[0] || mds[i] != mds[0] {
			t.Fatal("diff output differs between identical computations")
		}
	}
	for _, out := range []string{js[0], mds[0]} {
		if strings.Contains(out, bt) || strings.Contains(out, ht) || strings.Contains(out, os.TempDir()) {
			t.Fatalf("output names a temporary path:\n%s", out)
		}
	}
	// A run against itself changes nothing.
	same, err := diff.Compute(bs, bs, diff.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(same.Verdict.Changed) != 0 || len(same.Regressions) != 0 || !same.Verdict.Passed {
		t.Fatalf("self-diff: %+v, %d regressions", same.Verdict, len(same.Regressions))
	}
}

// A workload run on one side only is added or removed, and an empty or
// missing runs root is an empty set.
func TestAddedRemovedAndEmpty(t *testing.T) {
	t.Parallel()
	_, bs := base(t)
	empty, err := diff.LoadSet(context.Background(), filepath.Join(t.TempDir(), "missing"), diff.Evidence{})
	if err != nil || len(empty.Runs) != 0 {
		t.Fatalf("missing root: %v, %d runs", err, len(empty.Runs))
	}
	added, err := diff.Compute(empty, bs, diff.Options{})
	if err != nil {
		t.Fatal(err)
	}
	removed, err := diff.Compute(bs, empty, diff.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range added.Workloads {
		if w.Status != diff.StatusAdded || w.Base != nil || w.Head == nil {
			t.Errorf("added: %s %s", w.Name, w.Status)
		}
	}
	for _, w := range removed.Workloads {
		if w.Status != diff.StatusRemoved || w.Head != nil {
			t.Errorf("removed: %s %s", w.Name, w.Status)
		}
	}
	if !added.Verdict.Passed || added.Verdict.Workloads != 4 || removed.Verdict.Workloads != 0 {
		t.Fatalf("verdicts: added %+v removed %+v", added.Verdict, removed.Verdict)
	}
	md := diff.Markdown(removed, diff.RenderOptions{})
	if !strings.Contains(md, "no longer runs at head") {
		t.Fatalf("removed workloads not reported:\n%s", md)
	}
}

// With several run directories for one workload, the newest is used and
// the others are noted.
func TestLoadSetPicksNewestRun(t *testing.T) {
	t.Parallel()
	bt, _ := base(t)
	root := t.TempDir()
	src, err := filepath.Glob(filepath.Join(bt, "runs", "ticket-triage", "ticket-triage-*"))
	if err != nil || len(src) != 1 {
		t.Fatalf("base run dirs: %v %v", src, err)
	}
	// The older one is another run of the workload (a slug the current
	// workload no longer compiles to); only the newest is read.
	newest := filepath.Base(src[0])
	for i, name := range []string{"ticket-triage-r1-old", newest} {
		dst := filepath.Join(root, "ticket-triage", name)
		if err := os.MkdirAll(dst, 0o755); err != nil {
			t.Fatal(err)
		}
		entries, _ := os.ReadDir(src[0])
		for _, e := range entries {
			data, _ := os.ReadFile(filepath.Join(src[0], e.Name()))
			if err := os.WriteFile(filepath.Join(dst, e.Name()), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		when := time.Unix(1_700_000_000+int64(i)*100, 0)
		if err := os.Chtimes(filepath.Join(dst, "gate.json"), when, when); err != nil {
			t.Fatal(err)
		}
	}
	ev, err := evidence(bt)
	if err != nil {
		t.Fatal(err)
	}
	set, err := diff.LoadSet(context.Background(), root, ev)
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Runs) != 1 || filepath.Base(set.Runs[0].Dir) != newest {
		t.Fatalf("picked %+v", set.Runs)
	}
	if strings.Join(set.Ignored, ",") != "ticket-triage/ticket-triage-r1-old" {
		t.Fatalf("ignored %v", set.Ignored)
	}
	if set.Runs[0].Kind != diff.KindBench || set.Runs[0].Bench == nil || !set.Runs[0].Passed() {
		t.Fatalf("run %+v", set.Runs[0])
	}
}

// bigDiff has so many workloads, regressions and flips that the report
// cannot fit in one comment.
func bigDiff() *diff.Diff {
	d := &diff.Diff{Base: "base", Head: "head"}
	for i := range 400 {
		name := fmt.Sprintf("workload-%03d", i)
		w := &diff.Workload{Name: name, Kind: diff.KindBench, Status: diff.StatusChanged,
			Base: &diff.Side{Passed: true, Status: "complete"}, Head: &diff.Side{Passed: i%2 == 0, Status: "complete"}}
		b := &diff.Bench{ParetoBase: []string{"a", "b"}, ParetoHead: []string{"b", "c"}, Joined: []string{"c"}, Left: []string{"a"}}
		for j := range 8 {
			id := fmt.Sprintf("system-%d-with-a-long-descriptive-name", j)
			b.Systems = append(b.Systems, &diff.System{ID: id, Pareto: "stays",
				Base: &diff.SystemStats{Passed: 10, Total: 10, Calls: 10}, Head: &diff.SystemStats{Passed: 7, Total: 10, Calls: 12}})
			b.Flips = append(b.Flips, diff.Flip{Subject: id, Case: "case-" + name, Base: diff.Pass, Head: diff.Fail})
			d.Regressions = append(d.Regressions, &diff.Regression{Workload: name, Subject: id, Metric: "passed",
				Base: diff.Rate{Passed: 10, Total: 10}, Head: diff.Rate{Passed: 7, Total: 10}, Drop: 0.3, Cases: []string{"case-" + name}})
		}
		w.Bench = b
		if i%2 == 1 {
			w.FailedGates = []diff.GateRule{{Name: "system-0 passes at least 10 cases", Message: strings.Repeat("long message ", 10)}}
		}
		d.Workloads = append(d.Workloads, w)
	}
	d.Settle()
	return d
}

// The comment stays under GitHub's limit, is one comment, and keeps, in
// order, the verdict, the Pareto diff and the promotion diff before the
// regressions, ending with a pointer to the rest.
func TestCommentFitsAndKeepsPriorityOrder(t *testing.T) {
	t.Parallel()
	d := bigDiff()
	const pointer = "See the job summary and the assay-pr-check artifact."
	full := diff.Markdown(d, diff.RenderOptions{Pointer: pointer})
	if ghci.Length(full) <= ghci.MaxCommentChars {
		t.Fatalf("test diff too small: %d", ghci.Length(full))
	}
	marker, _ := ghci.Marker(ghci.DefaultKey)
	c := ghci.Compose(marker, diff.Sections(d, diff.RenderOptions{Pointer: pointer}), ghci.MaxCommentChars, pointer)
	if n := ghci.Length(c); n > ghci.MaxCommentChars {
		t.Fatalf("comment is %d characters", n)
	}
	if !strings.HasPrefix(c, marker+"\n## "+diff.TitleVerdict+"\n") {
		t.Fatalf("comment does not start with the marker and the verdict:\n%.200s", c)
	}
	last := -1
	for _, title := range []string{diff.TitleVerdict, diff.TitlePareto} {
		i := strings.Index(c, "## "+title+"\n")
		if i <= last {
			t.Fatalf("section %q missing or out of order", title)
		}
		last = i
	}
	if !strings.Contains(c, "Report truncated") || !strings.Contains(c, pointer) {
		t.Fatalf("truncated comment lacks the notice or pointer:\n%s", c[len(c)-500:])
	}
	if strings.Count(c, "<details>") != strings.Count(c, "</details>") {
		t.Fatal("unbalanced <details> in the comment")
	}
}

// A smaller report keeps every priority section whole, the regressions
// inside <details>, capped at MaxRows with a pointer to the JSON.
func TestRegressionsCappedInsideDetails(t *testing.T) {
	t.Parallel()
	d := bigDiff()
	d.Workloads = d.Workloads[:3]
	d.Settle()
	md := diff.Markdown(d, diff.RenderOptions{MaxRows: 5})
	sec := md[strings.Index(md, "## "+diff.TitleRegressions):]
	sec = sec[:strings.Index(sec, "## "+diff.TitleReplays)]
	if !strings.HasPrefix(strings.TrimPrefix(sec, "## "+diff.TitleRegressions+"\n\n"), "<details><summary>3200 regressions") {
		t.Fatalf("regressions section:\n%s", sec)
	}
	if got := strings.Count(sec, "| workload-"); got != 5 {
		t.Fatalf("%d regression rows, want 5", got)
	}
	if !strings.Contains(sec, "and 3195 more in the diff JSON") || !bytes.HasSuffix([]byte(strings.TrimSpace(sec)), []byte("</details>")) {
		t.Fatalf("regressions section:\n%s", sec)
	}
	for _, title := range []string{diff.TitleVerdict, diff.TitlePareto, diff.TitlePromotions, diff.TitleRegressions, diff.TitleReplays, diff.TitleFlips} {
		if !strings.Contains(md, "## "+title+"\n") {
			t.Errorf("section %q missing", title)
		}
	}
}
