package reporttest

import (
	"errors"
	"fmt"
	"testing"

	"github.com/algal-assay/assay/engine/fault"
)

// recorder is a testing.TB that keeps the first failure instead of
// stopping, so the helpers' own verdicts can be asserted.
type recorder struct {
	testing.TB
	failure string
}

func (r *recorder) Helper() {}
func (r *recorder) Fatal(a ...any) {
	if r.failure == "" {
		r.failure = fmt.Sprint(a...)
	}
}
func (r *recorder) Fatalf(format string, a ...any) { r.Fatal(fmt.Sprintf(format, a...)) }

func TestRejectedAt(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		fail bool
	}{
		{"at the field", &fault.Error{Code: fault.Parse, Path: "systems[0].id"}, false},
		{"wrapped", fmt.Errorf("report: %w", &fault.Error{Code: fault.Parse, Path: "systems[0]"}), false},
		{"elsewhere", &fault.Error{Code: fault.Parse, Path: "pareto[0]"}, true},
		{"uncoded", errors.New("systems[0]: bad"), true},
		{"accepted", nil, true},
	} {
		r := &recorder{TB: t}
		RejectedAt(r, tc.err, "systems[0]")
		if failed := r.failure != ""; failed != tc.fail {
			t.Errorf("%s: failed %v (%q), want %v", tc.name, failed, r.failure, tc.fail)
		}
	}
}

func TestSameAtEveryConcurrency(t *testing.T) {
	r := &recorder{TB: t}
	SameAtEveryConcurrency(r, []int{1, 2, 8}, func(int) ([]byte, error) { return []byte("same"), nil })
	if r.failure != "" {
		t.Errorf("equal encodings failed: %s", r.failure)
	}
	r = &recorder{TB: t}
	SameAtEveryConcurrency(r, []int{1, 2, 8}, func(n int) ([]byte, error) { return []byte{byte(min(n, 2))}, nil })
	if r.failure != "concurrency 2 changed the report" {
		t.Errorf("differing encodings: %q", r.failure)
	}
	r = &recorder{TB: t}
	SameAtEveryConcurrency(r, []int{1}, func(int) ([]byte, error) { return nil, errors.New("run failed") })
	if r.failure != "run failed" {
		t.Errorf("a failed run: %q", r.failure)
	}
}
