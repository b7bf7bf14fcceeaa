package rundir

import (
	"errors"

	"golang.org/x/sys/unix"
)

// exchange swaps the two paths atomically; errNoExchange when the file
// system cannot (EINVAL: no RENAME_EXCHANGE support; ENOSYS: old kernel).
func exchange(a, b string) error {
	if exchangeDisabled {
		return errNoExchange
	}
	err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) {
		return errNoExchange
	}
	return err
}
