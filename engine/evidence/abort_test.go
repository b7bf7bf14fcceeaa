package evidence

import (
	"errors"
	"sync"
	"testing"
)

func TestAbortKeepsTheLowestNumberedFailure(t *testing.T) {
	t.Parallel()
	var a Abort
	if a.Skip(0) || a.Err() != nil {
		t.Fatal("a fresh Abort skips or fails")
	}
	a.Record(1, nil)
	a.Record(7, errors.New("seven"))
	if !a.Skip(8) || a.Skip(6) || a.Skip(7) {
		t.Error("skip must hold only for jobs after the failure")
	}
	a.Record(3, errors.New("three"))
	a.Record(5, errors.New("five"))
	if a.Err().Error() != "three" || !a.Skip(4) || a.Skip(2) {
		t.Errorf("err %v", a.Err())
	}
	// Concurrent records settle on the lowest number.
	var b Abort
	var wg sync.WaitGroup
	for i := 100; i > 0; i-- {
		wg.Add(1)
		go func() { defer wg.Done(); b.Record(i, errors.New("x")) }()
	}
	wg.Wait()
	if b.at != 1 {
		t.Errorf("lowest failure %d, want 1", b.at)
	}
}
