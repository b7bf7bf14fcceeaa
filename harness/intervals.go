package harness

import (
	"fmt"
	"strings"

	"github.com/algal-assay/assay/engine/foundry"
	"github.com/algal-assay/assay/engine/significance"
	"github.com/algal-assay/assay/harness/workload"
)

// PassRateCI95 is the contender's pass-rate 95% interval over its cases
// of split ("" for all), clustered by case: the k samples of one case are
// not independent (engine/significance.Clustered).
func (c *RepeatContender) PassRateCI95(split string) significance.Interval {
	return clusteredCI(c.Cases, split)
}

func clusteredCI(cases []RepeatCase, split string) significance.Interval {
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
func (a *Repeats) ContenderIntervals() map[string]significance.Interval {
	out := map[string]significance.Interval{}
	for i := range a.Contenders {
		out[a.Contenders[i].ID] = a.Contenders[i].PassRateCI95("")
	}
	return out
}

// intervalText is "4/6 = 0.667, 95% interval [0.3, 0.9]".
func intervalText(passed, total int, iv significance.Interval) string {
	if total == 0 {
		return "no cases"
	}
	s := fmt.Sprintf("%d/%d = %s", passed, total, significance.Figure(float64(passed)/float64(total)))
	if iv.Defined() {
		s += fmt.Sprintf(", 95%% interval [%s, %s]", iv.Lo, iv.Hi)
	} else {
		s += ", no interval (fewer than two cases)"
	}
	return s
}

// intervalsSection is summary.md's list of pass rates with their 95%
// intervals: Wilson's for single samples, clustered by case with repeats.
func intervalsSection(o *Outcome) string {
	var lines []string
	how := "Wilson score interval; the cases are single samples"
	switch a := o.Repeats; {
	case a != nil:
		how = fmt.Sprintf("clustered by case: mean of the per-case pass rates ± 1.96 standard errors, over %d repeats", a.K)
		for i := range a.Contenders {
			c := &a.Contenders[i]
			if a.Kind == workload.KindBench {
				lines = append(lines, fmt.Sprintf("- %s: %s", c.ID, intervalText(c.Passes, c.Samples, c.PassRateCI95(""))))
				continue
			}
			lines = append(lines, fmt.Sprintf("- %s: validation %s; train %s", c.ID,
				intervalText(c.Validation.Passes, c.Validation.Samples, c.PassRateCI95(foundry.SplitValidation)),
				intervalText(c.Train.Passes, c.Train.Samples, c.PassRateCI95(foundry.SplitTrain))))
		}
		if h := a.Holdout; h != nil {
			lines = append(lines, fmt.Sprintf("- holdout of %s: %s", h.ManifestKey, intervalText(h.Passes, h.Samples, clusteredCI(h.Cases, ""))))
		}
	case o.Bench != nil:
		for _, s := range o.Bench.Systems {
			lines = append(lines, fmt.Sprintf("- %s: %s", s.ID, intervalText(int(s.Passed), int(s.Total), significance.Wilson(int(s.Passed), int(s.Total)))))
		}
	case o.Foundry != nil && o.Foundry.Report != nil:
		r := o.Foundry.Report
		for _, i := range foundry.Rank(r.Candidates) {
			c := &r.Candidates[i]
			v, t := c.Validation, c.Train
			lines = append(lines, fmt.Sprintf("- %s: validation %s; train %s", c.ManifestKey,
				intervalText(int(v.Passed), int(v.Total), significance.Wilson(int(v.Passed), int(v.Total))),
				intervalText(int(t.Passed), int(t.Total), significance.Wilson(int(t.Passed), int(t.Total)))))
		}
		h := r.Holdout
		lines = append(lines, fmt.Sprintf("- holdout of the promoted candidate: %s", intervalText(int(h.Passed), int(h.Total), significance.Wilson(int(h.Passed), int(h.Total)))))
	}
	if len(lines) == 0 {
		return ""
	}
	return "\nPass rates with their 95% intervals (" + how + "):\n\n" + strings.Join(lines, "\n") + "\n"
}
