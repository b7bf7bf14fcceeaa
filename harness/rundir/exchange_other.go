//go:build !linux && !darwin

package rundir

// exchange is not available here: swapIn falls back to two renames.
func exchange(a, b string) error { return errNoExchange }
