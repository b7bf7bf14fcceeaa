package bench

import "strconv"

// FormatCost prints a dollar amount with fixed precision, $0.003152: every
// table, summary and comment shows cost this way, never in the shortest
// round-trip form of the float sum (0.0031520000000000003). Reports keep
// the number itself.
func FormatCost(dollars float64) string { return "$" + FormatDollars(dollars) }

// FormatDollars is FormatCost without the sign, for a column whose header
// already says the unit ("cost $").
func FormatDollars(dollars float64) string { return strconv.FormatFloat(dollars, 'f', 6, 64) }
