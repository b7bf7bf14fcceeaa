package parts

import (
	"context"
	"sync"

	"github.com/algal-assay/assay/engine/bench"
	"github.com/algal-assay/assay/engine/evidence"
	"github.com/algal-assay/assay/harness/workload"
)

// Ahead is how many parts of a run in parts may be in flight at once
// (running, or done and waiting for the parts before them to be
// written): enough for the next part to fill the slots the current one's
// tail leaves idle, and a constant, so memory stays flat.
const Ahead = 3

// Measure runs one part's config: the bench measure of the run the parts
// belong to, on slots shared with the parts beside it, an earlier part
// (a lower rank) served first. A part is one bench config, so the harness's
// bench Measure implements it; a foundry is never split.
type Measure interface {
	MeasurePart(ctx context.Context, cfg *bench.Config, runner evidence.Runner, slots *bench.Slots, rank int) (*bench.Report, error)
}

// Flight runs the parts of one run: consecutive parts overlap, up to
// Ahead at once on one pool of slots, so the tail of a part whose last
// system runs alone leaves no slot idle. Everything else happens in part
// order, once the part is done (Begin, then Put), so the run directory,
// the store and the record are those of one part after another, and a
// part that fails ends the flight with its error once the parts before it
// are put, as it would one part at a time; the parts after it are
// cancelled and dropped.
type Flight struct {
	// Take gives a part's report without running it (from a shard or an
	// unfinished run; nil when the part must run), with its artifact id
	// when that is not "part-report": its value, its bytes as checked, or
	// both (a shard's part its record vouches for comes as bytes alone,
	// which are written as they are and parsed once, by the verify phase).
	Take func(ctx context.Context, p workload.Part) (*Job, error)
	// Config admits the config a part runs.
	Config func(p workload.Part) (*bench.Config, error)
	// Measure runs a part on Runner.
	Measure Measure
	Runner  evidence.Runner
	// Begin is called in part order before a part's outcome is taken (a
	// record's next iteration); Put writes a done part's report.
	Begin func() (int, error)
	Put   func(job *Job, it int) error

	slots *bench.Slots
	ahead int
	wg    sync.WaitGroup

	mu     sync.Mutex
	jobs   []*Job // started, in part order
	failed bool
}

// NewFlight is a flight on concurrency slots (0 or less: the default),
// its functions left to the caller.
func NewFlight(concurrency int) *Flight {
	n := concurrency
	if n <= 0 {
		n = evidence.DefaultConcurrency()
	}
	f := &Flight{slots: bench.NewSlots(n), ahead: Ahead}
	if n == 1 {
		f.ahead = 1 // one case at a time is one part at a time
	}
	return f
}

// Job is one part in flight: taken (from a shard or an unfinished run)
// when started, or running until done is closed.
type Job struct {
	Part   workload.Part
	ID     string         // the record's artifact id of its report
	Report map[string]any // nil for a taken report given as bytes alone
	Raw    []byte         // a taken report's bytes as checked
	err    error
	done   chan struct{}
	cancel context.CancelFunc
}

// Run starts parts in order, at most Ahead unwritten at once, and
// finishes each in order; it returns once none is running.
func (f *Flight) Run(ctx context.Context, parts []workload.Part) error {
	ctx, cancel := context.WithCancel(ctx)
	defer f.wg.Wait()
	defer cancel()
	var queue []*Job
	for i := 0; ; i++ {
		more := i < len(parts) && !f.stopped()
		for len(queue) > 0 && (len(queue) >= f.ahead || !more) {
			if err := f.finish(queue[0]); err != nil {
				return err
			}
			queue = queue[1:]
		}
		if !more {
			return nil
		}
		queue = append(queue, f.start(ctx, parts[i]))
	}
}

// stopped says a part has failed: no later part starts.
func (f *Flight) stopped() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.failed
}

// fail records job's failure and cancels the parts after it, whose
// results a run stopping at job would never see.
func (f *Flight) fail(job *Job, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	job.err, f.failed = err, true
	for _, j := range f.jobs {
		if j.Part.N > job.Part.N {
			j.cancel()
		}
	}
}

// start takes part's report or starts running it.
func (f *Flight) start(ctx context.Context, part workload.Part) *Job {
	jctx, cancel := context.WithCancel(ctx)
	job := &Job{Part: part, ID: "part-report", done: make(chan struct{}), cancel: cancel}
	f.mu.Lock()
	f.jobs = append(f.jobs, job)
	f.mu.Unlock()
	taken, err := f.Take(ctx, part)
	if taken != nil {
		job.Report, job.Raw = taken.Report, taken.Raw
		if taken.ID != "" {
			job.ID = taken.ID
		}
	}
	if err != nil || job.Report != nil || job.Raw != nil {
		if err != nil {
			f.fail(job, err)
		}
		close(job.done)
		return job
	}
	cfg, err := f.Config(part)
	if err != nil {
		f.fail(job, err)
		close(job.done)
		return job
	}
	f.wg.Go(func() {
		defer close(job.done)
		rep, err := f.Measure.MeasurePart(jctx, cfg, f.Runner, f.slots, part.N)
		if err != nil {
			f.fail(job, err)
			return
		}
		job.Report = rep.Value()
	})
	return job
}

// finish waits for job and puts its report, or returns its error.
func (f *Flight) finish(job *Job) error {
	it, err := f.Begin()
	if err != nil {
		return err
	}
	<-job.done
	job.cancel()
	if job.err != nil {
		return job.err
	}
	if err := f.Put(job, it); err != nil {
		return err
	}
	job.Report, job.Raw = nil, nil
	return nil
}
