package verify

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/algal-assay/assay/harness/repeats"
)

// The intervals in repeats.json are re-derived like every other figure:
// a forged one fails verification, named where it was edited.
func TestVerifyForgedIntervals(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		edit func(m map[string]any)
		want string
	}{
		{"contender interval", func(m map[string]any) {
			m["contenders"].([]any)[0].(map[string]any)["passRateCI95"] = []any{0.0, 1.0}
		}, "repeats.json: contenders[cheap-single].passRateCI95 is [0,1], but re-deriving it from the reports gives ["},
		{"interval removed", func(m map[string]any) {
			delete(m["contenders"].([]any)[1].(map[string]any), "passRateCI95")
		}, "repeats.json: contenders[frontier-single].passRateCI95 is absent"},
		{"interval nulled", func(m map[string]any) {
			m["contenders"].([]any)[2].(map[string]any)["passRateCI95"] = nil
		}, "repeats.json: contenders[escalating].passRateCI95 is null"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, opts := triageRun(t, 3)
			editJSON(t, filepath.Join(dir, repeats.File), tc.edit)
			res, err := CheckRun(context.Background(), dir, opts)
			if err != nil {
				t.Fatal(err)
			}
			if res.OK || !strings.Contains(strings.Join(res.Mismatches, "\n"), tc.want) {
				t.Fatalf("want a mismatch naming %q, got %v", tc.want, res.Mismatches)
			}
		})
	}
}

// repeats.json states no test (pValue, ci95 and significant are diff.json's,
// between base and head): a forged one added to it, at the top or to a
// contender, is a member the re-derived file does not have, and fails.
func TestVerifyForgedTestFiguresInRepeats(t *testing.T) {
	t.Parallel()
	for _, key := range []string{"pValue", "ci95", "significant"} {
		for _, where := range []string{"top", "contender"} {
			t.Run(key+" at "+where, func(t *testing.T) {
				dir, opts := triageRun(t, 3)
				editJSON(t, filepath.Join(dir, repeats.File), func(m map[string]any) {
					target := m
					if where == "contender" {
						target = m["contenders"].([]any)[0].(map[string]any)
					}
					target[key] = map[string]any{"pValue": 0.0001, "ci95": []any{0.5, 0.9}, "significant": true}[key]
				})
				res, err := CheckRun(context.Background(), dir, opts)
				if err != nil {
					t.Fatal(err)
				}
				if res.OK || !strings.Contains(strings.Join(res.Mismatches, "\n"), "repeats.json") {
					t.Fatalf("a forged %s in repeats.json passes: %v", key, res.Mismatches)
				}
				t.Log(res.Mismatches[0])
			})
		}
	}
}
