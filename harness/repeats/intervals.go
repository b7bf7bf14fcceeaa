package repeats

import (
	"github.com/algal-assay/assay/engine/significance"
)

// PassRateCI95 is the contender's pass-rate 95% interval over its cases
// of split ("" for all), clustered by case: the k samples of one case are
// not independent (engine/significance.Clustered).
func (c *Contender) PassRateCI95(split string) significance.Interval {
	return ClusteredCI(c.Cases, split)
}

// ClusteredCI is the pass-rate 95% interval over cases of split ("" for
// all), clustered by case.
func ClusteredCI(cases []Case, split string) significance.Interval {
	var cs []significance.Count
	for _, rc := range cases {
		if split == "" || rc.Split == split {
			cs = append(cs, significance.Count{Passed: len(rc.PassedIn), Runs: rc.Runs})
		}
	}
	return significance.Clustered(cs)
}

// ContenderIntervals are the contenders' pass-rate intervals by id, for
// the error bars of report.html.
func (a *Aggregate) ContenderIntervals() map[string]significance.Interval {
	out := map[string]significance.Interval{}
	for i := range a.Contenders {
		out[a.Contenders[i].ID] = a.Contenders[i].PassRateCI95("")
	}
	return out
}
