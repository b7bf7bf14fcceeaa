package repeats

import (
	"fmt"

	"github.com/algal-assay/assay/engine/bench"
	"github.com/algal-assay/assay/engine/evidence"
	"github.com/algal-assay/assay/engine/foundry"
)

// Evidence is one repeat's evidence: a bench's report, or a foundry's
// result (its report, or its exhausted habitat account).
type Evidence struct {
	Bench   *bench.Report
	Foundry *foundry.Result
}

// Measure is what runs a compiled workload's contenders over its cases
// once (one repeat), on the fresh sessions of runner, and gives back the
// evidence: the harness's bench and foundry implement it, and Run wraps
// it without knowing which of the two it is.
type Measure interface {
	Measure(rep int, runner evidence.Runner) (Evidence, error)
	// Aggregate pools the evidence of every repeat (two or more).
	Aggregate(name string, reps []Evidence) (*Aggregate, error)
}

// Run runs k repeats of m one after another, each on the fresh sessions
// runnerAt gives it, and aggregates them when there are several (the
// aggregate is nil for one). A failure names its repeat only when there
// is more than one.
func Run(name string, k int, m Measure, runnerAt func(rep int) (evidence.Runner, error)) ([]Evidence, *Aggregate, error) {
	reps := make([]Evidence, k)
	for i := range reps {
		runner, err := runnerAt(i + 1)
		if err != nil {
			return nil, nil, err
		}
		rep, err := m.Measure(i+1, runner)
		if err != nil {
			if k > 1 {
				return nil, nil, fmt.Errorf("repeat %d: %w", i+1, err)
			}
			return nil, nil, err
		}
		reps[i] = rep
	}
	if k <= 1 {
		return reps, nil, nil
	}
	a, err := m.Aggregate(name, reps)
	if err != nil {
		return nil, nil, err
	}
	return reps, a, nil
}

// Evidence lists every repeat's evidence, in repeat order.
func (a *Aggregate) Evidence() []Evidence {
	out := make([]Evidence, a.K)
	for i := range out {
		if a.bench != nil {
			out[i].Bench = a.bench[i]
		} else {
			out[i].Foundry = a.foundry[i]
		}
	}
	return out
}
