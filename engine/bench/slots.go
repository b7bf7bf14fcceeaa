package bench

import (
	"slices"
	"sync"
)

// Slots bound the cases in flight across several runs at once: a caller
// running consecutive reports side by side (the parts of a large
// workload) shares one Slots among them, so together they never run more
// cases at a time than one run would. A freed slot goes to the waiting
// case of the lowest rank (Options.Rank), first come first served within
// a rank: the earliest report keeps every slot it can use, and a later
// one gets only what would otherwise idle (the tail of a report whose
// last system runs alone). Slots change when cases run, never what a
// report holds.
type Slots struct {
	mu      sync.Mutex
	free    int
	waiting []slotWaiter // by rank, then arrival
}

type slotWaiter struct {
	rank  int
	ready chan struct{}
}

// NewSlots returns n slots (at least one).
func NewSlots(n int) *Slots { return &Slots{free: max(n, 1)} }

// acquire waits for a slot. It does not watch a context: a slot is held
// only while one case runs, and a cancelled case returns at once, so the
// wait is short, and the case then sees the cancellation itself and
// fails with the error it would fail with unslotted.
func (s *Slots) acquire(rank int) {
	s.mu.Lock()
	if s.free > 0 && len(s.waiting) == 0 {
		s.free--
		s.mu.Unlock()
		return
	}
	w := slotWaiter{rank: rank, ready: make(chan struct{})}
	at, _ := slices.BinarySearchFunc(s.waiting, rank+1, func(x slotWaiter, r int) int { return x.rank - r })
	s.waiting = slices.Insert(s.waiting, at, w)
	s.mu.Unlock()
	<-w.ready
}

// release frees a slot, handing it to the first waiter.
func (s *Slots) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.waiting) == 0 {
		s.free++
		return
	}
	w := s.waiting[0]
	s.waiting = s.waiting[1:]
	close(w.ready)
}
