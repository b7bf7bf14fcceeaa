// Package crashtest kills a child process at a chosen point of its
// progress, for the tests that check what a SIGKILL leaves on disk.
//
// The point is a count of things visible on disk (entries in a directory,
// files of a kind), not a delay: a fast or quiet machine finishes the
// child's work before a delay fires, and the test then kills nothing. The
// package is not internal so that the harness and CLI crash tests use the
// same loop as the engine's; nothing outside tests imports it.
package crashtest

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// Child is the test binary run again for the one test named test (a
// helper that does its work when env says so), with env added to the
// environment and its stderr the parent's; the caller starts it.
func Child(test string, env ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$")
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	return cmd
}

// KillAt waits for the started cmd, sending it SIGKILL as soon as dir
// holds at least target entries. It reports whether the child died of that
// signal; err is any other way it ended badly (nil when it ran to the end
// before reaching target).
func KillAt(cmd *exec.Cmd, dir string, target int) (killed bool, err error) {
	return KillWhen(cmd, func() int {
		names, _ := os.ReadDir(dir)
		return len(names)
	}, target)
}

// KillWhen is KillAt for any count: it sends SIGKILL as soon as visible()
// reaches target (visible is polled every millisecond).
func KillWhen(cmd *exec.Cmd, visible func() int, target int) (killed bool, err error) {
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err = <-done:
			return signalled(err)
		case <-tick.C:
			if visible() >= target {
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
