package harness

import (
	"context"
	"sync"
	"testing"

	"github.com/algal-assay/assay/harness/workload"
)

// Every progress event counts a judged case as done in the same step as it
// counts it passed or failed, and events arrive in the order counted: the
// display never shows more cases passed than done (it once ran one ahead).
func TestProgressPassedNeverAheadOfDone(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"ticket-triage.bench.yaml", "intent-select.foundry.yaml"} {
		w := loadWorkload(t, suitePath(name))
		b := newTestBench()
		var mu sync.Mutex
		var events []Progress
		o, err := Run(context.Background(), w, Options{Runner: b, Store: b, Out: t.TempDir(), Concurrency: 8,
			OnProgress: func(p Progress) { mu.Lock(); events = append(events, p); mu.Unlock() }})
		if err != nil || !o.Verification.OK {
			t.Fatalf("%s: %v", name, err)
		}
		if len(events) == 0 {
			t.Fatalf("%s: no progress events", name)
		}
		for i, ev := range events {
			if ev.Passed+ev.Failed > ev.Done {
				t.Errorf("%s event %d: %d passed + %d failed > %d done", name, i, ev.Passed, ev.Failed, ev.Done)
			}
			if ev.Done != i+1 {
				t.Errorf("%s event %d: done %d, events out of order", name, i, ev.Done)
			}
		}
		if w.Kind == workload.KindBench {
			last := events[len(events)-1]
			if last.Passed+last.Failed != last.Done || last.Done != last.Total {
				t.Errorf("%s: last event %+v", name, last)
			}
		}
	}
}
