package bench

// AxisValues evaluates the declared axes over a system aggregate, as a
// report does: a host that sums systems across several reports (the
// harness's parts) ranks the sums with the same programs and fuel.
func AxisValues(axes []Axis, s *SystemResult) (map[string]float64, error) {
	return axisValues(axes, s)
}

// AddTally adds o to t, as a report's aggregates add case tallies.
func AddTally(t *Tally, o Tally) { t.add(o) }
