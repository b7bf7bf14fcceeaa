package console

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/algal-assay/assay/harness"
	"github.com/algal-assay/assay/harness/workload"
)

// Without a terminal, a running workload reports its tally every interval.
func TestPlainProgressHeartbeat(t *testing.T) {
	t.Parallel()
	var b syncBuffer
	p := NewProgress(&b)
	p.interval = 5 * time.Millisecond
	w := &workload.Workload{Name: "slow", Kind: workload.KindBench, Systems: make([]workload.System, 2), Cases: make([]workload.Case, 3)}
	p.Start(w)
	p.Update(harness.Progress{Workload: "slow", Done: 2, Total: 6, Passed: 1, Failed: 1})
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(b.String(), "slow: 2/6 runs, 1 passed, 1 failed") && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	p.Finish(&harness.Result{Path: "slow.bench.yaml", Workload: w})
	got := b.String()
	for _, want := range []string{"slow: running 6 runs (2 systems x 3 cases)\n", "slow: 2/6 runs, 1 passed, 1 failed\n", "slow: FAIL (did not run)\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("progress lacks %q:\n%s", want, got)
		}
	}
	n := strings.Count(got, "\n")
	time.Sleep(20 * time.Millisecond)
	if strings.Count(b.String(), "\n") != n {
		t.Error("the heartbeat kept printing after the workload finished")
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A workload that has no runs says how many it has and why, not that a
// generator decides them; only a generator's population does.
func TestProgressStartNamesTheRunCount(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		w    *workload.Workload
		want string
	}{
		{&workload.Workload{Name: "empty", Kind: workload.KindBench, Systems: make([]workload.System, 2)}, "empty: running 0 runs (2 systems x 0 cases)\n"},
		{&workload.Workload{Name: "grown", Kind: workload.KindFoundry, Generator: &workload.Generator{}}, "grown: running runs decided by its generator\n"},
	} {
		var b syncBuffer
		p := NewProgress(&b)
		p.Start(tc.w)
		p.Finish(&harness.Result{Path: tc.w.Name + ".yaml", Workload: tc.w})
		if got := b.String(); !strings.HasPrefix(got, tc.want) {
			t.Errorf("progress starts %q, want %q", got, tc.want)
		}
	}
}

// A generated foundry's tally adds up: its generator's runs are counted
// as such, beside the judged case runs (it read "12 runs, 7 passed, 4
// failed").
func TestTallyCountsGeneratorRuns(t *testing.T) {
	t.Parallel()
	got := tally(harness.Progress{Done: 12, Passed: 7, Failed: 4})
	if got != "12 runs, 7 passed, 4 failed, 1 generator run" {
		t.Errorf("tally = %q", got)
	}
	if got := tally(harness.Progress{Done: 6, Total: 6, Passed: 5, Failed: 1}); got != "6/6 runs, 5 passed, 1 failed" {
		t.Errorf("tally = %q", got)
	}
}
