package significance

import (
	"math/big"
	"strings"
	"testing"
)

// FuzzCompare checks the properties every comparison must have, whatever
// the counts: p in [0, 1] and the same when base and head swap, delta in
// its interval and both in [−1, 1], fixed + broken ≤ paired cases, the
// Wilson interval holding the rate, and MinFlips agreeing with Compare
// (its count of one-way flips is significant, one fewer is not).
func FuzzCompare(f *testing.F) {
	f.Add(uint8(7), uint8(0), uint8(3), uint8(1))
	f.Add(uint8(0), uint8(0), uint8(0), uint8(1))
	f.Add(uint8(30), uint8(29), uint8(200), uint8(3))
	f.Fuzz(func(t *testing.T, fixed, broken, same, k uint8) {
		reps := int(k%4) + 1
		test := McNemarExact
		if reps > 1 {
			test = PairedMean
		}
		var pairs, swapped []Pair
		add := func(n int, b, h int) {
			for range n {
				pairs = append(pairs, Pair{Count{b, reps}, Count{h, reps}})
				swapped = append(swapped, Pair{Count{h, reps}, Count{b, reps}})
			}
		}
		add(int(fixed), 0, reps)
		add(int(broken), reps, 0)
		add(int(same)/2, reps, reps)
		add(int(same)-int(same)/2, 0, 0)
		ch, sw := Compare(test, pairs, nil), Compare(test, swapped, nil)
		if ch.PValue < 0 || ch.PValue > 1 || ch.PValue != sw.PValue || ch.Significant != sw.Significant {
			t.Fatalf("p %v (swapped %v)", ch, sw)
		}
		if ch.Fixed != int(fixed) || ch.Broken != int(broken) || ch.PairedCases != len(pairs) || ch.Delta != -sw.Delta {
			t.Fatalf("counts %+v", ch)
		}
		if ch.CI95.Defined() && (ch.CI95.Lo > ch.Delta || ch.CI95.Hi < ch.Delta || ch.CI95.Lo < -1 || ch.CI95.Hi > 1) {
			t.Fatalf("interval %+v", ch)
		}
		n := len(pairs)
		if w := Wilson(int(fixed), n); n > 0 && (float64(w.Lo) > float64(fixed)/float64(n) || float64(w.Hi) < float64(fixed)/float64(n) || w.Lo < 0 || w.Hi > 1) {
			t.Fatalf("Wilson(%d, %d) = %+v", fixed, n, w)
		}
		if m := MinFlips(test, n, nil); m > 0 {
			var one []Pair
			for i := range n {
				h := 0
				if i < m {
					h = reps
				}
				one = append(one, Pair{Count{0, reps}, Count{h, reps}})
			}
			if !Compare(test, one, nil).Significant {
				t.Fatalf("MinFlips(%s, %d) = %d, but %d flips are not significant", test, n, m, m)
			}
			if m > 1 {
				one[m-1].Head.Passed = 0
				if Compare(test, one, nil).Significant {
					t.Fatalf("MinFlips(%s, %d) = %d, but %d flips are significant", test, n, m, m-1)
				}
			}
		}
	})
}

// The p-value is compared with alpha before it is rounded: 2/2^5 = 0.0625
// is not significant at 0.0625 and is at 0.0626.
func TestAlphaIsExact(t *testing.T) {
	t.Parallel()
	pairs := single("00000", "11111")
	if Compare(McNemarExact, pairs, Alpha(0.0625)).Significant {
		t.Error("p = alpha is not significant")
	}
	if !Compare(McNemarExact, pairs, Alpha(0.0626)).Significant {
		t.Error("p < alpha is significant")
	}
	if Alpha(0.05).Cmp(big.NewRat(1, 20)) != 0 {
		t.Error("0.05 is 1/20")
	}
}

// Large case sets stay exact: 20,000 cases, six of them flipped (p = 1/32).
func TestLargeCounts(t *testing.T) {
	t.Parallel()
	p := McNemar(10000, 9000)
	f, _ := p.Float64()
	if f <= 0 || f > 1e-10 {
		t.Errorf("McNemar(10000, 9000) = %v", f)
	}
	pairs := single(strings.Repeat("0", 20000), strings.Repeat("1", 6)+strings.Repeat("0", 19994))
	if ch := Compare(McNemarExact, pairs, nil); !ch.Significant || ch.PairedCases != 20000 {
		t.Errorf("%+v", ch)
	}
}
