package workload

import (
	"strconv"
	"strings"
	"testing"
)

func TestFoundryOverTheContractBoundIsRefused(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("name: big\nrevision: 1\ncandidates: [single.algal.json]\nexecutors: { cheap: cases }\ncases:\n")
	for i := range 257 {
		split := []string{"train", "validation", "holdout"}[i%3]
		b.WriteString("  - { id: c" + strconv.Itoa(i) + ", split: " + split + ", args: { ticket: x }, expect: { queue: billing }, responses: { cheap: { route: billing } } }\n")
	}
	we, _ := loadErr(t, "big.foundry.yaml", b.String())
	if we.Path != "cases" || !strings.Contains(we.Message, "holds 257 cases") || !strings.Contains(we.Message, "cannot be split into parts") ||
		!strings.Contains(we.Message, "bench workload") {
		t.Errorf("message %q at %s", we.Message, we.Path)
	}
}
