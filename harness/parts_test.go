package harness

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/bench"
	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/foundry"
	"github.com/algal-assay/assay/harness/gate"
	"github.com/algal-assay/assay/harness/rundir"
	"github.com/algal-assay/assay/harness/synth"
	"github.com/algal-assay/assay/harness/workload"
)

// synthWorkload writes and loads a synthetic triage bench.
func synthWorkload(t testing.TB, systems, cases int, gate bool) *workload.Workload {
	t.Helper()
	p, err := synth.Write(t.TempDir(), synth.Spec{Systems: systems, Cases: cases, Triage: filepath.Join("..", "fixtures", "triage"), Gate: gate})
	if err != nil {
		t.Fatal(err)
	}
	w, err := workload.Load(p)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func TestPartsCoverEveryCaseAndSystemOnce(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ cases, systems, parts int }{
		{1, 1, 1}, {256, 8, 1}, {257, 8, 2}, {256, 9, 2}, {600, 17, 9}, {20000, 64, 79 * 8},
	} {
		w := &workload.Workload{Kind: workload.KindBench, Cases: make([]workload.Case, tc.cases), Systems: make([]workload.System, tc.systems)}
		parts := w.Parts()
		if len(parts) != tc.parts {
			t.Errorf("%d cases x %d systems: %d parts, want %d", tc.cases, tc.systems, len(parts), tc.parts)
		}
		if w.InParts() != (tc.parts > 1) {
			t.Errorf("%d cases x %d systems: InParts %v", tc.cases, tc.systems, w.InParts())
		}
		seen := map[[2]int]int{}
		for i, p := range parts {
			if p.N != i+1 || p.CaseTo-p.CaseFrom > workload.PartCases || p.SystemTo-p.SystemFrom > workload.PartSystems || p.CaseTo <= p.CaseFrom || p.SystemTo <= p.SystemFrom {
				t.Fatalf("part %+v", p)
			}
			for c := p.CaseFrom; c < p.CaseTo; c++ {
				for s := p.SystemFrom; s < p.SystemTo; s++ {
					seen[[2]int{c, s}]++
				}
			}
		}
		if len(seen) != tc.cases*tc.systems {
			t.Errorf("%d cases x %d systems: parts cover %d pairs", tc.cases, tc.systems, len(seen))
		}
		for k, n := range seen {
			if n != 1 {
				t.Fatalf("pair %v in %d parts", k, n)
			}
		}
	}
}

func TestBenchInPartsWritesPartsAndTheirAggregate(t *testing.T) {
	t.Parallel()
	w := synthWorkload(t, 10, 600, true)
	b := newTestBench()
	o, err := Run(context.Background(), w, Options{Runner: b, Store: b, Out: t.TempDir(), Concurrency: 4})
	if err != nil {
		t.Fatal(err)
	}
	if !o.Verification.OK {
		t.Fatalf("verification: %v", o.Verification.Mismatches)
	}
	parts := o.Compiled.Parts
	if len(parts) != 6 {
		t.Fatalf("%d parts", len(parts))
	}
	for _, name := range []string{rundir.ReportFile, workload.ConfigFile} {
		if _, err := os.Stat(filepath.Join(o.RunDir, name)); err == nil {
			t.Errorf("a run in parts wrote %s", name)
		}
	}
	// Each part's report verifies on its own, and the aggregate sums them.
	passed := map[string]int64{}
	cost := map[string]float64{}
	for _, p := range parts {
		v, err := canon.ReadFile(filepath.Join(o.RunDir, p.ReportFile()), 0)
		if err != nil {
			t.Fatal(err)
		}
		bv, err := bench.Verify(context.Background(), v, b)
		if err != nil || !bv.OK {
			t.Fatalf("%s: %v %v", p.ReportFile(), err, bv)
		}
		rep, _ := bench.ParseReport(v)
		for _, s := range rep.Systems {
			passed[s.ID] += s.Passed
			cost[s.ID] += s.Usage.Cost
		}
	}
	agg, err := canon.ReadFile(filepath.Join(o.RunDir, workload.AggregateFile), 0)
	if err != nil {
		t.Fatal(err)
	}
	systems := agg.(map[string]any)["systems"].([]any)
	if len(systems) != 10 || agg.(map[string]any)["cases"] != 600.0 {
		t.Fatalf("aggregate: %d systems, %v cases", len(systems), agg.(map[string]any)["cases"])
	}
	for _, sv := range systems {
		s := sv.(map[string]any)
		id := s["id"].(string)
		if s["passed"] != float64(passed[id]) || s["total"] != 600.0 || s["usage"].(map[string]any)["cost"] != cost[id] {
			t.Errorf("%s: aggregate %v, parts sum to %d passed, cost %v", id, s, passed[id], cost[id])
		}
	}
	// The run keeps only the cases its gate messages name (the outcomes
	// rule's, and the first failures of each system), and of the
	// workload's cases only their count, ids and declared counts
	// (workload.Release).
	if o.Bench.Digest != agg.(map[string]any)["digest"] || len(o.Bench.Systems[0].Cases) != gate.MaxListedFailures+1 {
		t.Errorf("outcome report: digest %s, %d cases", o.Bench.Digest, len(o.Bench.Systems[0].Cases))
	}
	if o.Workload.Cases != nil || o.Workload.NumCases() != 600 || o.Workload.CaseID(599) != w.Cases[599].ID || len(o.Workload.PartDeclared(o.Compiled.Parts[0])) == 0 {
		t.Errorf("outcome workload: %d cases loaded, %d counted, last %q", len(o.Workload.Cases), o.Workload.NumCases(), o.Workload.CaseID(599))
	}
	if len(o.Gates) != 3 {
		t.Fatalf("gates %+v", o.Gates)
	}
	sum, err := os.ReadFile(filepath.Join(o.RunDir, rundir.SummaryFile))
	if err != nil || !strings.Contains(string(sum), "| sys-10 | ") {
		t.Errorf("summary: %v\n%s", err, sum)
	}
	// Re-deriving from the directory gives the aggregate the run wrote.
	c, err := workload.Compile(w, filepath.Dir(filepath.Dir(o.RunDir)), foundry.AdmitOptions{})
	if err != nil || c.Slug != o.Compiled.Slug {
		t.Fatalf("recompiled: %v", err)
	}
	d, err := RederiveParts(context.Background(), c, o.RunDir, b, EveryVerdict)
	if err != nil {
		t.Fatal(err)
	}
	if !sameJSON(d.Aggregate, agg) || !d.Verification.OK || len(d.Bench.Systems[0].Cases) != 600 {
		t.Errorf("re-derived aggregate differs or does not verify: %v", d.Verification.Mismatches)
	}
	// Keeping only the verdicts gate messages name re-derives the same
	// aggregate and gate, holding as few cases as the run did.
	g, err := RederiveParts(context.Background(), c, o.RunDir, b, GateVerdicts)
	if err != nil {
		t.Fatal(err)
	}
	if !sameJSON(g.Aggregate, agg) || !g.Verification.OK || len(g.Bench.Systems[0].Cases) != gate.MaxListedFailures+1 || len(g.Gates) != len(d.Gates) {
		t.Fatalf("gate-verdicts re-derivation: %d cases, %d gates, %v", len(g.Bench.Systems[0].Cases), len(g.Gates), g.Verification.Mismatches)
	}
	for i := range g.Gates {
		if g.Gates[i].Passed != d.Gates[i].Passed || g.Gates[i].Message != d.Gates[i].Message {
			t.Errorf("gate %d: %v %q, with every verdict %v %q", i, g.Gates[i].Passed, g.Gates[i].Message, d.Gates[i].Passed, d.Gates[i].Message)
		}
	}
	// The every-verdict derivation trimmed to the gate's verdicts is the
	// gate-verdicts derivation (ci verify's CheckRun folds the parts once),
	// and leaves the every-verdict report as it was.
	if f := GateVerdictsOf(c, d); !reflect.DeepEqual(f.Bench, g.Bench) || !reflect.DeepEqual(f.Gates, g.Gates) || len(d.Bench.Systems[0].Cases) != 600 {
		t.Errorf("GateVerdictsOf: %d cases (want %d), gates equal %v; every-verdict report left with %d", len(f.Bench.Systems[0].Cases), len(g.Bench.Systems[0].Cases), reflect.DeepEqual(f.Gates, g.Gates), len(d.Bench.Systems[0].Cases))
	}
}
