package harness

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/foundry"
	"github.com/algal-assay/assay/harness/repeats"
	"github.com/algal-assay/assay/harness/rundir"
	"github.com/algal-assay/assay/harness/workload"
)

// writeFlaky writes testdata/flaky-triage.bench.yaml.tmpl, which scripts two systems whose answers differ per repeat:
//
//	case  cheap passes in   frontier passes in
//	a     1, 2, 3           1, 2, 3
//	b     1, 3              1, 2, 3
//	c     2                 1, 2
//	d     -                 1, 2, 3
//
// with gate as its gate: block, and returns its path.
func writeFlaky(t *testing.T, gate string) string {
	t.Helper()
	manifest, err := filepath.Abs(filepath.Join("..", "fixtures", "triage", "triage-single.algal.json"))
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := os.ReadFile(filepath.Join("testdata", "flaky-triage.bench.yaml.tmpl"))
	if err != nil {
		t.Fatal(err)
	}
	src := strings.NewReplacer("MANIFEST", manifest, "GATE", gate).Replace(string(tmpl))
	path := filepath.Join(t.TempDir(), "flaky.bench.yaml")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func runFlaky(t *testing.T, gate string, concurrency int) (*Outcome, *testBench) {
	t.Helper()
	return runWorkloadFile(t, writeFlaky(t, gate), concurrency)
}

// storedRepeatReports reads a repeated run's repeats.json and every
// repeat's report (or budget account) from its run directory.
func storedRepeatReports(t *testing.T, dir string) (stored any, reports []any) {
	t.Helper()
	k, stored, err := StoredRepeats(dir)
	if err != nil || k != 3 {
		t.Fatalf("stored repeats %d: %v", k, err)
	}
	for _, f := range RepeatReportFiles(dir, k) {
		v, err := canon.ReadFile(filepath.Join(dir, f), 0)
		if err != nil {
			t.Fatal(err)
		}
		reports = append(reports, v)
	}
	return stored, reports
}

func TestRepeatsEstimatesFromScriptedAnswers(t *testing.T) {
	t.Parallel()
	o, _ := runFlaky(t, "", 2)
	if !o.Passed() || !o.Verification.OK {
		t.Fatalf("passed %v, verification %v", o.Passed(), o.Verification.Mismatches)
	}
	a := o.Repeats
	if a == nil || a.K != 3 || len(a.Reports) != 3 {
		t.Fatalf("aggregate %+v", a)
	}
	// Hand-computed from the table above (n = 3 samples per case).
	for _, tc := range []struct {
		id            string
		passes        int
		rate          string
		atK, hatK     [3]string
		flaky         []string
		passedIn      map[string][]int
		verdicts      string
		paretoMembers bool
	}{
		// cheap: c = 3, 2, 1, 0.
		// pass@2 = mean(1, 1-C(1,2)/C(3,2)=1, 1-C(2,2)/C(3,2)=2/3, 0) = 2/3.
		// pass^2 = mean(1, C(2,2)/3=1/3, 0, 0) = 1/3; pass^3 = 1/4 (k above
		// the passes of b, c and d: 0 for each).
		{id: "cheap", passes: 6, rate: "1/2", atK: [3]string{"1/2", "2/3", "3/4"}, hatK: [3]string{"1/2", "1/3", "1/4"},
			flaky: []string{"b", "c"}, passedIn: map[string][]int{"a": {1, 2, 3}, "b": {1, 3}, "c": {2}, "d": nil}, verdicts: "pass flaky flaky fail"},
		// frontier: c = 3, 3, 2, 3. pass^2 = mean(1, 1, 1/3, 1) = 5/6;
		// pass^3 = 3/4; pass@k = 1 for k >= 2.
		{id: "frontier", passes: 11, rate: "11/12", atK: [3]string{"11/12", "1", "1"}, hatK: [3]string{"11/12", "5/6", "3/4"},
			flaky: []string{"c"}, passedIn: map[string][]int{"a": {1, 2, 3}, "b": {1, 2, 3}, "c": {1, 2}, "d": {1, 2, 3}}, verdicts: "pass pass flaky pass", paretoMembers: true},
	} {
		c := a.Contender(tc.id)
		if c == nil {
			t.Fatalf("no contender %s", tc.id)
		}
		if c.Passes != tc.passes || c.Samples != 12 || c.PassRate().Fraction() != tc.rate {
			t.Errorf("%s: %d/%d rate %s, want %d/12 rate %s", tc.id, c.Passes, c.Samples, c.PassRate().Fraction(), tc.passes, tc.rate)
		}
		for k := 1; k <= 3; k++ {
			if got := c.PassAtK(k).Fraction(); got != tc.atK[k-1] {
				t.Errorf("%s pass@%d = %s, want %s", tc.id, k, got, tc.atK[k-1])
			}
			if got := c.PassHatK(k).Fraction(); got != tc.hatK[k-1] {
				t.Errorf("%s pass^%d = %s, want %s", tc.id, k, got, tc.hatK[k-1])
			}
		}
		// More samples than were taken: n/a, never 1.
		if c.PassHatK(4).Defined() || c.PassAtK(4).Defined() {
			t.Errorf("%s: pass^4 from 3 samples is defined", tc.id)
		}
		if !slices.Equal(c.Flaky(), tc.flaky) {
			t.Errorf("%s flaky %v, want %v", tc.id, c.Flaky(), tc.flaky)
		}
		var verdicts []string
		for _, rc := range c.Cases {
			verdicts = append(verdicts, rc.Verdict())
			if !slices.Equal(rc.PassedIn, tc.passedIn[rc.ID]) {
				t.Errorf("%s case %s passed in %v, want %v", tc.id, rc.ID, rc.PassedIn, tc.passedIn[rc.ID])
			}
		}
		if strings.Join(verdicts, " ") != tc.verdicts {
			t.Errorf("%s verdicts %v, want %s", tc.id, verdicts, tc.verdicts)
		}
		if slices.Contains(a.Pareto, tc.id) != tc.paretoMembers {
			t.Errorf("%s on the pooled Pareto set %v: %v", tc.id, a.Pareto, !tc.paretoMembers)
		}
	}
	// Every repeat is an ordinary report; they differ because the answers
	// did.
	if a.Reports[0] == a.Reports[1] || a.Reports[1] == a.Reports[2] {
		t.Fatalf("repeats collapsed: %v", a.Reports)
	}
	for _, f := range []string{rundir.ReportFile, "report-r02.json", "report-r03.json", repeats.File, "scripted-cheap.json", "scripted-cheap-r02.json", "scripted-cheap-r03.json", "scripted-frontier-r03.json"} {
		if _, err := os.Stat(filepath.Join(o.RunDir, f)); err != nil {
			t.Errorf("run directory lacks %s", f)
		}
	}
	summary, err := os.ReadFile(filepath.Join(o.RunDir, rundir.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| system | passed | pass rate | pass^3 | pass@3 | flaky |", "| cheap | 6/12 | 0.500 | 0.250 | 0.750 | 2 (b, c) |",
		"- cheap: b (passed in repeats 1, 3 of 3)", "- frontier: c (passed in repeats 1, 2 of 3)"} {
		if !strings.Contains(string(summary), want) {
			t.Errorf("summary.md lacks %q:\n%s", want, summary)
		}
	}
}

func TestRepeatsGateRules(t *testing.T) {
	t.Parallel()
	o, _ := runFlaky(t, `gate:
  min-pass-rate: { cheap: 0.5, frontier: 0.92 }
  min-pass-hat-k: { frontier: { k: 3, rate: 0.75 }, cheap: { k: 2, rate: 0.34 } }
  max-flaky: { cheap: 1, frontier: 1 }
  outcomes: { cheap: { a: pass, b: flaky, d: fail, c: pass } }
  min-passed: { cheap: 2, frontier: 4 }
  on-pareto: [frontier]
`, 2)
	got := map[string]bool{}
	for _, g := range o.Gates {
		got[g.Rule.Name()] = g.Passed
		if g.Message == "" {
			t.Errorf("%s: no message", g.Rule.Name())
		}
	}
	want := map[string]bool{
		"cheap passes at least 0.5 of its case runs":     true,  // 6/12
		"frontier passes at least 0.92 of its case runs": false, // 11/12 < 0.92
		"frontier has pass^3 at least 0.75":              true,  // exactly 3/4
		"cheap has pass^2 at least 0.34":                 false, // 1/3
		"cheap has at most 1 flaky cases":                false, // b, c
		"frontier has at most 1 flaky cases":             true,
		"cheap case a is expected to pass":               true,
		"cheap case b is expected to flaky":              true,
		"cheap case d is expected to fail":               true,
		"cheap case c is expected to pass":               false,
		"cheap passes at least 2 cases":                  true,  // 6 over 3 repeats: 2 on average
		"frontier passes at least 4 cases":               false, // 11/3
		"frontier is on the Pareto set":                  true,
	}
	for name, pass := range want {
		if p, ok := got[name]; !ok || p != pass {
			t.Errorf("%s: passed %v (present %v), want %v", name, p, ok, pass)
		}
	}
	if len(got) != len(want) {
		t.Errorf("rules %v", got)
	}
	for _, g := range o.Gates {
		if g.Rule.Name() == "cheap has at most 1 flaky cases" && !strings.Contains(g.Message, "b (passed in repeats 1, 3 of 3); c (passed in repeat 2 of 3)") {
			t.Errorf("max-flaky message: %s", g.Message)
		}
	}
	if o.Passed() {
		t.Fatal("a failing rule passed the workload")
	}
}

func TestRepeatsLoadRejectsVacuousRules(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ edit, want string }{
		{"repeats: 3\n|repeats: 2\n", "!repeats lists 3 response(s), one per repeat, but the workload runs 2 repeat(s)"},
		{"repeats: 3\n|repeats: 1\ngate: { max-flaky: { cheap: 1 } }\n", "gate.max-flaky: a case run once cannot be flaky"},
		{"GATE|gate: { max-flaky: { cheap: 4 } }", "gate.max-flaky.cheap"},
		{"GATE|gate: { min-pass-hat-k: { cheap: { k: 4, rate: 0.5 } } }", "pass^4 needs at least 4 samples of every case, but the workload runs 3 repeat(s)"},
		{"GATE|gate: { min-pass-rate: { cheap: 0 } }", "a number above 0"},
		{"GATE|gate: { min-pass-hat-k: { cheap: { k: 2 } } }", "rate"},
		{"GATE|gate: { outcomes: { cheap: { a: sometimes } } }", `"flaky"`},
		{"repeats: 3\n|repeats: 33\n", "repeats"},
		{"route: billing }\n      frontier: { route: billing }|route: billing }\n      frontier: { route: !repeats [billing] }", "!repeats lists 1"},
	} {
		old, repl, _ := strings.Cut(tc.edit, "|")
		path := writeFlaky(t, "GATE")
		data, _ := os.ReadFile(path)
		src := strings.Replace(string(data), old, repl, 1)
		src = strings.Replace(src, "GATE", "", 1)
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := workload.Load(path)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.edit, err, tc.want)
		}
	}
	// A rule about flakiness in a workload that runs once always holds.
	path := writeFlaky(t, "")
	data, _ := os.ReadFile(path)
	src := strings.Replace(string(data), "repeats: 3\n", "", 1)
	src = strings.NewReplacer("!repeats [technical, billing, technical]", "technical", "!repeats [other, account, billing]", "other", "!repeats [account, account, other]", "account").Replace(src)
	if err := os.WriteFile(path, []byte(src+"gate: { outcomes: { cheap: { a: flaky } } }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := workload.Load(path); err == nil || !strings.Contains(err.Error(), "a case run once cannot be flaky") {
		t.Errorf("flaky outcome with one repeat: %v", err)
	}
}

func TestRepeatsFlagOverridesAndChecks(t *testing.T) {
	t.Parallel()
	w := loadWorkload(t, writeFlaky(t, ""))
	if _, err := w.WithRepeats(2); err == nil || !strings.Contains(err.Error(), "--repeats 2") {
		t.Fatalf("--repeats 2 against 3-entry !repeats lists: %v", err)
	}
	c1, err := workload.Compile(w, t.TempDir(), foundry.AdmitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if same, _ := w.WithRepeats(3); same != w {
		t.Fatal("--repeats equal to the workload's is not a no-op")
	}
	// The repeat count decides the run directory.
	w2 := *w
	w2.Repeats = 1
	w2.Cases = nil
	for _, c := range w.Cases {
		c.PerRepeat = nil
		w2.Cases = append(w2.Cases, c)
	}
	c2, err := workload.Compile(&w2, t.TempDir(), foundry.AdmitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c1.Slug == c2.Slug {
		t.Fatal("the repeat count does not enter the run directory's identity")
	}
}

func TestRepeatsAreByteIdenticalAtAnyConcurrency(t *testing.T) {
	t.Parallel()
	var first []byte
	for _, n := range []int{1, 32} {
		o, _ := runFlaky(t, "", n)
		b, err := os.ReadFile(filepath.Join(o.RunDir, repeats.File))
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = b
			continue
		}
		if string(b) != string(first) {
			t.Fatalf("repeats.json differs at concurrency %d", n)
		}
	}
}

func TestRepeatsRederiveAndForgery(t *testing.T) {
	t.Parallel()
	o, b := runFlaky(t, "gate: { max-flaky: { frontier: 1 } }\n", 2)
	stored, reports := storedRepeatReports(t, o.RunDir)
	d, err := RederiveRepeats(context.Background(), o.Compiled, reports, b)
	if err != nil {
		t.Fatal(err)
	}
	if !d.Verification.OK || !d.GatesPassed() {
		t.Fatalf("re-derived: %v %v", d.Verification.Mismatches, d.Gates)
	}
	if ds := RepeatsDisagreements(stored, d.Repeats); len(ds) != 0 {
		t.Fatalf("an honest repeats.json disagrees: %v", ds)
	}
	// Forge pass^3 and the flaky list of cheap.
	m := stored.(map[string]any)
	cheap := m["contenders"].([]any)[0].(map[string]any)
	cheap["estimates"].([]any)[2].(map[string]any)["passHatK"] = map[string]any{"exact": "1", "value": 1.0}
	cheap["flaky"] = []any{}
	ds := RepeatsDisagreements(m, d.Repeats)
	joined := strings.Join(ds, "\n")
	for _, want := range []string{
		`repeats.json: contenders[cheap].estimates[k=3].passHatK.exact is "1", but re-deriving it from the reports gives "1/4"`,
		`repeats.json: contenders[cheap].flaky is [], but re-deriving it from the reports gives ["b","c"]`,
	} {
		if !strings.Contains(joined, want) {
			t.Errorf("forgery not named: want %q in\n%s", want, joined)
		}
	}
	// A forged report fails verification naming its file.
	rep := reports[1].(map[string]any)
	rep["systems"].([]any)[0].(map[string]any)["passed"] = 4.0
	d, err = RederiveRepeats(context.Background(), o.Compiled, reports, b)
	if err != nil {
		t.Fatal(err)
	}
	if d.Verification.OK || !strings.Contains(strings.Join(d.Verification.Mismatches, "\n"), "report-r02.json: ") {
		t.Fatalf("forged repeat 2 verifies: %v", d.Verification.Mismatches)
	}
}

// flakyFoundry writes intent-select with a cascade that is unsure about
// va-feature in repeat 2 and escalates to a large model that gets it
// wrong: the cascade wins repeats 1 and 3, the large model repeat 2
// (tied on validation 2/3, fewer agent calls), and the pooled evidence
// promotes the cascade (validation 8/9 against 6/9); it returns the path.
func flakyFoundry(t *testing.T, gate string) string {
	t.Helper()
	return copyFixture(t, "intent-select.foundry.yaml", func(body string) string {
		body = strings.Replace(body, "revision: 1\n", "revision: 1\nrepeats: 3\n", 1)
		old := "      small: { intent: other, screen: other }\n      large: { intent: how-to }\n"
		if !strings.Contains(body, old) {
			t.Fatal("intent-select changed: va-feature's responses are not where this test expects them")
		}
		body = strings.Replace(body, old, "      small: { intent: other, screen: !repeats [other, unsure, other] }\n      large: { intent: how-to, escalate: !repeats [!queue [], how-to, !queue []] }\n", 1)
		return body[:strings.Index(body, "gate:")] + gate
	})
}

func TestRepeatsFoundryPromotesOnPooledValidation(t *testing.T) {
	t.Parallel()
	o, b := runWorkloadFile(t, flakyFoundry(t, `gate:
  promoted: organism:assay-intent-cascade
  min-validation-rate: 1
  min-holdout-rate: 1
  max-flaky: 1
  outcomes: { va-feature: flaky, ho-paste-freeze: pass }
`), 4)
	if !o.Verification.OK {
		t.Fatalf("verification: %v", o.Verification.Mismatches)
	}
	a := o.Repeats
	cascade, large := a.Contender("organism:assay-intent-cascade"), a.Contender("organism:assay-intent-large")
	if a.Promoted != cascade.ManifestDigest || !slices.Equal(cascade.PromotedIn, []int{1, 3}) || !slices.Equal(large.PromotedIn, []int{2}) {
		t.Fatalf("promoted %s; cascade won %v, large %v", a.Promoted, cascade.PromotedIn, large.PromotedIn)
	}
	if cascade.Validation != (repeats.Pooled{Samples: 9, Passes: 8}) || large.Validation != (repeats.Pooled{Samples: 9, Passes: 6}) {
		t.Fatalf("validation: cascade %+v, large %+v", cascade.Validation, large.Validation)
	}
	// The holdout ran on each repeat's own winner: the cascade's pooled
	// holdout is repeats 1 and 3 only.
	if h := a.Holdout; h.Samples != 4 || h.Passes != 4 || h.ManifestKey != cascade.ID {
		t.Fatalf("holdout %+v", h)
	}
	if got := o.Repeats.FoundryResults()[1].Report.Promoted; got != large.ManifestDigest {
		t.Fatalf("repeat 2 promoted %s, not the large model", got)
	}
	want := map[string]bool{
		"promotes organism:assay-intent-cascade":                      true,
		"promoted validation pass rate is at least 1":                 false,
		"holdout pass rate is at least 1":                             true,
		"the promoted candidate has at most 1 flaky cases":            true,
		"promoted candidate case va-feature is expected to flaky":     true,
		"promoted candidate case ho-paste-freeze is expected to pass": true,
	}
	for _, g := range o.Gates {
		if p, ok := want[g.Rule.Name()]; !ok || p != g.Passed {
			t.Errorf("%s: passed %v (%s)", g.Rule.Name(), g.Passed, g.Message)
		}
	}
	if len(o.Gates) != len(want) {
		t.Fatalf("%d verdicts", len(o.Gates))
	}
	summary, _ := os.ReadFile(filepath.Join(o.RunDir, rundir.SummaryFile))
	for _, s := range []string{"| organism:assay-intent-cascade | yes | 8/9 | 9/9 | 4/4 |", "its own repeats promoted it in 2 of 3", "va-feature (passed in repeats 1, 3 of 3)"} {
		if !strings.Contains(string(summary), s) {
			t.Errorf("summary.md lacks %q:\n%s", s, summary)
		}
	}

	// Re-derived from the files, the aggregate is the one written.
	stored, reports := storedRepeatReports(t, o.RunDir)
	d, err := RederiveRepeats(context.Background(), o.Compiled, reports, b)
	if err != nil || !d.Verification.OK {
		t.Fatalf("%v %v", err, d.Verification)
	}
	if ds := RepeatsDisagreements(stored, d.Repeats); len(ds) > 0 {
		t.Fatal(ds)
	}
	stored.(map[string]any)["promoted"] = large.ManifestDigest
	if ds := RepeatsDisagreements(stored, d.Repeats); len(ds) != 1 || !strings.Contains(ds[0], "repeats.json: promoted is") {
		t.Fatalf("forged promotion: %v", ds)
	}
}
