package significance

import (
	"encoding/json"
	"math"
	"math/big"
	"testing"
)

// Wilson bounds worked by hand: z² = 3.8416; at 0/n the upper bound is
// z²/(n+z²), at n/n the lower is n/(n+z²); 5/10 is the textbook
// [0.2366,0.7634].
func TestWilson(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		c, n int
		want string
	}{
		{0, 10, "[0,0.2775]"},  // 3.8416/13.8416
		{10, 10, "[0.7225,1]"}, // 10/13.8416
		{5, 10, "[0.2366,0.7634]"},
		{0, 1, "[0,0.7935]"}, // 3.8416/4.8416
		{1, 1, "[0.2065,1]"}, // 1/4.8416
		{7, 8, "[0.5291,0.9776]"},
		{0, 0, "null"},
		{3, 2, "null"},
	} {
		b, _ := json.Marshal(Wilson(tc.c, tc.n))
		if string(b) != tc.want {
			t.Errorf("Wilson(%d, %d) = %s, want %s", tc.c, tc.n, b, tc.want)
		}
	}
}

func TestMcNemar(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		fixed, broken int
		want          string
	}{
		{0, 0, "1"},        // no discordant case
		{7, 0, "1/64"},     // 2/2^7 = 0.015625
		{0, 7, "1/64"},     // symmetric
		{3, 0, "1/4"},      // 2/8
		{5, 5, "1"},        // 2·638/1024 > 1, capped
		{6, 1, "1/8"},      // 2·(1+7)/128
		{10, 0, "1/512"},   // all ten cases flipped: 2/1024
		{1, 0, "1"},        // one flip: 2/2
		{9, 3, "299/2048"}, // 2·(1+12+66+220)/4096 = 598/4096
	} {
		if got := McNemar(tc.fixed, tc.broken).RatString(); got != tc.want {
			t.Errorf("McNemar(%d, %d) = %s, want %s", tc.fixed, tc.broken, got, tc.want)
		}
	}
}

func single(base, head string) []Pair {
	var ps []Pair
	for i := range base {
		b, h := Count{Runs: 1}, Count{Runs: 1}
		if base[i] == '1' {
			b.Passed = 1
		}
		if head[i] == '1' {
			h.Passed = 1
		}
		ps = append(ps, Pair{b, h})
	}
	return ps
}

func TestCompareSingle(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, base, head string
		want             string
	}{
		// 0 discordant cases: p is 1, delta 0, the interval [0,0].
		{"none", "1100", "1100", `{"test":"mcnemar-exact","pairedCases":4,"fixed":0,"broken":0,"delta":0,"ci95":[0,0],"pValue":1,"significant":false}`},
		// 7 one-way flips of 10: delta 0.7, var = (7 − 10·0.49)/9 = 0.2333,
		// SE = sqrt(0.02333) = 0.15275, ±0.29938.
		{"seven", "0000000111", "1111111111", `{"test":"mcnemar-exact","pairedCases":10,"fixed":7,"broken":0,"delta":0.7,"ci95":[0.4006,0.9994],"pValue":0.0156,"significant":true}`},
		// 3 of 10: p = 0.25; delta 0.3, var = (3 − 0.9)/9, SE 0.15275.
		{"three", "0000000000", "1110000000", `{"test":"mcnemar-exact","pairedCases":10,"fixed":3,"broken":0,"delta":0.3,"ci95":[0.0006,0.5994],"pValue":0.25,"significant":false}`},
		// Every case flipped, all to fail: delta −1 with no spread.
		{"all", "111111", "000000", `{"test":"mcnemar-exact","pairedCases":6,"fixed":0,"broken":6,"delta":-1,"ci95":[-1,-1],"pValue":0.0312,"significant":true}`},
		// One case: no interval.
		{"one", "0", "1", `{"test":"mcnemar-exact","pairedCases":1,"fixed":1,"broken":0,"delta":1,"ci95":null,"pValue":1,"significant":false}`},
	} {
		b, _ := json.Marshal(Compare(McNemarExact, single(tc.base, tc.head), nil))
		if string(b) != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, b, tc.want)
		}
	}
}

// k = 3 with a case missing on one side: it is left out of the pairs.
// d = 2/3, 2/3, 0; mean 4/9; var = (2·(2/9)² + (4/9)²)/2 = 12/81; SE =
// sqrt(12/243) = 2/9; z = 2, p = erfc(√2) = 0.0455; ±1.96·2/9 = 0.43556.
func TestComparePairedMean(t *testing.T) {
	t.Parallel()
	pairs := []Pair{
		{Count{1, 3}, Count{3, 3}},
		{Count{0, 3}, Count{2, 3}},
		{Count{3, 3}, Count{3, 3}},
		{Count{0, 0}, Count{1, 3}}, // not run at base
	}
	ch := Compare(PairedMean, pairs, nil)
	b, _ := json.Marshal(ch)
	want := `{"test":"paired-mean","pairedCases":3,"fixed":2,"broken":0,"delta":0.4444,"ci95":[0.0089,0.88],"pValue":0.0455,"significant":true}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	if got := Compare(PairedMean, pairs, big.NewRat(1, 25)); got.Significant {
		t.Errorf("p = 0.0455 is significant at alpha 0.04")
	}
	// SE 0 and delta 0: p is 1; SE 0 with a delta: p is 0.
	same := []Pair{{Count{1, 2}, Count{1, 2}}, {Count{2, 2}, Count{2, 2}}}
	if ch := Compare(PairedMean, same, nil); ch.PValue != 1 || ch.Significant {
		t.Errorf("no change: %+v", ch)
	}
	all := []Pair{{Count{0, 2}, Count{1, 2}}, {Count{1, 2}, Count{2, 2}}}
	if ch := Compare(PairedMean, all, nil); ch.PValue != 0 || !ch.Significant || ch.Delta != 0.5 {
		t.Errorf("uniform change: %+v", ch)
	}
}

// Clustered by case: rates 1, 1/3, 2/3, 0 → mean 1/2, var = (1/4 + 1/36 +
// 1/36 + 1/4)/3 = 5/27, SE = sqrt(5/108) = 0.21517, ±0.42173.
func TestClustered(t *testing.T) {
	t.Parallel()
	b, _ := json.Marshal(Clustered([]Count{{3, 3}, {1, 3}, {2, 3}, {0, 3}}))
	if string(b) != "[0.0783,0.9217]" {
		t.Errorf("got %s", b)
	}
	b, _ = json.Marshal(Clustered([]Count{{3, 3}, {3, 3}}))
	if string(b) != "[1,1]" {
		t.Errorf("all pass: %s", b)
	}
	if Clustered([]Count{{2, 3}}).Defined() {
		t.Error("one case has no interval")
	}
}

func TestMinFlips(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		test  string
		n     int
		alpha *big.Rat
		want  int
	}{
		{McNemarExact, 50, nil, 6},                 // 2/2^6 = 0.031 < 0.05 ≤ 2/2^5
		{McNemarExact, 5, nil, 0},                  // too few cases
		{McNemarExact, 6, nil, 6},                  // exactly enough
		{McNemarExact, 100, big.NewRat(1, 100), 8}, // 2/256 < 0.01 ≤ 2/128
		{McNemarExact, 100, big.NewRat(1, 2), 3},   // 2/8 < 0.5 ≤ 2/4
		// z² = f(n−1)/(n−f): n = 100, f = 4 gives 4.125 > 3.84 (p 0.042),
		// f = 3 gives 3.06 (p 0.080).
		{PairedMean, 100, nil, 4},
		{PairedMean, 2, nil, 2}, // both cases: SE 0, p 0
		{PairedMean, 1, nil, 0},
	} {
		if got := MinFlips(tc.test, tc.n, tc.alpha); got != tc.want {
			t.Errorf("MinFlips(%s, %d, %v) = %d, want %d", tc.test, tc.n, tc.alpha, got, tc.want)
		}
	}
}

func TestErfcMatchesMath(t *testing.T) {
	t.Parallel()
	for _, x := range []float64{0, 1e-9, 0.1, 0.5, 1, 1.4142135623730951, 2, 3, 4.5, 4.99, 5, 5.01, 6, 8, 12, 20, 26} {
		got, _ := erfc(newFloat().SetFloat64(x)).Float64()
		want := math.Erfc(x)
		if math.Abs(got-want) > 1e-14*want && math.Abs(got-want) > 1e-300 {
			t.Errorf("erfc(%v) = %v, want %v", x, got, want)
		}
	}
}

func TestFormatP(t *testing.T) {
	t.Parallel()
	a := DefaultAlpha
	for _, tc := range []struct {
		p    Figure
		sig  bool
		want string
	}{
		{0.015625, true, "0.016"},
		{0.25, false, "0.25"},
		{0.5, false, "0.5"},
		{0.0029, true, "0.003"},
		{0.0001, true, "< 0.001"},
		{0, true, "< 0.001"},
		{1, false, "1"},
		{0.04996, true, "0.04996"}, // three decimals would say 0.05
	} {
		if got := FormatP(tc.p, tc.sig, a); got != tc.want {
			t.Errorf("FormatP(%v) = %q, want %q", tc.p, got, tc.want)
		}
	}
}

func TestFigure(t *testing.T) {
	t.Parallel()
	for x, want := range map[float64]string{0.015625: "0.0156", -0.00001: "0", 1: "1", 0.25: "0.25", 0.44444: "0.4444"} {
		if got := Figure(x).String(); got != want {
			t.Errorf("Figure(%v) = %q, want %q", x, got, want)
		}
	}
	var iv Interval
	if err := json.Unmarshal([]byte("[0.1, 0.2]"), &iv); err != nil || !iv.Defined() || iv.Lo != 0.1 {
		t.Errorf("unmarshal: %v %+v", err, iv)
	}
}
