package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/harness/console"
	"github.com/algal-assay/assay/harness/liverun"
)

// Exit codes shared by every verb, as upstream's CLI documents them.
const (
	exitOK = 0
	// exitNo: the verb ran and its answer is no: a run failed or
	// suspended, a verification or a gate failed, a replay could not replay.
	exitNo = 1
	// exitError: the verb could not give an answer: bad flags or
	// arguments, a document that does not parse or is not admitted, an
	// IO failure. The error is printed on stderr as one JSON object.
	exitError = 2
)

// cli carries the process streams into every verb so tests can run the
// whole command in-process.
type cli struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	// json forces machine output (--json); without it, verbs with a
	// readable form use it only when stdout is a terminal.
	json bool
}

// codeOf returns the contract code an error carries (PARSE_FAILED,
// DIGEST_MISMATCH, EXPR_TYPE, ...).
func codeOf(err error) (string, bool) {
	c := fault.CodeOf(err)
	return c, c != ""
}

// rejection is a "no" the verb already reported on stdout (a failed run's
// receipt, a failed verification): the process exits 1 and prints nothing
// more.
type rejection struct{ err error }

func (r rejection) Error() string { return r.err.Error() }
func (r rejection) Unwrap() error { return r.err }

// reported wraps err so that run exits 1 without printing it again.
func reported(err error) error { return rejection{err} }

// usageError marks an argument problem that cobra cannot see.
type usageError struct{ msg string }

func (u usageError) Error() string { return u.msg }

func usagef(format string, a ...any) error { return usageError{fmt.Sprintf(format, a...)} }

// run executes one command line and returns the process exit code.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	c := &cli{stdin: stdin, stdout: stdout, stderr: stderr}
	root := newRoot(c)
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	if err == nil {
		return exitOK
	}
	var rj rejection
	var shown *liverun.Reported
	if errors.As(err, &rj) || errors.As(err, &shown) {
		return exitNo
	}
	if code, ok := codeOf(err); ok {
		c.printError(code, err)
		return exitError
	}
	// Anything else is an argument problem: cobra's own arity and flag
	// errors, unknown commands, and our usageError.
	fmt.Fprintf(stderr, "assay: %v\n", err)
	fmt.Fprintln(stderr, "Run 'assay --help' for usage.")
	return exitError
}

// printError prints a verb's error on stderr: on a terminal (without
// --json) a sentence with the code and, when there is one, the hint on a
// line of its own; otherwise upstream's one JSON line.
func (c *cli) printError(code string, err error) {
	if !c.readableErr() {
		console.WriteError(c.stderr, code, fault.Advised(err))
		return
	}
	hint := ""
	if f, ok := fault.As(err); ok {
		hint = f.Hint
	}
	console.WriteSentence(c.stderr, code, err.Error(), hint)
}

// readableErr reports whether errors should read as sentences: without
// --json and when stderr is a terminal.
func (c *cli) readableErr() bool { return !c.json && isTerminal(c.stderr) }

// answer prints the result of a verb whose output is text by nature
// (version, init, inspect: upstream prints them as text to a pipe too):
// the text, or with --json v as one canonical JSON line.
func (c *cli) answer(v any, text func(io.Writer) error) error {
	if c.json {
		return c.emit(v, "")
	}
	return text(c.stdout)
}

// readable reports whether output should take its form for people: only
// without --json and when stdout is a terminal, so scripts and pipes get
// upstream's JSON unchanged.
func (c *cli) readable() bool { return !c.json && isTerminal(c.stdout) }

// isTerminal reports whether w is a terminal (a variable so tests can
// stand in for one).
var isTerminal = func(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
