// Package passk holds the estimators Assay reports for repeated runs: the
// pass rate, pass@k (the chance that at least one of k samples passes,
// Chen et al. 2021's unbiased estimator 1 - C(n-c,k)/C(n,k)) and pass^k
// (the chance that all k samples pass, C(c,k)/C(n,k), the all-succeed
// estimator of Inspect and tau-bench), from n samples of which c passed.
//
// Every estimate is an exact rational (math/big), so the same samples give
// the same bytes on every machine and a claimed value can be checked by
// comparing strings. An estimate over fewer than k samples is undefined,
// never 1.0 or 0: it renders as "n/a" in tables and null in JSON.
package passk

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
)

// Estimate is an exact value in [0, 1], or undefined (the zero Estimate).
type Estimate struct{ r *big.Rat }

// Undefined is the estimate of too few samples.
var Undefined = Estimate{}

// Exact wraps a rational (copied).
func Exact(r *big.Rat) Estimate { return Estimate{new(big.Rat).Set(r)} }

// Defined reports whether there were enough samples.
func (e Estimate) Defined() bool { return e.r != nil }

// Rat returns a copy of the value (nil when undefined).
func (e Estimate) Rat() *big.Rat {
	if e.r == nil {
		return nil
	}
	return new(big.Rat).Set(e.r)
}

// Float is the float64 nearest the exact value, NaN when undefined.
func (e Estimate) Float() float64 {
	if e.r == nil {
		return math.NaN()
	}
	f, _ := e.r.Float64()
	return f
}

// Fraction is the exact value as a reduced fraction ("5/7", "1", "0"), or
// "n/a".
func (e Estimate) Fraction() string {
	if e.r == nil {
		return "n/a"
	}
	return e.r.RatString()
}

// String renders the value with three decimals (rounded half away from
// zero, as big.Rat.FloatString does), or "n/a".
func (e Estimate) String() string {
	if e.r == nil {
		return "n/a"
	}
	return e.r.FloatString(3)
}

// Value is the canonical JSON form: {"exact": "5/7", "value": 0.714...}
// or nil (JSON null) when undefined. The fraction is the claim verifiers
// compare; the number, the correctly rounded float64 of the same
// rational, is there for readers and jq.
func (e Estimate) Value() any {
	if e.r == nil {
		return nil
	}
	return map[string]any{"exact": e.Fraction(), "value": e.Float()}
}

// Parse reads what Value wrote: null, or an object whose exact member is
// a fraction in [0, 1] and whose value member is that fraction's float64.
func Parse(v any) (Estimate, error) {
	if v == nil {
		return Undefined, nil
	}
	m, ok := v.(map[string]any)
	if !ok || len(m) != 2 {
		return Undefined, fmt.Errorf("an estimate is null or {exact, value}")
	}
	s, ok := m["exact"].(string)
	if !ok {
		return Undefined, fmt.Errorf("exact must be a fraction string")
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok || r.Sign() < 0 || r.Cmp(big.NewRat(1, 1)) > 0 {
		return Undefined, fmt.Errorf("exact %q is not a fraction from 0 to 1", s)
	}
	e := Estimate{r}
	if f, ok := m["value"].(float64); !ok || f != e.Float() {
		return Undefined, fmt.Errorf("value must be %v, the number nearest %s", e.Float(), s)
	}
	return e, nil
}

// AtLeast reports whether the estimate is defined and at least min.
func (e Estimate) AtLeast(min *big.Rat) bool { return e.r != nil && e.r.Cmp(min) >= 0 }

// Threshold is the exact decimal a gate author wrote: the shortest
// decimal that reads back as f (0.8 is 4/5, not the binary double just
// above it), so a rate of exactly 4/5 meets a threshold of 0.8.
func Threshold(f float64) *big.Rat {
	r, ok := new(big.Rat).SetString(strconv.FormatFloat(f, 'g', -1, 64))
	if !ok {
		return new(big.Rat).SetFloat64(f)
	}
	return r
}

// Rate is c/n, undefined when n is 0.
func Rate(c, n int) Estimate {
	if n <= 0 || c < 0 || c > n {
		return Undefined
	}
	return Estimate{big.NewRat(int64(c), int64(n))}
}

func binomial(n, k int) *big.Int {
	if k < 0 || n < 0 || k > n {
		return new(big.Int)
	}
	return new(big.Int).Binomial(int64(n), int64(k))
}

// PassAtK estimates the chance that at least one of k samples passes from
// n samples with c passes: 1 - C(n-c,k)/C(n,k), undefined when n < k.
func PassAtK(n, c, k int) Estimate {
	if k < 1 || n < k || c < 0 || c > n {
		return Undefined
	}
	r := new(big.Rat).SetFrac(binomial(n-c, k), binomial(n, k))
	return Estimate{r.Sub(big.NewRat(1, 1), r)}
}

// PassHatK estimates the chance that all of k samples pass from n samples
// with c passes: C(c,k)/C(n,k), undefined when n < k.
func PassHatK(n, c, k int) Estimate {
	if k < 1 || n < k || c < 0 || c > n {
		return Undefined
	}
	return Estimate{new(big.Rat).SetFrac(binomial(c, k), binomial(n, k))}
}

// Mean is the exact mean of the estimates (a system's estimate is the
// mean of its cases'), undefined when there are none or any is undefined.
func Mean(es []Estimate) Estimate {
	if len(es) == 0 {
		return Undefined
	}
	sum := new(big.Rat)
	for _, e := range es {
		if e.r == nil {
			return Undefined
		}
		sum.Add(sum, e.r)
	}
	return Estimate{sum.Quo(sum, big.NewRat(int64(len(es)), 1))}
}
