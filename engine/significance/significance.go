package significance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"strconv"
	"strings"
)

// Tests a [Change] is measured with.
const (
	McNemarExact = "mcnemar-exact" // paired single samples
	PairedMean   = "paired-mean"   // paired per-case pass rates of repeats
)

// z95 is the two-sided 95% normal quantile every interval uses: 1.96.
var z95 = big.NewRat(49, 25)

// DefaultAlpha is the significance level when a workload sets none.
var DefaultAlpha = big.NewRat(1, 20)

// prec is the mantissa size of every big.Float: far beyond float64, so the
// figures do not depend on the order of the operations that made them.
const prec = 256

// Figure is a number written with the one rule of every figure: four
// decimals, half to even on its exact binary value, no trailing zeros.
type Figure float64

// String is the figure as written.
func (f Figure) String() string {
	s := strconv.FormatFloat(float64(f), 'f', 4, 64)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	if s == "-0" {
		s = "0"
	}
	return s
}

// MarshalJSON writes the rounded figure.
func (f Figure) MarshalJSON() ([]byte, error) { return []byte(f.String()), nil }

// Round is x as written (a Figure read back).
func Round(x float64) float64 {
	r, _ := strconv.ParseFloat(Figure(x).String(), 64)
	return r
}

// Interval is a 95% interval [Lo, Hi]; the zero Interval is undefined (too
// few samples) and is written as null.
type Interval struct {
	Lo, Hi Figure
	ok     bool
}

// Defined reports whether there were enough samples for an interval.
func (i Interval) Defined() bool { return i.ok }

// IsZero lets `omitzero` leave an undefined interval out.
func (i Interval) IsZero() bool { return !i.ok }

// Value is the interval as canonical JSON values: [lo, hi] rounded, or
// nil.
func (i Interval) Value() any {
	if !i.ok {
		return nil
	}
	return []any{Round(float64(i.Lo)), Round(float64(i.Hi))}
}

// MarshalJSON writes [lo, hi] or null.
func (i Interval) MarshalJSON() ([]byte, error) {
	if !i.ok {
		return []byte("null"), nil
	}
	return []byte("[" + i.Lo.String() + "," + i.Hi.String() + "]"), nil
}

// UnmarshalJSON reads [lo, hi] or null.
func (i *Interval) UnmarshalJSON(b []byte) error {
	*i = Interval{}
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		return nil
	}
	var v []float64
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	if len(v) != 2 {
		return fmt.Errorf("an interval is [lo, hi], not %d numbers", len(v))
	}
	*i = Interval{Lo: Figure(v[0]), Hi: Figure(v[1]), ok: true}
	return nil
}

func newFloat() *big.Float { return new(big.Float).SetPrec(prec) }

func ratFloat(r *big.Rat) *big.Float { return newFloat().SetRat(r) }

func toFigure(f *big.Float) Figure {
	x, _ := f.Float64()
	return Figure(x)
}

// interval is center ± half, clamped to [lo, hi].
func interval(center, half *big.Float, lo, hi float64) Interval {
	l := toFigure(newFloat().Sub(center, half))
	h := toFigure(newFloat().Add(center, half))
	return Interval{Lo: max(Figure(lo), l), Hi: min(Figure(hi), h), ok: true}
}

// Wilson is the 95% Wilson score interval of passed out of total single
// samples; undefined when total is 0. With z = 1.96 it is
// (2c + z²)/(2(n + z²)) ± z·n/(n + z²) · sqrt((4c(n−c) + z²n)/(4n³)).
func Wilson(passed, total int) Interval {
	if total <= 0 || passed < 0 || passed > total {
		return Interval{}
	}
	c, n := big.NewRat(int64(passed), 1), big.NewRat(int64(total), 1)
	z2 := new(big.Rat).Mul(z95, z95)
	nz := new(big.Rat).Add(n, z2)
	center := new(big.Rat).Add(new(big.Rat).Add(c, c), z2)
	center.Quo(center, new(big.Rat).Add(nz, nz))
	a := new(big.Rat).Quo(new(big.Rat).Mul(z95, n), nz)
	// radicand (4c(n−c) + z²n) / (4n³)
	num := new(big.Rat).Mul(big.NewRat(4, 1), new(big.Rat).Mul(c, new(big.Rat).Sub(n, c)))
	num.Add(num, new(big.Rat).Mul(z2, n))
	den := new(big.Rat).Mul(big.NewRat(4, 1), new(big.Rat).Mul(n, new(big.Rat).Mul(n, n)))
	s := ratFloat(num.Quo(num, den))
	s.Sqrt(s)
	half := newFloat().Mul(ratFloat(a), s)
	iv := interval(ratFloat(center), half, 0, 1)
	// The bounds at 0/n and n/n are exactly 0 and 1; the square root's
	// last bit must not make them −1e-77.
	if passed == 0 {
		iv.Lo = 0
	}
	if passed == total {
		iv.Hi = 1
	}
	return iv
}

// Count is one case's samples: Passed of Runs.
type Count struct{ Passed, Runs int }

func (c Count) rate() *big.Rat { return big.NewRat(int64(c.Passed), int64(c.Runs)) }

// moments are the mean of n values and the squared standard error of that
// mean, var/n with the n − 1 variance (nil for fewer than two values).
func moments(sum, sumSq *big.Rat, n int) (mean, se2 *big.Rat) {
	if n == 0 {
		return new(big.Rat), nil
	}
	nr := big.NewRat(int64(n), 1)
	mean = new(big.Rat).Quo(sum, nr)
	if n < 2 {
		return mean, nil
	}
	// var = (Σx² − (Σx)²/n) / (n − 1)
	v := new(big.Rat).Sub(sumSq, new(big.Rat).Quo(new(big.Rat).Mul(sum, sum), nr))
	v.Quo(v, big.NewRat(int64(n-1), 1))
	return mean, v.Quo(v, nr)
}

// meanInterval is mean ± 1.96·sqrt(se2), clamped to [lo, hi].
func meanInterval(mean, se2 *big.Rat, lo, hi float64) Interval {
	if se2 == nil {
		return Interval{}
	}
	s := ratFloat(se2)
	s.Sqrt(s)
	return interval(ratFloat(mean), s.Mul(s, ratFloat(z95)), lo, hi)
}

// Clustered is the 95% interval of a pass rate measured with repeats,
// clustered by case: the mean of the per-case pass rates ± 1.96 standard
// errors of that mean. Cases that never ran are left out; undefined for
// fewer than two cases that ran.
func Clustered(cases []Count) Interval {
	sum, sumSq := new(big.Rat), new(big.Rat)
	n := 0
	for _, c := range cases {
		if c.Runs <= 0 {
			continue
		}
		r := c.rate()
		sum.Add(sum, r)
		sumSq.Add(sumSq, r.Mul(r, r))
		n++
	}
	mean, se2 := moments(sum, sumSq, n)
	return meanInterval(mean, se2, 0, 1)
}

// Pair is one case on both sides of a comparison (or of two contenders on
// one side).
type Pair struct{ Base, Head Count }

// Change is a paired comparison of two sides on the cases they share.
type Change struct {
	Test        string `json:"test"`
	PairedCases int    `json:"pairedCases"`
	// Fixed and Broken count the cases whose pass rate rose and fell.
	Fixed  int    `json:"fixed"`
	Broken int    `json:"broken"`
	Delta  Figure `json:"delta"`
	// CI95 is delta's 95% interval; null for fewer than two cases.
	CI95        Interval `json:"ci95"`
	PValue      Figure   `json:"pValue"`
	Significant bool     `json:"significant"`
}

// Compare tests the pairs with test (McNemarExact or PairedMean) at
// alpha (DefaultAlpha when nil). Pairs where a side never ran are left
// out.
func Compare(test string, pairs []Pair, alpha *big.Rat) Change {
	if alpha == nil {
		alpha = DefaultAlpha
	}
	ch := Change{Test: test}
	sum, sumSq := new(big.Rat), new(big.Rat)
	for _, p := range pairs {
		if p.Base.Runs <= 0 || p.Head.Runs <= 0 {
			continue
		}
		ch.PairedCases++
		d := new(big.Rat).Sub(p.Head.rate(), p.Base.rate())
		switch d.Sign() {
		case 1:
			ch.Fixed++
		case -1:
			ch.Broken++
		default:
			continue
		}
		sum.Add(sum, d)
		sumSq.Add(sumSq, d.Mul(d, d))
	}
	mean, se2 := moments(sum, sumSq, ch.PairedCases)
	ch.Delta = toFigure(ratFloat(mean))
	ch.CI95 = meanInterval(mean, se2, -1, 1)
	var below bool
	if test == McNemarExact {
		p := McNemar(ch.Fixed, ch.Broken)
		ch.PValue = toFigure(ratFloat(p))
		below = p.Cmp(alpha) < 0
	} else {
		p := normalP(mean, se2)
		ch.PValue = toFigure(p)
		below = p.Cmp(ratFloat(alpha)) < 0
	}
	ch.Significant = below
	return ch
}

// McNemar is the exact two-sided McNemar p-value of fixed and broken
// discordant cases: min(1, 2 · Σ_{i=0}^{min} C(n, i) / 2^n), n = fixed +
// broken; 1 when n is 0.
func McNemar(fixed, broken int) *big.Rat {
	n := fixed + broken
	if n <= 0 {
		return big.NewRat(1, 1)
	}
	m := min(fixed, broken)
	sum, c := new(big.Int), big.NewInt(1)
	for i := 0; i <= m; i++ {
		sum.Add(sum, c)
		c.Mul(c, big.NewInt(int64(n-i)))
		c.Quo(c, big.NewInt(int64(i+1)))
	}
	p := new(big.Rat).SetFrac(sum.Lsh(sum, 1), new(big.Int).Lsh(big.NewInt(1), uint(n)))
	if p.Cmp(big.NewRat(1, 1)) > 0 {
		p.SetInt64(1)
	}
	return p
}

// normalP is the two-sided p-value of mean/sqrt(se2) under the standard
// normal: erfc(sqrt(mean²/(2·se2))). 1 for fewer than two cases or when
// mean and se2 are both 0; 0 when se2 is 0 and mean is not.
func normalP(mean, se2 *big.Rat) *big.Float {
	switch {
	case se2 == nil || mean.Sign() == 0:
		return newFloat().SetInt64(1)
	case se2.Sign() == 0:
		return newFloat()
	}
	x2 := new(big.Rat).Quo(new(big.Rat).Mul(mean, mean), new(big.Rat).Add(se2, se2))
	x := ratFloat(x2)
	return erfc(x.Sqrt(x))
}

// MinFlips is the smallest number of cases that must flip one way (fail
// to pass at every sample, the others unchanged) before test can call a
// change on n cases significant at alpha; 0 when no change on n cases can
// be.
func MinFlips(test string, n int, alpha *big.Rat) int {
	if alpha == nil {
		alpha = DefaultAlpha
	}
	for f := 1; f <= n; f++ {
		if test == McNemarExact {
			// f one-way flips: p = 2/2^f.
			if McNemar(f, 0).Cmp(alpha) < 0 {
				return f
			}
			continue
		}
		if n < 2 {
			return 0
		}
		// f values of 1 and n − f of 0: mean f/n, var/n = f(n−f)/(n²(n−1)).
		mean := big.NewRat(int64(f), int64(n))
		se2 := big.NewRat(int64(f)*int64(n-f), int64(n)*int64(n)*int64(n-1))
		if normalP(mean, se2).Cmp(ratFloat(alpha)) < 0 {
			return f
		}
	}
	return 0
}

// FormatP renders a p-value for people: three decimals ("0.016", "0.25"),
// "< 0.001" below that, with more decimals (up to six) where three would
// put it on the other side of alpha.
func FormatP(p Figure, significant bool, alpha *big.Rat) string {
	if alpha == nil {
		alpha = DefaultAlpha
	}
	a, _ := alpha.Float64()
	if p < 0.0005 {
		return "< 0.001"
	}
	s := ""
	for d := 3; d <= 6; d++ {
		s = strconv.FormatFloat(float64(p), 'f', d, 64)
		if r, _ := strconv.ParseFloat(s, 64); (r < a) == significant {
			break
		}
	}
	return strings.TrimRight(strings.TrimRight(s, "0"), ".")
}

// Alpha is the exact decimal a workload author wrote (0.05 is 1/20, not
// the binary double next to it).
func Alpha(f float64) *big.Rat {
	r, ok := new(big.Rat).SetString(strconv.FormatFloat(f, 'g', -1, 64))
	if !ok {
		return new(big.Rat).SetFloat64(f)
	}
	return r
}
