package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/vm"
	"github.com/spf13/cobra"
)

// Exit codes shared by every verb.
const (
	exitOK       = 0
	exitRejected = 1 // input rejected, verification failed, a gate failed
	exitUsage    = 2 // bad flags or arguments
)

// cli carries the process streams into every verb so tests can run the
// whole command in-process.
type cli struct {
	stdin          io.Reader
	stdout, stderr io.Writer
}

// verbs registers command constructors; each verb's file adds itself in an
// init function so this file never changes when a verb is added.
var verbs []func(*cli) *cobra.Command

func register(f func(*cli) *cobra.Command) { verbs = append(verbs, f) }

// codeOf returns the contract code an error carries (PARSE_FAILED,
// DIGEST_MISMATCH, EXPR_TYPE, ...): a coded error's or a cell failure's.
func codeOf(err error) (string, bool) {
	if c := fault.CodeOf(err); c != "" {
		return c, true
	}
	var f *vm.Failure
	if errors.As(err, &f) {
		return f.Code, true
	}
	return "", false
}

// rejection is an error the verb already reported on stdout (e.g. a failed
// verification printed as JSON): the process exits 1 and prints nothing more.
type rejection struct{ err error }

func (r rejection) Error() string { return r.err.Error() }
func (r rejection) Unwrap() error { return r.err }

// reported wraps err so that run exits 1 without printing it again.
func reported(err error) error { return rejection{err} }

// usageError marks an argument problem that cobra cannot see (exit 2).
type usageError struct{ msg string }

func (u usageError) Error() string { return u.msg }

func usagef(format string, a ...any) error { return usageError{fmt.Sprintf(format, a...)} }

func newRoot(c *cli) *cobra.Command {
	root := &cobra.Command{
		Use:           "assay",
		Short:         "Test, measure and gate ALGAL organisms",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(c.stdin)
	root.SetOut(c.stdout)
	root.SetErr(c.stderr)
	for _, v := range verbs {
		root.AddCommand(v(c))
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err.Error()} })
	return root
}

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
	if errors.As(err, &rj) {
		return exitRejected
	}
	if code, ok := codeOf(err); ok {
		writeError(stderr, code, err.Error())
		return exitRejected
	}
	// Anything else is an argument problem: cobra's own arity and flag
	// errors, unknown commands, and our usageError.
	fmt.Fprintf(stderr, "assay: %v\n", err)
	fmt.Fprintln(stderr, "Run 'assay --help' for usage.")
	return exitUsage
}

// writeError prints the stable JSON error shape {"error":{"code","message"}}.
func writeError(w io.Writer, code, message string) {
	b, _ := json.Marshal(map[string]any{"error": map[string]string{"code": code, "message": message}})
	fmt.Fprintf(w, "%s\n", b)
}
