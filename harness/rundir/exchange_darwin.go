package rundir

import (
	"errors"

	"golang.org/x/sys/unix"
)

// exchange swaps the two paths atomically; errNoExchange when the file
// system cannot.
func exchange(a, b string) error {
	if exchangeDisabled {
		return errNoExchange
	}
	err := unix.RenamexNp(a, b, unix.RENAME_SWAP)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOTSUP) {
		return errNoExchange
	}
	return err
}
