package workload

import (
	"math/big"
	"slices"
	"strings"

	"github.com/algal-assay/assay/engine/significance"
	"github.com/algal-assay/assay/internal/suggest"
)

// What a workload's `compare: {fail-on: ...}` makes fail the PR check,
// besides its head gates.
const (
	FailOnNone                  = "none"                   // head gates alone decide (the default)
	FailOnSignificantRegression = "significant-regression" // a system's or the promoted candidate's change is a significant loss
	FailOnAnyRegression         = "any-regression"         // any pass count fell
)

var (
	compareKeys = []string{"alpha", "fail-on"}
	failOns     = []string{FailOnNone, FailOnSignificantRegression, FailOnAnyRegression}
)

// Compare is a workload's `compare:` block: how the PR check tests base
// against head (engine/significance) and whether a regression fails it.
// It is read by the PR diff only: it is not compiled into the run.
type Compare struct {
	// Alpha is the significance level (0, 0.5], 0.05 when not written.
	Alpha float64
	// FailOn is one of the FailOn constants.
	FailOn string
	Pos    Pos
}

// AlphaRat is Alpha as the exact decimal written.
func (c Compare) AlphaRat() *big.Rat { return significance.Alpha(c.Alpha) }

// DefaultCompare is the comparison of a workload without a compare block.
func DefaultCompare() Compare { return Compare{Alpha: 0.05, FailOn: FailOnNone} }

func (w *Workload) parseCompare(d *decoder, f map[string]field) error {
	w.Compare = DefaultCompare()
	x, ok := f["compare"]
	if !ok {
		return nil
	}
	w.Compare.Pos = d.pos(x.value)
	cf, _, err := d.mapping(x.value, "compare", compareKeys, nil)
	if err != nil {
		return err
	}
	if a, ok := cf["alpha"]; ok {
		v, err := d.number(a.value, "compare.alpha")
		if err != nil {
			return err
		}
		if v <= 0 || v > 0.5 {
			return d.fail(a.value, "compare.alpha", "must be above 0 and at most 0.5 (the chance of calling noise a change; 0.05 is usual), not %v", v)
		}
		w.Compare.Alpha = v
	}
	if fo, ok := cf["fail-on"]; ok {
		s, err := d.str(fo.value, "compare.fail-on")
		if err != nil {
			return err
		}
		if !slices.Contains(failOns, s) {
			return d.fail(fo.value, "compare.fail-on", "must be one of %s, not %q%s", strings.Join(failOns, ", "), s, suggest.DidYouMean(s, failOns))
		}
		w.Compare.FailOn = s
	}
	return nil
}
