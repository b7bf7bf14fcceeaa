package console

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/algal-assay/assay/harness"
	"github.com/algal-assay/assay/harness/workload"
	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// Progress shows runs done of total per workload with a pass/fail tally:
// a live bar (schollz/progressbar, which handles redraw, rate and width)
// when its writer is a terminal; otherwise plain start and finish lines
// and, for a workload still running, a line every interval, so CI logs
// stay readable and show that a long workload is alive.
type Progress struct {
	mu       sync.Mutex
	w        io.Writer
	live     bool
	bar      *progressbar.ProgressBar
	interval time.Duration
	last     harness.Progress
	name     string
	stop     chan struct{}
	done     chan struct{}
	// Failure prints a failure in the display's stream (a one-line JSON
	// error, or a sentence for a person); nil leaves failures to the
	// summary.
	Failure func(w io.Writer, code, message string)
}

// plainInterval is how often a plain display reports a running workload.
const plainInterval = 5 * time.Second

// NewProgress is the display on w: live when w is a terminal.
func NewProgress(w io.Writer) *Progress {
	live := false
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) && os.Getenv("TERM") != "dumb" {
		live = true
	}
	return &Progress{w: w, live: live, interval: plainInterval}
}

func (p *Progress) lineLocked(s string) {
	if p.bar != nil {
		_ = p.bar.Clear() // a display write; the job's result does not depend on it
	}
	fmt.Fprintln(p.w, s)
}

// Fail prints a failure through Failure, clearing the bar first.
func (p *Progress) Fail(code, message string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.Failure == nil {
		return
	}
	if p.bar != nil {
		_ = p.bar.Clear()
	}
	p.Failure(p.w, code, message)
}

// tally is "2/6 runs, 1 passed, 1 failed" and what else the event counts.
func tally(ev harness.Progress) string {
	runs := fmt.Sprintf("%d runs", ev.Done)
	if ev.Total > 0 {
		runs = fmt.Sprintf("%d/%d runs", ev.Done, ev.Total)
	}
	if ev.Reused > 0 {
		runs += fmt.Sprintf(" (%d reused from an interrupted run)", ev.Reused)
	}
	s := fmt.Sprintf("%s, %d passed, %d failed", runs, ev.Passed, ev.Failed)
	// Every run the harness does not judge is a generator's (it proposes
	// a population; there is no case to pass or fail), so the three
	// counts add up to the runs done.
	if gen := ev.Done - ev.Passed - ev.Failed; gen > 0 {
		s += ", " + plural(gen, "generator run")
	}
	return s
}

// Start shows a workload starting.
func (p *Progress) Start(w *workload.Workload) {
	n, shape := w.RunCount()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.name, p.last = w.Name, harness.Progress{Workload: w.Name, Total: n}
	if !p.live {
		p.startPlainLocked(w.Name, n, shape)
		return
	}
	// The total is unknown until the harness reports it (a generator's
	// population size, say): -1 shows a spinner until then.
	max := -1
	if n > 0 {
		max = n
	}
	p.bar = progressbar.NewOptions(max,
		progressbar.OptionSetWriter(p.w),
		progressbar.OptionSetDescription(w.Name),
		progressbar.OptionSetItsString("runs"),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionSetWidth(24),
	)
}

// startPlainLocked prints the start line and starts the heartbeat.
func (p *Progress) startPlainLocked(name string, n int, shape string) {
	what := fmt.Sprintf("%d runs (%s)", n, shape)
	if shape == "" {
		// Only a generator's population leaves the count open.
		what = "runs decided by its generator"
	}
	p.lineLocked(fmt.Sprintf("%s: running %s", name, what))
	p.stop, p.done = make(chan struct{}), make(chan struct{})
	go p.heartbeat(p.stop, p.done)
}

// heartbeat prints the running workload's tally every interval.
func (p *Progress) heartbeat(stop, done chan struct{}) {
	defer close(done)
	t := time.NewTicker(p.interval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			p.mu.Lock()
			p.lineLocked(fmt.Sprintf("%s: %s", p.name, tally(p.last)))
			p.mu.Unlock()
		}
	}
}

// Update shows a progress event of the running workload.
func (p *Progress) Update(ev harness.Progress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if ev.Done < p.last.Done {
		return // a late event from another goroutine
	}
	if ev.Total == 0 {
		ev.Total = p.last.Total
	}
	p.last = ev
	if p.bar == nil {
		return
	}
	if ev.Total > 0 && p.bar.GetMax() != ev.Total {
		p.bar.ChangeMax(ev.Total)
	}
	// The count first, then the tally: each renders, and the last render
	// shows both for the same event.
	_ = p.bar.Set(ev.Done)
	p.bar.Describe(fmt.Sprintf("%s (%d passed, %d failed)", ev.Workload, ev.Passed, ev.Failed))
}

// Finish shows a workload's result.
func (p *Progress) Finish(r *harness.Result) {
	p.mu.Lock()
	stop, done := p.stop, p.done
	p.stop, p.done = nil, nil
	p.mu.Unlock()
	if stop != nil {
		close(stop)
		<-done
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		_ = p.bar.Finish()
		p.bar = nil
	}
	p.lineLocked(p.finishLine(r))
	p.last = harness.Progress{}
}

// finishLine is a finished workload's line.
func (p *Progress) finishLine(r *harness.Result) string {
	switch o := r.Outcome; {
	case r.Workload == nil:
		return fmt.Sprintf("%s: FAIL (did not load)", r.Path)
	case r.ShardParts != nil && r.Err == nil:
		return fmt.Sprintf("%s: part(s) %s of this shard done (%s)", r.Workload.Name, joinInts(r.ShardParts), tally(p.last))
	case o == nil:
		return fmt.Sprintf("%s: FAIL (did not run)", r.Workload.Name)
	case r.Passed():
		return fmt.Sprintf("%s: pass (%s; %s)", r.Workload.Name, o.Status, tally(p.last))
	default:
		return fmt.Sprintf("%s: FAIL (%s; %s)", r.Workload.Name, o.Status, tally(p.last))
	}
}
