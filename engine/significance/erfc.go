package significance

import "math/big"

// pi to 100 digits, far more than prec needs.
const piDigits = "3.141592653589793238462643383279502884197169399375105820974944592307816406286208998628034825342117068"

// erfc is the complementary error function of x ≥ 0 at prec bits, from
// the Maclaurin series of erf below 5 and the continued fraction of erfc
// (Abramowitz & Stegun 7.1.14) from 5 up, both in math/big so the result
// is the same on every machine.
func erfc(x *big.Float) *big.Float {
	if x.Sign() <= 0 {
		return newFloat().SetInt64(1)
	}
	pi, _ := newFloat().SetString(piDigits)
	sqrtPi := newFloat().Sqrt(pi)
	if x.Cmp(newFloat().SetInt64(5)) < 0 {
		// erf(x) = 2/√π Σ (−1)^k x^(2k+1) / (k! (2k+1))
		x2 := newFloat().Mul(x, x)
		term := newFloat().Set(x) // x^(2k+1)/k!, signed
		sum := newFloat().Set(x)
		eps := newFloat().SetMantExp(big.NewFloat(1), -prec-16)
		for k := 1; ; k++ {
			term.Mul(term, x2)
			term.Quo(term, newFloat().SetInt64(int64(-k)))
			t := newFloat().Quo(term, newFloat().SetInt64(int64(2*k+1)))
			sum.Add(sum, t)
			if t.Abs(t).Cmp(eps) < 0 {
				break
			}
		}
		erf := sum.Mul(sum, newFloat().SetInt64(2))
		erf.Quo(erf, sqrtPi)
		return newFloat().Sub(newFloat().SetInt64(1), erf)
	}
	// erfc(x) = exp(−x²)/√π · 1/(x + (1/2)/(x + 1/(x + (3/2)/(x + ...))))
	t := newFloat().Set(x)
	for k := 240; k >= 1; k-- {
		q := newFloat().Quo(newFloat().SetInt64(int64(k)), newFloat().SetInt64(2))
		t = newFloat().Add(x, q.Quo(q, t))
	}
	r := newFloat().Quo(expNeg(newFloat().Mul(x, x)), t)
	return r.Quo(r, sqrtPi)
}

// expNeg is exp(−y) for y ≥ 0: the series of exp(y/2^m) for y/2^m < 1,
// squared m times, inverted.
func expNeg(y *big.Float) *big.Float {
	m := 0
	r := newFloat().Set(y)
	one := newFloat().SetInt64(1)
	for r.Cmp(one) >= 0 {
		r.Quo(r, newFloat().SetInt64(2))
		m++
	}
	sum, term := newFloat().SetInt64(1), newFloat().SetInt64(1)
	eps := newFloat().SetMantExp(big.NewFloat(1), -prec-16)
	for k := 1; term.Cmp(eps) >= 0; k++ {
		term.Mul(term, r)
		term.Quo(term, newFloat().SetInt64(int64(k)))
		sum.Add(sum, term)
	}
	for range m {
		sum.Mul(sum, sum)
	}
	return newFloat().Quo(one, sum)
}
