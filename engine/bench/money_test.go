package bench

import "testing"

func TestFormatCostHasFixedPrecision(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   float64
		want string
	}{
		{0.001 + 0.002152, "$0.003152"},
		{0.0031520000000000003, "$0.003152"},
		{0, "$0.000000"},
		{12.5, "$12.500000"},
	} {
		if got := FormatCost(tc.in); got != tc.want {
			t.Errorf("FormatCost(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
