package live

import (
	"context"
	"testing"
	"time"
)

func TestRequestsPerMinuteSpacesStarts(t *testing.T) {
	t.Parallel()
	l := NewLimiter(0, 1200) // one start per 50 ms
	start := time.Now()
	for range 4 {
		release, err := l.Acquire(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		release()
	}
	if el := time.Since(start); el < 140*time.Millisecond {
		t.Errorf("four starts at 1200/min took %v, want at least 150ms", el)
	}
}
