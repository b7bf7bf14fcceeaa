package passk

import (
	"math"
	"math/big"
	"testing"

	"github.com/algal-assay/assay/engine/canon"
)

// Values worked by hand from the binomials.
func TestEstimators(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		n, c, k       int
		atK, hatK     string
		atKF, hatKF   string
		rate, rateStr string
	}{
		// C(5,2)=10, C(2,2)=1, C(3,2)=3.
		{n: 5, c: 3, k: 2, atK: "9/10", hatK: "3/10", atKF: "0.900", hatKF: "0.300", rate: "3/5"},
		// k = n: pass@n is "passed at least once", pass^n "passed every time".
		{n: 3, c: 1, k: 3, atK: "1", hatK: "0", atKF: "1.000", hatKF: "0.000", rate: "1/3"},
		{n: 3, c: 3, k: 3, atK: "1", hatK: "1", rate: "1"},
		{n: 3, c: 0, k: 3, atK: "0", hatK: "0", rate: "0"},
		// k above the number of passes: no k samples can all pass.
		// C(4,2)=6, C(3,2)=3.
		{n: 4, c: 1, k: 2, atK: "1/2", hatK: "0", rate: "1/4"},
		// The example: 9 passes in 10. C(10,5)=252, C(9,5)=126.
		{n: 10, c: 9, k: 5, atK: "1", hatK: "1/2", rate: "9/10"},
		{n: 10, c: 9, k: 10, atK: "1", hatK: "0", rate: "9/10"},
		// k = 1 is the pass rate.
		{n: 7, c: 5, k: 1, atK: "5/7", hatK: "5/7", atKF: "0.714", hatKF: "0.714", rate: "5/7"},
		// C(32,16) = 601080390, C(31,16) = 300540195.
		{n: 32, c: 31, k: 16, atK: "1", hatK: "1/2", rate: "31/32"},
	} {
		at, hat := PassAtK(tc.n, tc.c, tc.k), PassHatK(tc.n, tc.c, tc.k)
		if at.Fraction() != tc.atK || hat.Fraction() != tc.hatK {
			t.Errorf("n=%d c=%d k=%d: pass@k %s pass^k %s, want %s and %s", tc.n, tc.c, tc.k, at.Fraction(), hat.Fraction(), tc.atK, tc.hatK)
		}
		if tc.atKF != "" && (at.String() != tc.atKF || hat.String() != tc.hatKF) {
			t.Errorf("n=%d c=%d k=%d: rendered %s and %s, want %s and %s", tc.n, tc.c, tc.k, at, hat, tc.atKF, tc.hatKF)
		}
		if r := Rate(tc.c, tc.n); r.Fraction() != tc.rate {
			t.Errorf("rate %d/%d = %s, want %s", tc.c, tc.n, r.Fraction(), tc.rate)
		}
		if tc.k == 1 && at.Fraction() != Rate(tc.c, tc.n).Fraction() {
			t.Errorf("pass@1 %s is not the pass rate", at.Fraction())
		}
	}
}

func TestTooFewSamplesIsUndefined(t *testing.T) {
	t.Parallel()
	for _, e := range []Estimate{PassAtK(2, 2, 3), PassHatK(2, 2, 3), PassAtK(0, 0, 1), Rate(0, 0), PassHatK(3, 4, 1), Mean(nil),
		Mean([]Estimate{PassHatK(5, 5, 2), PassHatK(1, 1, 2)})} {
		if e.Defined() {
			t.Fatalf("%s is defined", e.Fraction())
		}
		if e.String() != "n/a" || e.Fraction() != "n/a" || !math.IsNaN(e.Float()) || e.Value() != nil || e.AtLeast(new(big.Rat)) {
			t.Fatalf("undefined renders %q %q %v %v", e.String(), e.Fraction(), e.Float(), e.Value())
		}
	}
	// Two samples that both passed say nothing about three in a row: the
	// estimate is undefined, never a misleading 1.
	if PassHatK(2, 2, 2).Fraction() != "1" {
		t.Fatal("pass^2 of two passes")
	}
}

func TestMean(t *testing.T) {
	t.Parallel()
	// Cases with 3 samples: passes 3, 2, 0. pass^2 = 1, 1/3, 0: mean 4/9.
	m := Mean([]Estimate{PassHatK(3, 3, 2), PassHatK(3, 2, 2), PassHatK(3, 0, 2)})
	if m.Fraction() != "4/9" {
		t.Fatalf("mean %s, want 4/9", m.Fraction())
	}
	// pass@2: 1, 1, 0: mean 2/3.
	if m := Mean([]Estimate{PassAtK(3, 3, 2), PassAtK(3, 2, 2), PassAtK(3, 0, 2)}); m.Fraction() != "2/3" || m.String() != "0.667" {
		t.Fatalf("mean %s (%s), want 2/3", m.Fraction(), m)
	}
}

func TestValueRoundTripsAndIsCanonical(t *testing.T) {
	t.Parallel()
	e := PassHatK(7, 5, 2) // C(5,2)/C(7,2) = 10/21
	b, err := canon.Encode(e.Value())
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `{"exact":"10/21","value":0.47619047619047616}` {
		t.Fatalf("encoded %s", b)
	}
	v, err := canon.Parse(b, 0)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse(v)
	if err != nil || back.Fraction() != "10/21" {
		t.Fatalf("parse: %v %s", err, back.Fraction())
	}
	if u, err := Parse(nil); err != nil || u.Defined() {
		t.Fatalf("null: %v", err)
	}
	for _, bad := range []any{
		map[string]any{"exact": "3/2", "value": 1.5},
		map[string]any{"exact": "1/2", "value": 0.6},
		map[string]any{"exact": "-1/2", "value": -0.5},
		map[string]any{"exact": "x", "value": 0.5},
		map[string]any{"exact": "1/2"},
		"1/2",
	} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("%v parsed", bad)
		}
	}
}

func TestThresholdIsTheWrittenDecimal(t *testing.T) {
	t.Parallel()
	if Threshold(0.8).Cmp(big.NewRat(4, 5)) != 0 {
		t.Fatalf("0.8 reads as %s", Threshold(0.8).RatString())
	}
	if !Rate(4, 5).AtLeast(Threshold(0.8)) {
		t.Fatal("4/5 does not meet 0.8")
	}
	if Rate(79, 100).AtLeast(Threshold(0.8)) {
		t.Fatal("79/100 meets 0.8")
	}
	if Threshold(1).Cmp(big.NewRat(1, 1)) != 0 || Threshold(0.1).Cmp(big.NewRat(1, 10)) != 0 {
		t.Fatal("thresholds")
	}
}

func FuzzEstimators(f *testing.F) {
	f.Add(5, 3, 2)
	f.Fuzz(func(t *testing.T, n, c, k int) {
		n, c, k = n%40, c%40, k%40
		at, hat := PassAtK(n, c, k), PassHatK(n, c, k)
		if at.Defined() != hat.Defined() {
			t.Fatal("pass@k and pass^k disagree on definedness")
		}
		if !at.Defined() {
			return
		}
		zero, one := new(big.Rat), big.NewRat(1, 1)
		for _, e := range []Estimate{at, hat} {
			if e.Rat().Cmp(zero) < 0 || e.Rat().Cmp(one) > 0 {
				t.Fatalf("n=%d c=%d k=%d: %s outside [0,1]", n, c, k, e.Fraction())
			}
		}
		// All succeed never beats at least one succeeds.
		if hat.Rat().Cmp(at.Rat()) > 0 {
			t.Fatalf("n=%d c=%d k=%d: pass^k %s above pass@k %s", n, c, k, hat.Fraction(), at.Fraction())
		}
	})
}
