package fault

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"
)

func TestErrorPrintsOneShape(t *testing.T) {
	t.Parallel()
	cause := errors.New("permission denied")
	for _, tc := range []struct {
		err  *Error
		want string
	}{
		{&Error{Code: Parse, Message: "bad"}, "bad"},
		{&Error{Code: IOFailed, Op: "store get", File: "objects/ab", Message: "not in store"}, "store get objects/ab: not in store"},
		{&Error{Code: IOFailed, Op: "store list", Message: "gone"}, "store list: gone"},
		{&Error{Code: Parse, File: "a.json", Offset: 12, HasOffset: true, Message: "unexpected byte"}, "a.json: byte 12: unexpected byte"},
		{&Error{Code: Parse, Offset: 0, HasOffset: true, Message: "empty"}, "byte 0: empty"},
		{&Error{Code: Parse, Offset: -1, Message: "non-finite number"}, "non-finite number"},
		{&Error{Code: "WORKLOAD_INVALID", File: "w.yaml", Line: 3, Column: 7, Path: "cases[0].id", Message: "missing"}, "w.yaml:3:7: cases[0].id: missing"},
		{&Error{Code: ScorerInvalid, Path: "scorer", Message: "not a boolean"}, "scorer: not a boolean"},
		{&Error{Code: "RUNS_INVALID", Message: "runs root r", Err: cause}, "runs root r: permission denied"},
		{&Error{Code: "WRITE_FAILED", File: "foundry-run.yml", Err: cause}, "foundry-run.yml: permission denied"},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("%+v printed %q, want %q", tc.err, got, tc.want)
		}
		if got := tc.err.Located(); got != (tc.want != tc.err.Message) {
			t.Errorf("%q: Located() = %v", tc.want, got)
		}
	}
}

func TestCodeFoundThroughWrapping(t *testing.T) {
	t.Parallel()
	inner := New(DigestMismatch, "object %s does not hash to its key", "ab")
	wrapped := fmt.Errorf("load: %w", inner)
	if c := CodeOf(wrapped); c != DigestMismatch {
		t.Fatalf("CodeOf(wrapped) = %q", c)
	}
	if m := MessageOf(wrapped); m != "object ab does not hash to its key" {
		t.Fatalf("MessageOf(wrapped) = %q", m)
	}
	if CodeOf(errors.New("plain")) != "" || MessageOf(errors.New("plain")) != "plain" {
		t.Fatal("a plain error has no code and keeps its text")
	}
	e := Wrap(IOFailed, fs.ErrNotExist, "read a")
	if !errors.Is(e, fs.ErrNotExist) {
		t.Fatal("Unwrap does not expose the cause")
	}
}

func TestReceiptCodesAreClosed(t *testing.T) {
	t.Parallel()
	codes := ReceiptCodes()
	if len(codes) != 28 {
		t.Fatalf("%d receipt codes, upstream's table has 28", len(codes))
	}
	seen := map[string]bool{}
	for _, c := range codes {
		if seen[c] || !IsReceiptCode(c) {
			t.Errorf("code %s duplicated or not recognized", c)
		}
		seen[c] = true
	}
	for _, c := range []string{VerifyFailed, RecoveryBlocked, "WORKLOAD_INVALID", ""} {
		if IsReceiptCode(c) {
			t.Errorf("host-only code %q accepted as a receipt code", c)
		}
	}
	codes[0] = "MUTATED"
	if ReceiptCodes()[0] != Parse {
		t.Fatal("ReceiptCodes hands out shared storage")
	}
}

func TestFlatKeepsCodeAndWholeText(t *testing.T) {
	t.Parallel()
	located := &Error{Code: StoreMiss, File: "manifests/x", Message: "gone"}
	for _, tc := range []struct {
		err        error
		code, text string
	}{
		{New(FnFailed, "bad"), FnFailed, "bad"},
		{located, StoreMiss, "manifests/x: gone"},
		{fmt.Errorf("loading: %w", located), StoreMiss, "loading: manifests/x: gone"},
		{errors.New("plain"), Internal, "plain"},
	} {
		f := Flat(tc.err, Internal)
		if f.Code != tc.code || f.Message != tc.text || f.Located() {
			t.Errorf("Flat(%v) = %+v, want %s %q bare", tc.err, f, tc.code, tc.text)
		}
	}
}
