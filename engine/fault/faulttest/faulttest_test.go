package faulttest

import (
	"errors"
	"fmt"
	"testing"

	"github.com/algal-assay/assay/engine/fault"
)

type cellFailure struct{ code string }

func (c *cellFailure) Error() string     { return c.code }
func (c *cellFailure) ErrorCode() string { return c.code }

func TestCode(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"nil", nil, ""},
		{"uncoded", errors.New("plain"), ""},
		{"fault", fault.New(fault.Parse, "bad"), fault.Parse},
		{"wrapped fault", fmt.Errorf("reading x: %w", fault.New(fault.StoreMiss, "gone")), fault.StoreMiss},
		{"other coded type", fmt.Errorf("cell: %w", &cellFailure{"TYPE_MISMATCH"}), "TYPE_MISMATCH"},
	} {
		if got := Code(tc.err); got != tc.want {
			t.Errorf("%s: Code = %q, want %q", tc.name, got, tc.want)
		}
	}
}
