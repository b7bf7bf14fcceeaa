package prcheck

import (
	"reflect"
	"testing"
)

func TestMadeRunsOfWantsAllFourOrNone(t *testing.T) {
	t.Parallel()
	if m, err := MadeRunsOf("", "", "", ""); m != nil || err != nil {
		t.Errorf("none: %v, %v", m, err)
	}
	m, err := MadeRunsOf("b", "bs", "h", "hs")
	if want := (&MadeRuns{BaseRuns: "b", BaseStore: "bs", HeadRuns: "h", HeadStore: "hs"}); err != nil || !reflect.DeepEqual(m, want) {
		t.Errorf("all four: %v, %v", m, err)
	}
	if _, err := MadeRunsOf("b", "", "h", "hs"); err == nil {
		t.Error("three of four accepted")
	}
}
