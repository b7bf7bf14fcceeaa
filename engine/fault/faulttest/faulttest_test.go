package faulttest

import (
	"fmt"
	"testing"

	"github.com/algal-assay/assay/engine/fault"
)

func TestWantAcceptsAWrappedCode(t *testing.T) {
	Want(t, fmt.Errorf("reading x: %w", fault.New(fault.StoreMiss, "gone")), fault.StoreMiss)
}
