package workload

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestCompareBlock(t *testing.T) {
	t.Parallel()
	w, err := Load(writeWorkload(t, "tiny.bench.yaml", goodBench))
	if err != nil {
		t.Fatal(err)
	}
	if w.Compare.Alpha != 0.05 || w.Compare.FailOn != FailOnNone {
		t.Errorf("default %+v", w.Compare)
	}
	w, err = Load(writeWorkload(t, "tiny.bench.yaml", goodBench+"compare: { alpha: 0.01, fail-on: significant-regression }\n"))
	if err != nil {
		t.Fatal(err)
	}
	if w.Compare.Alpha != 0.01 || w.Compare.FailOn != FailOnSignificantRegression || w.Compare.AlphaRat().RatString() != "1/100" {
		t.Errorf("read %+v", w.Compare)
	}
	for _, tc := range []struct {
		name, block    string
		line, col      int
		path, contains string
	}{
		{"alpha zero", "compare: { alpha: 0 }", 13, 19, "compare.alpha", "must be above 0 and at most 0.5"},
		{"alpha above half", "compare:\n  alpha: 0.6", 14, 10, "compare.alpha", "must be above 0 and at most 0.5"},
		{"alpha negative", "compare: { alpha: -0.05 }", 13, 19, "compare.alpha", "must be above 0 and at most 0.5"},
		{"alpha text", "compare: { alpha: five }", 13, 19, "compare.alpha", "must be a number"},
		{"unknown key", "compare: { alpah: 0.05 }", 13, 12, "compare.alpah", `unknown key "alpah" (did you mean "alpha"?)`},
		{"fail-on value", "compare: { fail-on: significant-regresion }", 13, 21, "compare.fail-on", `did you mean "significant-regression"?`},
		{"not a mapping", "compare: 0.05", 13, 10, "compare", "must be a mapping"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			we, _ := loadErr(t, "tiny.bench.yaml", goodBench+tc.block+"\n")
			if we.Line != tc.line || we.Column != tc.col || we.Path != tc.path || !strings.Contains(we.Message, tc.contains) || filepath.Base(we.File) != "tiny.bench.yaml" {
				t.Errorf("%s:%d:%d %s: %s", we.File, we.Line, we.Column, we.Path, we.Message)
			}
		})
	}
}
