package bench

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/evidence"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/fault/faulttest"
	"github.com/algal-assay/assay/engine/manifest"
)

func axisEnv(name, dir string, program any) map[string]any {
	return map[string]any{"name": name, "dir": dir, "expr": map[string]any{"contract": "algal.expr.v1", "program": program}}
}

func resealed(v map[string]any) map[string]any {
	delete(v, "digest")
	d, _ := canon.Digest(v)
	v["digest"] = d
	return v
}

func hasMismatch(res *Verification, prefix string) bool {
	return slices.ContainsFunc(res.Mismatches, func(m string) bool { return strings.HasPrefix(m, prefix) })
}

// A report declaring axes must record axisValues on every system, naming
// exactly the declared axes.
func TestAxisValuesMustMatchTheDeclaredAxes(t *testing.T) {
	t.Parallel()
	cfg, r, _ := fixture(t)
	var err error
	if cfg.Axes, err = parseAxes([]any{axisEnv("quality", "up", []any{"get", "passed"}), axisEnv("calls", "down", []any{"get", "effectCalls"})}, "axes"); err != nil {
		t.Fatal(err)
	}
	rep, err := Run(context.Background(), cfg, r, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ParseReport(rep.Value()); err != nil {
		t.Fatalf("honest report: %v", err)
	}
	for _, tc := range []struct {
		name, field string
		forge       func(v map[string]any)
	}{
		{"omitted", "systems[1].axisValues", func(v map[string]any) { delete(sysOf(v, 1), "axisValues") }},
		{"one missing", "systems[0].axisValues", func(v map[string]any) { delete(sysOf(v, 0)["axisValues"].(map[string]any), "calls") }},
		{"renamed", "systems[0].axisValues", func(v map[string]any) {
			av := sysOf(v, 0)["axisValues"].(map[string]any)
			av["latency"] = av["calls"]
			delete(av, "calls")
		}},
		{"extra", "systems[0].axisValues", func(v map[string]any) { sysOf(v, 0)["axisValues"].(map[string]any)["latency"] = 1.0 }},
		{"not a number", "systems[0].axisValues.quality", func(v map[string]any) { sysOf(v, 0)["axisValues"].(map[string]any)["quality"] = "3" }},
		{"axes dropped", "systems[0]", func(v map[string]any) { delete(v, "axes") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := resealed(canon.Clone(rep.Value()).(map[string]any))
			tc.forge(v)
			_, err := ParseReport(v)
			var be *fault.Error
			if !errors.As(err, &be) || be.Code != fault.Parse || !strings.HasPrefix(be.Path, tc.field) {
				t.Fatalf("want PARSE_FAILED at %s, got %v", tc.field, err)
			}
		})
	}
}

// Axis programs see exactly the aggregate record: the case list and the
// axis values themselves are not among the names.
func TestAxisNamesAreExactlyTheAggregateFields(t *testing.T) {
	t.Parallel()
	for _, name := range axisNames {
		if _, err := parseAxes([]any{axisEnv("a", "up", []any{"get", name})}, "axes"); err != nil {
			t.Errorf("aggregate field %s rejected: %v", name, err)
		}
	}
	for _, name := range []string{"cases", "axisValues", "prices", "digest", "args"} {
		_, err := parseAxes([]any{axisEnv("a", "up", []any{"get", name})}, "axes")
		faulttest.Want(t, err, fault.AxisInvalid)
	}
	// Values of the wrong kind fail only when evaluated.
	cfg, r, _ := fixture(t)
	for _, program := range []any{[]any{"get", "id"}, []any{"get", "work"}, true} {
		cfg.Axes, _ = parseAxes([]any{axisEnv("a", "up", program)}, "axes")
		_, err := Run(context.Background(), cfg, r, Options{})
		faulttest.Want(t, err, fault.AxisInvalid)
	}
}

// Ties among survivors break by each axis in its direction, then by id.
func TestAxisParetoTiesBreakByAxesThenID(t *testing.T) {
	t.Parallel()
	axes, err := parseAxes([]any{axisEnv("q", "up", 0.0), axisEnv("c", "down", 0.0)}, "axes")
	if err != nil {
		t.Fatal(err)
	}
	s := func(id string, q, c float64) SystemResult {
		return SystemResult{ID: id, AxisValues: map[string]float64{"q": q, "c": c}}
	}
	for _, tc := range []struct {
		name    string
		systems []SystemResult
		want    string
	}{
		{"trade-off ordered by first axis", []SystemResult{s("a", 1, 1), s("b", 2, 2)}, "b,a"},
		{"dominated dropped", []SystemResult{s("a", 2, 1), s("b", 2, 2), s("c", 1, 1)}, "a"},
		{"exact ties ordered by id", []SystemResult{s("zz", 2, 1), s("m", 2, 1), s("a", 2, 1)}, "a,m,zz"},
		{"down axis: lower first", []SystemResult{s("b", 3, 5), s("a", 3, 5), s("c", 4, 9)}, "c,a,b"},
	} {
		if got := strings.Join(Pareto(tc.systems, nil, axes), ","); got != tc.want {
			t.Errorf("%s: got %s want %s", tc.name, got, tc.want)
		}
	}
}

// Costs sum in effect order within a case and then in case order, the
// order every implementation uses, so the recorded doubles agree.
func TestCostSummationOrder(t *testing.T) {
	t.Parallel()
	prices := map[string]Price{"m": {Input: 1, Output: 0}}
	eff := func(tin float64) any {
		return map[string]any{"usage": map[string]any{"model": "m", "tokensIn": tin, "tokensOut": 0.0}}
	}
	// 0.1, 0.2 and 0.3 dollars: (0.1+0.2)+0.3 differs from 0.1+(0.2+0.3).
	calls, usage, attr := Measure(map[string]any{"effects": []any{eff(100_000), eff(200_000), eff(300_000)}}, prices)
	a, b, c := 0.1, 0.2, 0.3
	if want := (a + b) + c; calls != 3 || usage.Cost != want || attr["m"].Cost != want {
		t.Errorf("effect order: usage %v, attribution %v, want %v", usage.Cost, attr["m"].Cost, want)
	}
	// Across cases the per-case sums add in case order.
	_, u1, a1 := Measure(map[string]any{"effects": []any{eff(100_000)}}, prices)
	_, u2, a2 := Measure(map[string]any{"effects": []any{eff(200_000), eff(300_000)}}, prices)
	s := SystemResult{Cases: []CaseResult{{Usage: u1, Attribution: a1}, {Usage: u2, Attribution: a2}}}
	s.aggregate()
	if want := a + (b + c); s.Usage.Cost != want || s.Attribution["m"].Cost != want {
		t.Errorf("case order: usage %v, attribution %v, want %v", s.Usage.Cost, s.Attribution["m"].Cost, want)
	}
}

// A receipt that ran the claimed manifest on other args (same outputs,
// same effects) is caught by the args binding alone.
func TestReceiptArgsBinding(t *testing.T) {
	t.Parallel()
	cfg, r, ev := fixture(t)
	rep, err := Run(context.Background(), cfg, r, Options{})
	if err != nil {
		t.Fatal(err)
	}
	v := canon.Clone(rep.Value()).(map[string]any)
	// cheap answers t1 and t3 both "billing" with identical usage.
	caseOf(v, 0, 0)["receiptDigest"], caseOf(v, 0, 2)["receiptDigest"] = caseOf(v, 0, 2)["receiptDigest"], caseOf(v, 0, 0)["receiptDigest"]
	res, err := Verify(context.Background(), resealed(v), ev)
	if err != nil {
		t.Fatal(err)
	}
	if res.OK || !hasMismatch(res, "systems[cheap].cases[t1]: receipt args differ") || !hasMismatch(res, "systems[cheap].cases[t3]: receipt args differ") {
		t.Fatalf("swapped receipts: %q", res.Mismatches)
	}
	if len(res.Mismatches) != 2 {
		t.Errorf("only the args binding should differ: %q", res.Mismatches)
	}
}

// checkedReceipts counts the receipts verification replayed: a receipt of
// another manifest is reported and not replayed, so it is not counted.
func TestReceiptOfAnotherManifestIsNotCounted(t *testing.T) {
	t.Parallel()
	cfg, r, ev := fixture(t)
	rep, err := Run(context.Background(), cfg, r, Options{})
	if err != nil {
		t.Fatal(err)
	}
	orig := r.receipts[rep.Systems[0].Cases[0].ReceiptDigest]
	other := canon.Clone(orig).(map[string]any)
	other["manifestDigest"] = "sha256:" + strings.Repeat("e", 64)
	d, _ := canon.Digest(other)
	r.receipts[d] = other
	v := canon.Clone(rep.Value()).(map[string]any)
	caseOf(v, 0, 0)["receiptDigest"] = d
	res, err := Verify(context.Background(), resealed(v), ev)
	if err != nil {
		t.Fatal(err)
	}
	if res.OK || !hasMismatch(res, "systems[cheap].cases[t1]: receipt "+d+" ran manifest") {
		t.Fatalf("foreign receipt: %q", res.Mismatches)
	}
	if res.CheckedReceipts != 11 {
		t.Errorf("checkedReceipts %d, want 11 (the foreign receipt is not replayed)", res.CheckedReceipts)
	}
}

// Admission errors must not depend on Go's map order: with several bad
// entries in one object the same one is named every time.
func TestConfigErrorsAreDeterministic(t *testing.T) {
	t.Parallel()
	m := mustManifest(t, "route")
	load := func(string) (*manifest.Manifest, error) { return m, nil }
	execs, prices := map[string]any{}, map[string]any{}
	for _, k := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		execs[k] = "nope:" + k
		prices[k] = map[string]any{"input": -1.0, "output": 0.0}
	}
	for _, tc := range []struct {
		name string
		cfg  func() map[string]any
	}{
		{"executors", func() map[string]any {
			return map[string]any{"contract": ConfigContract,
				"cases":   []any{map[string]any{"id": "t1", "args": map[string]any{"ticket": "x"}, "expect": map[string]any{"out": "billing"}}},
				"systems": []any{map[string]any{"id": "s", "manifest": "m.json", "executors": execs}}}
		}},
		{"prices", func() map[string]any {
			return map[string]any{"contract": ConfigContract,
				"cases":   []any{map[string]any{"id": "t1", "args": map[string]any{"ticket": "x"}, "expect": map[string]any{"out": "billing"}}},
				"systems": []any{map[string]any{"id": "s", "manifest": "m.json", "executors": map[string]any{"x": "cmd:x"}}},
				"prices":  prices}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			seen := map[string]bool{}
			for range 40 {
				_, err := ParseConfig(tc.cfg(), "/cfg", load)
				if err == nil {
					t.Fatal("admitted")
				}
				seen[err.Error()] = true
			}
			if len(seen) != 1 {
				t.Errorf("%d different errors for one config: %v", len(seen), seen)
			}
		})
	}
	// The same holds for a report's attribution object.
	cfg, r, _ := fixture(t)
	rep, err := Run(context.Background(), cfg, r, Options{})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for range 40 {
		v := canon.Clone(rep.Value()).(map[string]any)
		attr := map[string]any{}
		for _, k := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
			attr[k] = map[string]any{"calls": -1.0}
		}
		sysOf(v, 0)["attribution"] = attr
		_, err := ParseReport(v)
		if err == nil {
			t.Fatal("admitted")
		}
		seen[err.Error()] = true
	}
	if len(seen) != 1 {
		t.Errorf("%d different errors for one report: %v", len(seen), seen)
	}
}

// A scorer failure aborts the bench with SCORER_INVALID naming the first
// failing case in system then case order, whatever the concurrency.
func TestScorerAbortIsDeterministic(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for range 10 {
		cfg, r, _ := fixture(t)
		r.jitter = true
		cfg.Scorer, _ = evidence.CompileScorer(map[string]any{"contract": "algal.expr.v1", "program": 1.0}, "scorer")
		_, err := Run(context.Background(), cfg, r, Options{Concurrency: 8})
		faulttest.Want(t, err, fault.ScorerInvalid)
		seen[err.Error()] = true
	}
	if len(seen) != 1 || !strings.Contains(strings.Join(slices.Collect(maps.Keys(seen)), ""), `case "t1"`) {
		t.Errorf("scorer abort named %v, want case t1 every time", seen)
	}
}
