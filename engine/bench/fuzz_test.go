package bench

import (
	"context"
	"testing"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
)

// FuzzParseReport: whatever bytes arrive as a report, parsing never
// panics and every rejection carries a contract code.
func FuzzParseReport(f *testing.F) {
	cfg, r, _ := fixture(f)
	rep, err := Run(context.Background(), cfg, r, Options{})
	if err != nil {
		f.Fatal(err)
	}
	seed, _ := rep.Encode()
	f.Add(seed)
	f.Add([]byte(`{"contract":"algal.bench.v1"}`))
	f.Add([]byte(`{"contract":"algal.bench.v1","systems":[],"cases":[],"pareto":[]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := canon.Parse(data, 1<<20)
		if err != nil {
			return
		}
		if _, err := ParseReport(v); err != nil {
			if fault.CodeOf(err) == "" {
				t.Fatalf("rejection without a code: %v", err)
			}
		}
	})
}
