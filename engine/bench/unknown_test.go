package bench_test

import (
	"testing"

	"github.com/algal-assay/assay/engine/bench"
)

// A call's tokens are unknown when its usage names a model but leaves a
// count out (a live server that omits usage); its cost is unknown then,
// and also when it spent tokens on a model the price card does not price.
// A record without usage (scripted, command) and a failure claim nothing.
func TestMeasureCountsUnknownUsage(t *testing.T) {
	t.Parallel()
	prices := map[string]bench.Price{"small-1": {Input: 1, Output: 2}}
	for _, tc := range []struct {
		name           string
		effect         map[string]any
		prices         map[string]bench.Price
		tokens, cost   int64
		attributionKey string
	}{
		{"counted and priced", map[string]any{"executor": "cheap", "output": "x", "usage": map[string]any{"model": "small-1", "tokensIn": 10.0, "tokensOut": 2.0}}, prices, 0, 0, "small-1"},
		{"server omitted usage", map[string]any{"executor": "cheap", "output": "x", "usage": map[string]any{"model": "small-1"}}, prices, 1, 1, "small-1"},
		{"half the counts", map[string]any{"executor": "cheap", "output": "x", "usage": map[string]any{"model": "small-1", "tokensIn": 10.0}}, nil, 1, 1, "small-1"},
		{"unpriced model", map[string]any{"executor": "cheap", "output": "x", "usage": map[string]any{"model": "large-1", "tokensIn": 10.0, "tokensOut": 2.0}}, prices, 0, 1, "large-1"},
		{"unpriced but no tokens spent", map[string]any{"executor": "cheap", "output": "x", "usage": map[string]any{"model": "large-1", "tokensIn": 0.0, "tokensOut": 0.0}}, prices, 0, 0, "large-1"},
		{"no price card: cost is not shown at all", map[string]any{"executor": "cheap", "output": "x", "usage": map[string]any{"model": "large-1", "tokensIn": 10.0, "tokensOut": 2.0}}, nil, 0, 0, "large-1"},
		{"scripted, no usage", map[string]any{"executor": "cheap", "output": "x"}, prices, 0, 0, "cheap"},
		{"failure", map[string]any{"executor": "cheap", "error": map[string]any{"code": "EFFECT_FAILED", "message": "503"}, "usage": map[string]any{"model": "small-1"}}, prices, 0, 0, "small-1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			receipt := map[string]any{"effects": []any{tc.effect, tc.effect}}
			calls, usage, attr := bench.Measure(receipt, tc.prices)
			if calls != 2 || usage.UnknownTokens != 2*tc.tokens || usage.UnknownCost != 2*tc.cost {
				t.Fatalf("calls %d, unknown tokens %d, unknown cost %d; want 2, %d, %d", calls, usage.UnknownTokens, usage.UnknownCost, 2*tc.tokens, 2*tc.cost)
			}
			a := attr[tc.attributionKey]
			if a.Calls != 2 || a.UnknownTokens != 2*tc.tokens || a.UnknownCost != 2*tc.cost {
				t.Fatalf("attribution %q: %+v", tc.attributionKey, a)
			}
			if usage.CostUnknown() != (tc.cost > 0) {
				t.Fatalf("CostUnknown %v", usage.CostUnknown())
			}
			// The report's own numbers stay upstream's closed shape.
			rep := &bench.Report{Systems: []bench.SystemResult{{ID: "s", Usage: usage, Attribution: attr}}}
			sys := rep.Value()["systems"].([]any)[0].(map[string]any)
			if u := sys["usage"].(map[string]any); len(u) != 3 {
				t.Fatalf("usage carries %v", u)
			}
		})
	}
}
