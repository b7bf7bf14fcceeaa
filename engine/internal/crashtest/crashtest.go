// Package crashtest kills a child process at a chosen point of its
// progress, for the tests that check what a SIGKILL leaves on disk.
//
// The point is a count of entries visible in a directory, not a delay: a
// fast or quiet machine finishes the child's work before a delay fires, and
// the test then kills nothing.
package crashtest

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// KillAt waits for the started cmd, sending it SIGKILL as soon as dir
// holds at least target entries. It reports whether the child died of that
// signal; err is any other way it ended badly (nil when it ran to the end
// before reaching target).
func KillAt(cmd *exec.Cmd, dir string, target int) (killed bool, err error) {
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err = <-done:
			return signalled(err)
		case <-tick.C:
			if names, _ := os.ReadDir(dir); len(names) >= target {
				if kerr := cmd.Process.Signal(syscall.SIGKILL); kerr != nil && !errors.Is(kerr, os.ErrProcessDone) {
					return false, errors.Join(kerr, <-done)
				}
				return signalled(<-done)
			}
		}
	}
}

func signalled(err error) (bool, error) {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
			return true, nil
		}
	}
	return false, err
}
