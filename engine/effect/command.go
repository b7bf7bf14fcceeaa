package effect

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
)

// Command protocol bounds.
const (
	// DefaultCommandTimeout applies to effect commands (cmd:<...>).
	DefaultCommandTimeout = 120 * time.Second
	// DefaultToolTimeout applies to tool commands.
	DefaultToolTimeout = 30 * time.Second
	// MaxCommandStdin bounds the request bytes written to a command.
	MaxCommandStdin = 1_048_576
	// MaxCommandStderr is upstream's bound on diagnostics; Assay never
	// reads them (stderr goes to the null device) and never records them.
	MaxCommandStderr = 65_536
	// ExitSuspended (EX_TEMPFAIL) asks the host to suspend the run.
	ExitSuspended = 75
	// commandWaitDelay bounds how long the host waits for a killed or
	// exited adapter's pipes to drain.
	commandWaitDelay = 2 * time.Second
)

// Command runs a host-written adapter: `sh -c <command line>` receives the
// canonical request bytes (exactly the hashed bytes) on stdin and prints one
// JSON value, the raw output, on stdout. Exit 75 suspends the run; any other
// non-zero exit, a signal or a timeout fails the effect. Command adapters
// are admitted for every kind, their records always carry retryable:false
// and a configurationDigest, and they are never memoized (they may have
// side effects).
type Command struct {
	id      string
	argv    []string
	dir     string
	timeout time.Duration
	config  string
}

// NewCommand admits `sh -c line` under id. dir is the working directory
// ("" keeps the host's); timeout <= 0 means DefaultCommandTimeout.
func NewCommand(id, line, dir string, timeout time.Duration) (*Command, error) {
	if line == "" || len(line) > 8192 || bytes.IndexByte([]byte(line), 0) >= 0 {
		return nil, Errorf(fault.Parse, "executor %q: command line must be 1..8192 bytes without NUL", id)
	}
	if timeout <= 0 {
		timeout = DefaultCommandTimeout
	}
	if timeout > 600*time.Second {
		return nil, Errorf(fault.Parse, "executor %q: command timeout over 600000 ms", id)
	}
	c := &Command{id: id, argv: []string{"sh", "-c", line}, timeout: timeout}
	var cwd any
	if dir != "" {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return nil, Errorf(fault.IOFailed, "executor %q: %v", id, err)
		}
		c.dir, cwd = abs, abs
	}
	argv := []any{"sh", "-c", line}
	cfg, err := canon.Digest(map[string]any{"kind": "command", "argv": argv, "cwd": cwd, "timeoutMs": float64(timeout.Milliseconds())})
	if err != nil {
		return nil, Errorf(fault.Internal, "executor %q: %v", id, err)
	}
	c.config = cfg
	return c, nil
}

// ID implements Executor.
func (c *Command) ID() string { return c.id }

// Describe implements Executor.
func (c *Command) Describe() Descriptor {
	return Descriptor{Effects: AllEffects, NoRetry: true, ConfigurationDigest: c.config}
}

// Execute implements Executor.
func (c *Command) Execute(ctx context.Context, req Request) (Response, error) {
	payload, err := canon.Encode(req)
	if err != nil {
		return Response{}, &fault.Error{Code: fault.Internal, Message: "effect request is not canonical JSON", Host: true}
	}
	out, ferr := runCommand(ctx, c.argv, c.dir, payload, maxOutputBytes(req), c.timeout)
	if ferr != nil {
		return Response{}, ferr
	}
	v, perr := canon.Parse(out, 0)
	if perr != nil {
		return Response{}, Errorf(fault.EffectUnparseable, "command output is not JSON")
	}
	return Response{Output: v}, nil
}

// boundedBuffer keeps at most max bytes and remembers an overflow.
type boundedBuffer struct {
	buf      bytes.Buffer
	max      int
	overflow bool
}

func (b *boundedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.buf.Len(); len(p) > room {
		b.overflow = true
		if room > 0 {
			b.buf.Write(p[:room])
		}
		return len(p), nil // keep draining so the child never blocks
	}
	return b.buf.Write(p)
}

// commandFailure classifies how a command ended: its deadline or
// cancellation, a failure to observe it, a signal, the suspend exit code
// or another non-zero exit; nil for a clean exit.
func commandFailure(ctx context.Context, waitErr error) *fault.Error {
	if ctx.Err() != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return &fault.Error{Code: fault.BudgetExhausted, Message: "host executable timed out; external completion may be uncertain", Uncertain: true}
		}
		return &fault.Error{Code: fault.EffectFailed, Message: "host executable was cancelled; external completion may be uncertain", Uncertain: true}
	}
	if waitErr == nil {
		return nil
	}
	var exitErr *exec.ExitError
	if !errors.As(waitErr, &exitErr) {
		return &fault.Error{Code: fault.EffectFailed, Message: "host executable could not be observed to completion", Uncertain: true}
	}
	if ws, ok := exitErr.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return &fault.Error{Code: fault.EffectFailed, Message: "host executable was terminated by a signal; external completion may be uncertain", Uncertain: true}
	}
	if exitErr.ExitCode() == ExitSuspended {
		return &fault.Error{Code: fault.EffectSuspended, Message: "executor asked the host to suspend the run", NotRetryable: true}
	}
	return Errorf(fault.EffectFailed, "host executable failed; diagnostics withheld")
}

// runCommand runs argv with payload on stdin and returns stdout (at most
// maxOut bytes). The process group is killed when the deadline passes.
func runCommand(ctx context.Context, argv []string, dir string, payload []byte, maxOut int, timeout time.Duration) ([]byte, *fault.Error) {
	if len(payload) > MaxCommandStdin {
		return nil, Errorf(fault.BudgetExhausted, "effect request is %d bytes, over the %d-byte command bound", len(payload), MaxCommandStdin)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	// Its own process group, so a timeout also kills what sh started.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	cmd.WaitDelay = commandWaitDelay
	// stdout is an *os.File pipe read here rather than an io.Writer that
	// os/exec copies into: Wait then returns when the process exits, not
	// when every descendant holding the pipe has let go. stderr is never
	// recorded, so it goes to the null device.
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, Errorf(fault.EffectUnbound, "host executable could not be started")
	}
	defer outR.Close()
	cmd.Stdout = outW
	stdin, err := cmd.StdinPipe()
	if err != nil {
		outW.Close()
		return nil, Errorf(fault.EffectUnbound, "host executable could not be started")
	}
	err = cmd.Start()
	outW.Close()
	if err != nil {
		return nil, Errorf(fault.EffectUnbound, "host executable could not be started")
	}
	stdout := &boundedBuffer{max: maxOut}
	readDone := make(chan struct{})
	go func() {
		_, _ = io.Copy(stdout, outR)
		close(readDone)
	}()
	incomplete := make(chan bool, 1)
	go func() {
		_, werr := stdin.Write(payload)
		cerr := stdin.Close()
		incomplete <- werr != nil || (cerr != nil && !errors.Is(cerr, io.ErrClosedPipe))
	}()
	waitErr := cmd.Wait()
	// The adapter is done; whatever it left running in its process group
	// goes with it, so no effect outlives its record.
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	select {
	case <-readDone:
	case <-time.After(commandWaitDelay):
		// A descendant that left the group still holds stdout.
		outR.Close()
		<-readDone
	}
	short := <-incomplete
	if f := commandFailure(ctx, waitErr); f != nil {
		return nil, f
	}
	if short {
		return nil, Errorf(fault.EffectFailed, "executor closed stdin before request delivery")
	}
	if stdout.overflow {
		return nil, &fault.Error{Code: fault.BudgetExhausted, Message: "effect output exceeds maxOutputBytes", Uncertain: true}
	}
	return stdout.buf.Bytes(), nil
}
