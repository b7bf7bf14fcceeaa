package evidence

import "sync"

// Abort keeps the first failure of a batch of jobs numbered in report
// order, so a concurrent run fails with the same error a one-at-a-time run
// in that order would: the lowest-numbered failure, not the first to
// happen. Jobs numbered above a known failure are skipped; jobs below it
// still run, because one of them may fail first in report order.
type Abort struct {
	mu  sync.Mutex
	at  int
	err error
}

// Skip reports whether job i need not run: a job numbered before it has
// already failed.
func (a *Abort) Skip(i int) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.err != nil && a.at < i
}

// Record notes job i's outcome; a nil err is ignored.
func (a *Abort) Record(i int, err error) {
	if err == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.err == nil || i < a.at {
		a.at, a.err = i, err
	}
}

// Err is the lowest-numbered failure, or nil.
func (a *Abort) Err() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.err
}
