// Package faulttest is test support for coded errors: it fails a test
// whose error does not carry the contract code it expects.
//
// Tests across the engine, ci and runrecord assert codes, not messages;
// before this package each kept its own copy of the same few lines.
package faulttest

import (
	"testing"

	"github.com/algal-assay/assay/engine/fault"
)

// Want fails t unless err carries code.
func Want(t testing.TB, err error, code string) {
	t.Helper()
	if err == nil {
		t.Fatalf("want %s, got success", code)
	}
	if got := fault.CodeOf(err); got != code {
		t.Fatalf("want %s, got %q (%v)", code, got, err)
	}
}
