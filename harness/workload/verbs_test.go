package workload

import (
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/fault"
)

func TestNotAConfigRefusesWorkloads(t *testing.T) {
	t.Parallel()
	if err := NotAConfig("bench", "bench.config.json"); err != nil {
		t.Errorf("a JSON config refused: %v", err)
	}
	err := NotAConfig("foundry", "suites/pick.foundry.yaml")
	e, ok := fault.As(err)
	if !ok || e.Code != CodeWorkload || e.File != "suites/pick.foundry.yaml" ||
		!strings.Contains(e.Message, "algal.foundry.config.v1") || !strings.Contains(e.Hint, "assay run suites/pick.foundry.yaml") {
		t.Errorf("a workload: %v", err)
	}
}
