package evidence

import (
	"fmt"
	"strings"
)

// Readable renders a bench or foundry verification (its Value) for
// people: one line when it holds, else the count and every problem.
func Readable(v map[string]any) string {
	var b strings.Builder
	n, _ := v["checkedReceipts"].(float64)
	if v["ok"] == true {
		fmt.Fprintf(&b, "verified: every claim recomputed, %d receipts replayed offline\n", int(n))
		return b.String()
	}
	fails, _ := v["failures"].([]any)
	if len(fails) == 0 {
		fails, _ = v["mismatches"].([]any)
	}
	fmt.Fprintf(&b, "NOT VERIFIED (%d receipts checked): %d problem(s)\n", int(n), len(fails))
	for _, f := range fails {
		fmt.Fprintf(&b, "  - %v\n", f)
	}
	return b.String()
}
