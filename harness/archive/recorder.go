package archive

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/effect"
	"github.com/algal-assay/assay/engine/effect/live"
	"github.com/algal-assay/assay/engine/fault"
)

// Mode says who answers live requests.
type Mode string

// Record modes.
const (
	// None: only the archive answers; no request leaves the machine, and a
	// request the archive cannot answer makes the run could-not-replay.
	None Mode = "none"
	// Missing: the archive answers what it can (a failure is never an
	// answer); the rest go live and are added.
	Missing Mode = "missing"
	// All: every request goes live; the workload's entries are rewritten.
	All Mode = "all"
)

// ParseMode admits a --record value.
func ParseMode(s string) (Mode, error) {
	switch Mode(s) {
	case None, Missing, All:
		return Mode(s), nil
	case "":
		return None, nil
	}
	return "", fmt.Errorf("--record %q: want none, missing or all", s)
}

// Answers is the answer table of one workload's recordings: the first
// successful record (else the first record) for each executor,
// configuration digest and request digest, in index order.
type Answers struct {
	a       *Archive
	records map[string]effect.Record
	digests []string // request digests in first-seen order
	// failed holds records of failed requests an older archive kept (an
	// HTTP error, a timeout): they are never served as answers, only named
	// when the request goes unanswered.
	failed map[string]effect.Record
	// configs are the recorded configuration digests of each request, for
	// telling what differs when only the configuration changed.
	configs map[string][]string
	// cache holds the prompt-cache tokens recorded for each answer, by
	// executor, configuration and request digest (answerKey).
	cache map[string]CacheTokens

	once     sync.Once
	requests map[string]effect.Request // digest -> stored body
}

func answerKey(executor, config, request string) string {
	return executor + "\x00" + config + "\x00" + request
}

// Answers loads the table of workload's first recording (repeat 1),
// verifying every receipt it reads.
func (a *Archive) Answers(workload string) (*Answers, error) { return a.RepeatAnswers(workload, 1) }

// RepeatAnswers loads the table of workload's recording of repeat rep
// (1-based): only that repeat's entries answer, so a repeat is never
// served another repeat's answer.
func (a *Archive) RepeatAnswers(workload string, rep int) (*Answers, error) {
	entries, err := a.Entries()
	if err != nil {
		return nil, err
	}
	t := &Answers{a: a, records: map[string]effect.Record{}, failed: map[string]effect.Record{}, configs: map[string][]string{}, cache: map[string]CacheTokens{}}
	for _, e := range entries {
		if e.Workload != workload || e.repeat() != max(1, rep) {
			continue
		}
		cached := map[string]CacheTokens{}
		for _, c := range e.Cache {
			cached[cacheKey(c.Executor, c.Request)] = c
		}
		r, err := a.Receipt(e.Receipt)
		if err != nil {
			return nil, err
		}
		effects, _ := r["effects"].([]any)
		recs, err := effect.ParseRecords(effects)
		if err != nil {
			return nil, invalid(e.Receipt, 0, err.Error())
		}
		for _, rec := range recs {
			if rec.ConfigurationDigest == "" || rec.Cached {
				continue
			}
			k := answerKey(rec.Executor, rec.ConfigurationDigest, rec.RequestDigest)
			if c, ok := cached[cacheKey(rec.Executor, rec.RequestDigest)]; ok {
				// The entry's receipt says under which configuration.
				t.cache[k] = c
			}
			if rec.Err != nil && live.IsFailureCode(rec.Err.Code) {
				// A failure is not an answer: the request stays unanswered
				// in every mode, so --record missing asks it again.
				if _, ok := t.failed[k]; !ok {
					t.failed[k] = rec
				}
				continue
			}
			prev, seen := t.records[k]
			if !seen {
				t.digests = append(t.digests, rec.RequestDigest)
				ck := rec.Executor + "\x00" + rec.RequestDigest
				if !slices.Contains(t.configs[ck], rec.ConfigurationDigest) {
					t.configs[ck] = append(t.configs[ck], rec.ConfigurationDigest)
				}
			}
			if !seen || prev.Err != nil && rec.Err == nil {
				t.records[k] = rec
			}
		}
	}
	return t, nil
}

// Len is the number of answers held.
func (t *Answers) Len() int {
	if t == nil {
		return 0
	}
	return len(t.records)
}

// cacheOf is the prompt-cache tokens recorded with executor's answer to
// request under configuration config.
func (t *Answers) cacheOf(executor, config, request string) (CacheTokens, bool) {
	if t == nil {
		return CacheTokens{}, false
	}
	c, ok := t.cache[answerKey(executor, config, request)]
	return c, ok
}

func (t *Answers) lookup(executor, config, request string) (effect.Record, bool) {
	if t == nil {
		return effect.Record{}, false
	}
	r, ok := t.records[answerKey(executor, config, request)]
	return r, ok
}

// explain says why the archive holds no answer to req (digest d) from
// executor under configuration config: the archive kept a failure for it;
// the same request was recorded under another configuration (and which of
// its fields differ: model, host, params); or the nearest recorded request
// of the same cell and the request paths where they differ.
func (t *Answers) explain(executor, config, d string, req effect.Request, current map[string]any) string {
	if t == nil || t.a == nil {
		return ""
	}
	if f, ok := t.failed[answerKey(executor, config, d)]; ok {
		return fmt.Sprintf("the archive holds only a failure for it (%s: %s), never replayed as an answer", f.Err.Code, f.Err.Message)
	}
	if others := t.configs[executor+"\x00"+d]; len(others) > 0 {
		return "the same request was recorded under another configuration of this backend; " + t.configDiff(others[0], current)
	}
	t.once.Do(func() {
		t.requests = map[string]effect.Request{}
		for _, d := range t.digests {
			if body, ok, err := t.a.Request(d); err == nil && ok {
				t.requests[d] = body
			}
		}
	})
	best, bestDiffs := "", []string(nil)
	for _, d := range t.digests {
		body, ok := t.requests[d]
		if !ok || body["cellId"] != req["cellId"] || body["kind"] != req["kind"] {
			continue
		}
		if diffs := effect.Differences(body, req); best == "" || len(diffs) < len(bestDiffs) {
			best, bestDiffs = d, diffs
		}
	}
	if best == "" || len(bestDiffs) == 0 {
		return "no request of this cell is recorded for this executor"
	}
	return fmt.Sprintf("the nearest recorded request of this cell, %s, differs at %s", best, strings.Join(bestDiffs, ", "))
}

// configDiff names the configuration fields that differ between the
// recorded configuration (digest recorded, its value kept in the archive)
// and the current one.
func (t *Answers) configDiff(recorded string, current map[string]any) string {
	old, ok, err := t.a.Request(recorded)
	if err != nil || !ok || current == nil {
		return "its configuration digest was " + recorded
	}
	var diffs []string
	for _, k := range slices.Sorted(maps.Keys(mergeKeys(old, current))) {
		a, _ := canon.Encode(old[k])
		b, _ := canon.Encode(current[k])
		if string(a) == string(b) {
			continue
		}
		name := configFieldNames[k]
		if name == "" {
			name = "params (" + k + ")"
		}
		diffs = append(diffs, fmt.Sprintf("%s %s -> %s", name, a, b))
	}
	if len(diffs) == 0 {
		return "its configuration digest was " + recorded
	}
	return "differs at " + strings.Join(diffs, ", ")
}

// configFieldNames says what a configuration value's key is to a person.
var configFieldNames = map[string]string{"model": "model", "baseUrl": "host (base-url)", "render": "rendering rules", "kind": "api"}

func mergeKeys(a, b map[string]any) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

// Miss is a request the archive could not answer under --record none.
type Miss struct {
	Executor      string
	Cell          string
	RequestDigest string
	Detail        string
	// Repeat is the repeat that asked (1 for a workload without repeats).
	Repeat int
	// Contender and Case name the run that asked (filled in by the
	// harness from the receipts once the runs are done; empty when no
	// receipt of the run names the request).
	Contender, Case string
}

// Failure is a live request that got no answer (an HTTP error status, a
// timeout, a lost connection, a refused redirect or answer). Its run is
// never archived and the run fails naming it.
type Failure struct {
	Executor      string
	Cell          string
	RequestDigest string
	Repeat        int
	// Status is the HTTP status (0: none).
	Status int
	// Code and Message are the recorded failure (the server's message,
	// redacted).
	Code, Message string
	// Contender and Case name the run that asked (filled in by the
	// harness).
	Contender, Case string
}

// Log collects what the recorders of one workload run saw.
type Log struct {
	mu         sync.Mutex
	misses     []Miss
	seen       map[string]bool
	live       int
	requests   map[string]effect.Request
	failures   map[string]Failure // by executor and request digest
	redactions map[string]int     // by request digest
	configs    map[string]map[string]any
	cache      map[string]CacheTokens // by executor and request digest
}

// NewLog returns an empty log.
func NewLog() *Log {
	return &Log{seen: map[string]bool{}, requests: map[string]effect.Request{}, failures: map[string]Failure{},
		redactions: map[string]int{}, configs: map[string]map[string]any{}, cache: map[string]CacheTokens{}}
}

// Cache is the prompt-cache tokens the server reported for executor's
// request of digest d, answered live or from the archive in this run;
// false when it reported none.
func (l *Log) Cache(executor, d string) (CacheTokens, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c, ok := l.cache[cacheKey(executor, d)]
	return c, ok
}

func (l *Log) setCache(c CacheTokens) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cache[cacheKey(c.Executor, c.Request)] = c
}

// Failures returns the failed live requests, sorted by cell, digest and
// executor.
func (l *Log) Failures() []Failure {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]Failure, 0, len(l.failures))
	for _, f := range l.failures {
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b Failure) int {
		return strings.Compare(a.Cell+"\x00"+a.RequestDigest+"\x00"+a.Executor, b.Cell+"\x00"+b.RequestDigest+"\x00"+b.Executor)
	})
	return out
}

// Failed reports whether executor's request of digest d failed live.
func (l *Log) Failed(executor, d string) (Failure, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f, ok := l.failures[executor+"\x00"+d]
	return f, ok
}

// Redactions is the number of secret values redacted from the answer to
// the request of digest d.
func (l *Log) Redactions(d string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.redactions[d]
}

// Configs returns the configuration values of the live backends that
// answered, by configuration digest.
func (l *Log) Configs() map[string]map[string]any {
	l.mu.Lock()
	defer l.mu.Unlock()
	return maps.Clone(l.configs)
}

// Misses returns the unanswerable requests, sorted by cell and digest.
func (l *Log) Misses() []Miss {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := slices.Clone(l.misses)
	slices.SortFunc(out, func(a, b Miss) int {
		if c := strings.Compare(a.Cell+"\x00"+a.RequestDigest+"\x00"+a.Executor, b.Cell+"\x00"+b.RequestDigest+"\x00"+b.Executor); c != 0 {
			return c
		}
		return a.Repeat - b.Repeat
	})
	return out
}

// Live is the number of requests that went to a server.
func (l *Log) Live() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.live
}

// Requests returns the live request bodies, by digest.
func (l *Log) Requests() map[string]effect.Request {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[string]effect.Request, len(l.requests))
	for k, v := range l.requests {
		out[k] = v
	}
	return out
}

func (l *Log) miss(m Miss) {
	l.mu.Lock()
	defer l.mu.Unlock()
	k := fmt.Sprintf("%s\x00%s\x00%d", m.Executor, m.RequestDigest, m.Repeat)
	if l.seen[k] {
		return
	}
	l.seen[k] = true
	l.misses = append(l.misses, m)
}

// Recorder stands in front of a live backend and decides, by mode, whether
// the archive or the server answers. An answer the archive gives comes
// back as the very record the server once produced: same executor, same
// output or error, same usage, same configuration digest, so a replayed
// receipt is byte-identical to the recorded one.
//
// Within one run a request is answered once: concurrent or repeated
// identical requests to the same backend share the first live answer, so
// what a run records does not depend on scheduling, and a replay (which
// can hold one answer per request) reproduces it exactly.
type Recorder struct {
	id      string
	desc    effect.Descriptor
	mode    Mode
	live    effect.Executor
	answers *Answers
	log     *Log

	// Config is the configuration value the descriptor's digest is taken
	// of (kept in the archive, so a miss after a configuration change can
	// name the field that changed).
	Config map[string]any

	// Repeat is the repeat this recorder serves (0 and 1 are the first),
	// named in misses.
	Repeat int

	mu      sync.Mutex
	flights map[string]*flight
}

type flight struct {
	done chan struct{}
	resp effect.Response
	err  error
}

// NewRecorder wraps live (nil under None: nothing may go live) as the
// executor id with descriptor desc (live's, or the configuration digest it
// would have).
func NewRecorder(id string, desc effect.Descriptor, mode Mode, live effect.Executor, answers *Answers, log *Log) *Recorder {
	return &Recorder{id: id, desc: desc, mode: mode, live: live, answers: answers, log: log, flights: map[string]*flight{}}
}

// ID implements effect.Executor.
func (r *Recorder) ID() string { return r.id }

// Describe implements effect.Executor.
func (r *Recorder) Describe() effect.Descriptor { return r.desc }

// Execute implements effect.Executor.
func (r *Recorder) Execute(ctx context.Context, req effect.Request) (effect.Response, error) {
	d, err := effect.RequestDigest(req)
	if err != nil {
		return effect.Response{}, err
	}
	if r.mode != All {
		if rec, ok := r.answers.lookup(r.id, r.desc.ConfigurationDigest, d); ok {
			if c, ok := r.answers.cacheOf(r.id, r.desc.ConfigurationDigest, d); ok {
				r.log.setCache(c)
			}
			return replayed(rec)
		}
	}
	if r.mode == None || r.live == nil {
		cell, _ := req["cellId"].(string)
		detail := r.answers.explain(r.id, r.desc.ConfigurationDigest, d, req, r.Config)
		r.log.miss(Miss{Executor: r.id, Cell: cell, RequestDigest: d, Detail: detail, Repeat: max(1, r.Repeat)})
		msg := fmt.Sprintf("could not replay: cell %q request %s is not recorded for executor %q", cell, d, r.id)
		if r.Repeat > 1 {
			msg += fmt.Sprintf(" in repeat %d", r.Repeat)
		}
		if detail != "" {
			msg += "; " + detail
		}
		return effect.Response{}, &fault.Error{Code: fault.EffectUnbound, Message: msg, NotRetryable: true}
	}
	r.mu.Lock()
	if f, ok := r.flights[d]; ok {
		r.mu.Unlock()
		select {
		case <-f.done:
			return f.resp, f.err
		case <-ctx.Done():
			return effect.Response{}, ctx.Err()
		}
	}
	f := &flight{done: make(chan struct{})}
	r.flights[d] = f
	r.mu.Unlock()

	var rep live.Report
	if lx, ok := r.live.(live.Executor); ok {
		f.resp, rep, f.err = lx.ExecuteReport(ctx, req)
	} else {
		f.resp, f.err = r.live.Execute(ctx, req)
	}
	r.mu.Lock()
	if f.err != nil {
		// A failure is not an answer: the next identical request asks
		// again (waiters already in line share this one).
		delete(r.flights, d)
	}
	r.mu.Unlock()
	close(f.done)
	if ctx.Err() == nil {
		cell, _ := req["cellId"].(string)
		r.log.mu.Lock()
		r.log.live++
		r.log.requests[d] = req
		if rep.Redactions > 0 {
			r.log.redactions[d] = rep.Redactions
		}
		if c := (CacheTokens{Executor: r.id, Request: d, Read: max(0, rep.CacheRead), Write: max(0, rep.CacheWrite)}); c.Read+c.Write > 0 && !live.Failed(f.err, rep) {
			r.log.cache[cacheKey(r.id, d)] = c
		}
		if r.Config != nil {
			r.log.configs[r.desc.ConfigurationDigest] = r.Config
		}
		if live.Failed(f.err, rep) {
			e, _ := fault.As(f.err)
			fl := Failure{Executor: r.id, Cell: cell, RequestDigest: d, Repeat: max(1, r.Repeat), Status: rep.Status, Code: fault.CodeOf(f.err), Message: f.err.Error()}
			if rep.Malformed && fl.Status == 0 {
				fl.Status = 200
			}
			if e != nil {
				fl.Message = e.Message
			}
			r.log.failures[r.id+"\x00"+d] = fl
		} else {
			delete(r.log.failures, r.id+"\x00"+d)
		}
		r.log.mu.Unlock()
	}
	return f.resp, f.err
}

// replayed serves a recorded record again: its output, or its error with
// the usage the failed call reported.
func replayed(rec effect.Record) (effect.Response, error) {
	if rec.Err != nil {
		return effect.Response{Usage: rec.Usage}, &fault.Error{Code: rec.Err.Code, Message: rec.Err.Message, NotRetryable: rec.NotRetryable}
	}
	return effect.Response{Output: rec.Output, Usage: rec.Usage}, nil
}
