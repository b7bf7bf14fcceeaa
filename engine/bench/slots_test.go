package bench

import (
	"bytes"
	"context"
	"slices"
	"sync"
	"testing"
	"time"
)

// Runs sharing slots hold at most that many cases together, whatever
// their own concurrency, and each report is the one it makes alone.
func TestSharedSlotsBoundTheCasesOfEveryRun(t *testing.T) {
	t.Parallel()
	cfg, alone, _ := fixture(t)
	alone.ordered["cheap"] = true
	rep, err := Run(context.Background(), cfg, alone, Options{Concurrency: 1})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := rep.Encode()

	_, r, _ := fixture(t)
	r.jitter = true
	r.ordered["cheap"] = true
	slots := NewSlots(2)
	got := make([][]byte, 4)
	var wg sync.WaitGroup
	for i := range got {
		wg.Go(func() {
			rep, err := Run(context.Background(), cfg, r, Options{Concurrency: 8, Slots: slots, Rank: i})
			if err != nil {
				t.Error(err)
				return
			}
			got[i], _ = rep.Encode()
		})
	}
	wg.Wait()
	if r.peak != 2 {
		t.Errorf("at most %d cases ran at once under 2 shared slots, want 2", r.peak)
	}
	for i, b := range got {
		if !bytes.Equal(b, want) {
			t.Errorf("run %d under shared slots made another report", i)
		}
	}
}

// A freed slot goes to the waiter of the lowest rank, in arrival order
// within a rank.
func TestSlotsServeTheLowestRankFirst(t *testing.T) {
	t.Parallel()
	s := NewSlots(1)
	s.acquire(0)
	var mu sync.Mutex
	var order []int
	var wg sync.WaitGroup
	for i, rank := range []int{3, 1, 2, 1} {
		wg.Go(func() {
			s.acquire(rank)
			mu.Lock()
			order = append(order, rank*10+i)
			mu.Unlock()
			s.release()
		})
		// Each waiter queues before the next arrives.
		for deadline := time.Now().Add(10 * time.Second); ; {
			s.mu.Lock()
			n := len(s.waiting)
			s.mu.Unlock()
			if n == i+1 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("waiter %d never queued", i)
			}
			time.Sleep(time.Millisecond)
		}
	}
	s.release()
	wg.Wait()
	if want := []int{11, 13, 22, 30}; !slices.Equal(order, want) {
		t.Errorf("served %v, want %v (rank*10 + arrival)", order, want)
	}
	if s.free != 1 {
		t.Errorf("%d slots free after every release, want 1", s.free)
	}
}
