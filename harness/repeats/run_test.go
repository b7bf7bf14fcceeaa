package repeats

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/bench"
	"github.com/algal-assay/assay/engine/evidence"
)

// report is a bench report of two systems over cases a, b and c, with the
// cases each system passed.
func report(digest string, cheap, frontier string) *bench.Report {
	system := func(id string, passed string, tokens int64) bench.SystemResult {
		s := bench.SystemResult{ID: id, ManifestDigest: "sha256:" + id, Usage: bench.Tally{TokensIn: tokens}, EffectCalls: 3}
		for _, c := range []string{"a", "b", "c"} {
			ok := strings.Contains(passed, c)
			s.Cases = append(s.Cases, bench.CaseResult{ID: c, Passed: ok})
			s.Total++
			if ok {
				s.Passed++
			}
		}
		return s
	}
	return &bench.Report{Workload: "sha256:cases", Digest: digest,
		Systems: []bench.SystemResult{system("cheap", cheap, 10), system("frontier", frontier, 100)}}
}

// benchRepeats is a Measure whose repeat rep gives reports[rep-1], or
// fails at repeat fail; it records the runners it was handed.
type benchRepeats struct {
	reports []*bench.Report
	fail    int
	runners []evidence.Runner
}

func (m *benchRepeats) Measure(rep int, runner evidence.Runner) (Evidence, error) {
	m.runners = append(m.runners, runner)
	if rep == m.fail {
		return Evidence{}, errors.New("the executor went away")
	}
	return Evidence{Bench: m.reports[rep-1]}, nil
}

func (m *benchRepeats) Aggregate(name string, reps []Evidence) (*Aggregate, error) {
	bs := make([]*bench.Report, len(reps))
	for i, ev := range reps {
		bs[i] = ev.Bench
	}
	return AggregateBench(name, bs)
}

// runnerAt hands every repeat no runner: the fake Measure runs nothing.
func runnerAt(int) (evidence.Runner, error) { return nil, nil }

func TestRunAggregatesSeveralRepeats(t *testing.T) {
	t.Parallel()
	m := &benchRepeats{reports: []*bench.Report{report("sha256:r1", "ab", "abc"), report("sha256:r2", "a", "abc"), report("sha256:r3", "ac", "ab")}}
	var asked []int
	reps, a, err := Run("triage", 3, m, func(rep int) (evidence.Runner, error) { asked = append(asked, rep); return nil, nil })
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(asked, []int{1, 2, 3}) || len(reps) != 3 || reps[1].Bench != m.reports[1] {
		t.Fatalf("repeats asked for %v, gave %d", asked, len(reps))
	}
	if a == nil || a.K != 3 || !slices.Equal(a.Reports, []string{"sha256:r1", "sha256:r2", "sha256:r3"}) {
		t.Fatalf("aggregate %+v", a)
	}
	cheap, frontier := a.Contender("cheap"), a.Contender("frontier")
	if cheap.Passes != 5 || cheap.Samples != 9 || frontier.Passes != 8 || frontier.Samples != 9 {
		t.Fatalf("cheap %d/%d, frontier %d/%d", cheap.Passes, cheap.Samples, frontier.Passes, frontier.Samples)
	}
	verdicts := func(c *Contender) string {
		var vs []string
		for _, rc := range c.Cases {
			vs = append(vs, fmt.Sprintf("%s=%s%v", rc.ID, rc.Verdict(), rc.PassedIn))
		}
		return strings.Join(vs, " ")
	}
	if got, want := verdicts(cheap), "a=pass[1 2 3] b=flaky[1] c=flaky[3]"; got != want {
		t.Errorf("cheap: %s, want %s", got, want)
	}
	if got, want := verdicts(frontier), "a=pass[1 2 3] b=pass[1 2 3] c=flaky[1 2]"; got != want {
		t.Errorf("frontier: %s, want %s", got, want)
	}
	if !slices.Equal(cheap.Flaky(), []string{"b", "c"}) || cheap.TokensIn != 30 || cheap.EffectCalls != 9 {
		t.Errorf("cheap flaky %v, tokens %d, calls %d", cheap.Flaky(), cheap.TokensIn, cheap.EffectCalls)
	}
	// The same evidence back, repeat by repeat.
	if ev := a.Evidence(); len(ev) != 3 || ev[2].Bench != m.reports[2] || ev[0].Foundry != nil {
		t.Errorf("evidence %+v", ev)
	}
}

func TestRunOfOneRepeatHasNoAggregate(t *testing.T) {
	t.Parallel()
	m := &benchRepeats{reports: []*bench.Report{report("sha256:r1", "ab", "abc")}}
	reps, a, err := Run("triage", 1, m, runnerAt)
	if err != nil || a != nil || len(reps) != 1 || reps[0].Bench != m.reports[0] {
		t.Fatalf("reps %v, aggregate %v, err %v", reps, a, err)
	}
}

// A failure names its repeat only when there are several, and stops the
// repeats after it.
func TestRunFailureNamesItsRepeat(t *testing.T) {
	t.Parallel()
	rs := []*bench.Report{report("sha256:r1", "a", "a"), report("sha256:r2", "a", "a"), report("sha256:r3", "a", "a")}
	m := &benchRepeats{reports: rs, fail: 2}
	if _, _, err := Run("triage", 3, m, runnerAt); err == nil || err.Error() != "repeat 2: the executor went away" || len(m.runners) != 2 {
		t.Fatalf("err %v after %d repeats", err, len(m.runners))
	}
	one := &benchRepeats{reports: rs, fail: 1}
	if _, _, err := Run("triage", 1, one, runnerAt); err == nil || err.Error() != "the executor went away" {
		t.Fatalf("err %v", err)
	}
	if _, _, err := Run("triage", 3, m, func(int) (evidence.Runner, error) { return nil, errors.New("no sessions") }); err == nil || err.Error() != "no sessions" {
		t.Fatalf("a runner that cannot be made: %v", err)
	}
}

// Repeats of other systems do not aggregate: the error names the file.
func TestAggregateBenchRefusesOtherSystems(t *testing.T) {
	t.Parallel()
	other := report("sha256:r2", "a", "a")
	other.Systems[1].ID = "mid"
	_, err := AggregateBench("triage", []*bench.Report{report("sha256:r1", "a", "a"), other})
	if err == nil || !strings.Contains(err.Error(), `report-r02.json: system 2 is "mid", not "frontier" of report.json`) {
		t.Fatalf("err %v", err)
	}
}
