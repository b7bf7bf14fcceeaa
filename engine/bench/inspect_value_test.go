package bench

import (
	"context"
	"testing"
)

// A report read back as a JSON value inspects as the report itself; a
// value that is no bench report is refused.
func TestInspectValueReadsTheReport(t *testing.T) {
	t.Parallel()
	cfg, r, _ := fixture(t)
	rep, err := Run(context.Background(), cfg, r, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := InspectValue(rep.Value())
	if err != nil || got != Inspect(rep) {
		t.Errorf("InspectValue = %q, %v; want Inspect's", got, err)
	}
	if _, err := InspectValue(map[string]any{"contract": "algal.foundry.v1"}); err == nil {
		t.Error("a foundry report inspected as a bench report")
	}
}
