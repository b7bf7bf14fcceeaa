// Package faulttest is test support for coded errors: it reads the
// contract code of any error and fails a test whose error does not carry
// the code it expects.
//
// Tests across the engine, ci and runrecord assert codes, not messages;
// before this package each kept its own copy of the same few lines.
package faulttest

import (
	"errors"
	"testing"
)

// Code returns the contract code of the first error in err's chain that
// has one, or "" when none has. It asks for the ErrorCode method rather
// than *fault.Error so that it reads every coded error a test may see,
// such as a VM cell failure.
func Code(err error) string {
	var c interface{ ErrorCode() string }
	if errors.As(err, &c) {
		return c.ErrorCode()
	}
	return ""
}

// Want fails t unless err carries code.
func Want(t testing.TB, err error, code string) {
	t.Helper()
	if err == nil {
		t.Fatalf("want %s, got success", code)
	}
	if got := Code(err); got != code {
		t.Fatalf("want %s, got %q (%v)", code, got, err)
	}
}
