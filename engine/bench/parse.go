package bench

import (
	"github.com/algal-assay/assay/engine/evidence"
	"github.com/algal-assay/assay/engine/fault"
)

// ParseReport reads an algal.bench.v1 report strictly: closed key sets
// everywhere, bounded lists, well-formed ids, digests and counts, and
// axisValues present exactly when axes are.
func ParseReport(v any) (*Report, error) {
	raw, err := evidence.Object(v, "report")
	if err != nil {
		return nil, err
	}
	if err := evidence.ClosedKeys(raw, "report", "contract", "workload", "cases", "systems", "pareto", "prices", "scorer", "axes", "digest"); err != nil {
		return nil, err
	}
	if raw["contract"] != ReportContract {
		return nil, fail(fault.Parse, "contract", "must be %s", ReportContract)
	}
	r := &Report{}
	if err := r.parseWorkload(raw); err != nil {
		return nil, err
	}
	if err := parseSettings(raw, false, &r.Prices, &r.Scorer, &r.Axes); err != nil {
		return nil, err
	}
	ids := map[string]bool{}
	if r.Systems, err = evidence.Entries(raw["systems"], "systems", 1, MaxSystems, distinctSystems(r.Axes, ids)); err != nil {
		return nil, err
	}
	if r.Pareto, err = evidence.Entries(raw["pareto"], "pareto", 0, MaxSystems, paretoMembers(ids)); err != nil {
		return nil, err
	}
	return r, nil
}

// parseWorkload reads the report's workload: its digest, the report's
// own digest, and the cases.
func (r *Report) parseWorkload(raw map[string]any) (err error) {
	if r.Workload, err = evidence.DigestField(raw["workload"], "workload"); err != nil {
		return err
	}
	if r.Digest, err = evidence.DigestField(raw["digest"], "digest"); err != nil {
		return err
	}
	r.Cases, err = parseCases(raw["cases"], "cases")
	return err
}

// distinctSystems parses systems entries under axes, noting their ids in
// ids and rejecting an id seen before.
func distinctSystems(axes []Axis, ids map[string]bool) func(v any, at string) (SystemResult, error) {
	return func(v any, at string) (SystemResult, error) {
		s, err := parseSystem(v, at, axes)
		if err != nil {
			return SystemResult{}, err
		}
		if ids[s.ID] {
			return SystemResult{}, fail(fault.Parse, at+".id", "duplicate system id %q", s.ID)
		}
		ids[s.ID] = true
		return *s, nil
	}
}

// paretoMembers parses pareto entries: ids of systems in ids, each named
// once.
func paretoMembers(ids map[string]bool) func(v any, at string) (string, error) {
	seen := map[string]bool{}
	return func(v any, at string) (string, error) {
		id, err := evidence.ID(v, at)
		if err != nil {
			return "", err
		}
		if !ids[id] {
			return "", fail(fault.Parse, at, "names unknown system %q", id)
		}
		if seen[id] {
			return "", fail(fault.Parse, at, "names system %q twice", id)
		}
		seen[id] = true
		return id, nil
	}
}

func parseTally(v any, field string, withCalls bool) (Tally, error) {
	m, err := evidence.Object(v, field)
	if err != nil {
		return Tally{}, err
	}
	keys := []string{"tokensIn", "tokensOut", "cost"}
	if withCalls {
		keys = append(keys, "calls")
	}
	if err := evidence.ClosedKeys(m, field, keys...); err != nil {
		return Tally{}, err
	}
	var t Tally
	if withCalls {
		if t.Calls, err = evidence.CountField(m["calls"], field+".calls"); err != nil {
			return Tally{}, err
		}
	}
	if t.TokensIn, err = evidence.CountField(m["tokensIn"], field+".tokensIn"); err != nil {
		return Tally{}, err
	}
	if t.TokensOut, err = evidence.CountField(m["tokensOut"], field+".tokensOut"); err != nil {
		return Tally{}, err
	}
	if t.Cost, err = evidence.NonNegative(m["cost"], field+".cost"); err != nil {
		return Tally{}, err
	}
	return t, nil
}

func parseAttribution(v any, field string) (map[string]Tally, error) {
	return evidence.Keyed(v, field, "attribution", func(v any, at string) (Tally, error) { return parseTally(v, at, true) })
}

func parseSystem(v any, at string, axes []Axis) (*SystemResult, error) {
	m, err := systemObject(v, at, axes)
	if err != nil {
		return nil, err
	}
	s := &SystemResult{}
	if err := s.parseIdentity(m, at); err != nil {
		return nil, err
	}
	if err := s.parseTotals(m, at); err != nil {
		return nil, err
	}
	if axes != nil {
		if s.AxisValues, err = parseAxisValues(m["axisValues"], at+".axisValues", axes); err != nil {
			return nil, err
		}
	}
	if s.Cases, err = evidence.Entries(m["cases"], at+".cases", 1, MaxCases, parseCaseResult); err != nil {
		return nil, err
	}
	return s, nil
}

// systemObject reads a system's object: its keys are closed, and hold
// axisValues exactly when the report declares axes.
func systemObject(v any, at string, axes []Axis) (map[string]any, error) {
	m, err := evidence.Object(v, at)
	if err != nil {
		return nil, err
	}
	keys := []string{"id", "manifestDigest", "manifestKey", "passed", "total", "effectCalls", "work", "usage", "attribution", "cases"}
	if axes != nil {
		keys = append(keys, "axisValues")
		if _, ok := m["axisValues"]; !ok {
			return nil, fail(fault.Parse, at+".axisValues", "missing: the report declares axes")
		}
	}
	return m, evidence.ClosedKeys(m, at, keys...)
}

// parseIdentity reads which system s is: its id and the manifest it ran.
func (s *SystemResult) parseIdentity(m map[string]any, at string) (err error) {
	if s.ID, err = evidence.ID(m["id"], at+".id"); err != nil {
		return err
	}
	if s.ManifestDigest, err = evidence.DigestField(m["manifestDigest"], at+".manifestDigest"); err != nil {
		return err
	}
	if s.ManifestKey, _ = m["manifestKey"].(string); s.ManifestKey == "" || len(s.ManifestKey) > 256 {
		return fail(fault.Parse, at+".manifestKey", "must be a manifest key")
	}
	return nil
}

// parseTotals reads system s's totals: counts, work, usage and
// attribution.
func (s *SystemResult) parseTotals(m map[string]any, at string) (err error) {
	for _, f := range []struct {
		key string
		dst *int64
	}{{"passed", &s.Passed}, {"total", &s.Total}, {"effectCalls", &s.EffectCalls}} {
		if *f.dst, err = evidence.CountField(m[f.key], at+"."+f.key); err != nil {
			return err
		}
	}
	if s.Passed > s.Total {
		return fail(fault.Parse, at+".passed", "exceeds total")
	}
	if s.Work, err = evidence.ParseWork(m["work"], at+".work"); err != nil {
		return err
	}
	if s.Usage, err = parseTally(m["usage"], at+".usage", false); err != nil {
		return err
	}
	s.Attribution, err = parseAttribution(m["attribution"], at+".attribution")
	return err
}

// parseAxisValues reads a system's axis values: a number for each
// declared axis and nothing else.
func parseAxisValues(v any, field string, axes []Axis) (map[string]float64, error) {
	av, err := evidence.Object(v, field)
	if err != nil {
		return nil, err
	}
	if len(av) != len(axes) {
		return nil, fail(fault.Parse, field, "must hold exactly one value per declared axis")
	}
	values := make(map[string]float64, len(axes))
	for _, a := range axes {
		f, ok := av[a.Name].(float64)
		if !ok {
			return nil, fail(fault.Parse, field+"."+a.Name, "must be a number")
		}
		values[a.Name] = f
	}
	return values, nil
}

func parseCaseResult(v any, at string) (CaseResult, error) {
	m, cl, err := evidence.ParseCaseRecord(v, at, "id", "passed", "outcome", "outputs", "expect", "receiptDigest", "effectCalls", "work", "usage", "attribution")
	if err != nil {
		return CaseResult{}, err
	}
	c := CaseResult{ID: cl.ID, Passed: cl.Passed, Outcome: cl.Outcome, Outputs: cl.Outputs, Expect: cl.Expect,
		ReceiptDigest: cl.ReceiptDigest, Work: cl.Work}
	if c.EffectCalls, err = evidence.CountField(m["effectCalls"], at+".effectCalls"); err != nil {
		return CaseResult{}, err
	}
	if c.Usage, err = parseTally(m["usage"], at+".usage", false); err != nil {
		return CaseResult{}, err
	}
	if c.Attribution, err = parseAttribution(m["attribution"], at+".attribution"); err != nil {
		return CaseResult{}, err
	}
	return c, nil
}
