package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/algal-assay/assay/engine/bench"
	"github.com/algal-assay/assay/engine/effect"
	"github.com/algal-assay/assay/engine/effect/openai"
	"github.com/algal-assay/assay/engine/evidence"
	"github.com/algal-assay/assay/engine/foundry"
	"github.com/algal-assay/assay/engine/manifest"
	"github.com/algal-assay/assay/harness/archive"
)

// CodeCouldNotReplay is the code of a run whose live requests the archive
// could not answer under --record none.
const CodeCouldNotReplay = "COULD_NOT_REPLAY"

// ReplayError ends a run whose live backends were asked something the
// archive holds no answer for. It names every such request and the one
// command that records exactly those.
type ReplayError struct {
	Workload string
	Archive  string
	Misses   []archive.Miss
	// Command re-records only the missing answers.
	Command string
}

func (e *ReplayError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "could-not-replay: %d live request(s) of %s have no recorded answer in %s:", len(e.Misses), e.Workload, e.Archive)
	for _, m := range e.Misses {
		if m.Repeat > 1 {
			fmt.Fprintf(&b, "\n  - cell %q (executor %s, repeat %d): request %s", m.Cell, m.Executor, m.Repeat, m.RequestDigest)
		} else {
			fmt.Fprintf(&b, "\n  - cell %q (executor %s): request %s", m.Cell, m.Executor, m.RequestDigest)
		}
		if m.Detail != "" {
			fmt.Fprintf(&b, "; %s", m.Detail)
		}
	}
	fmt.Fprintf(&b, "\nrecord only these with: %s", e.Command)
	return b.String()
}

// ErrorCode returns CodeCouldNotReplay.
func (e *ReplayError) ErrorCode() string { return CodeCouldNotReplay }

// live is one workload run's recording state.
type live struct {
	w       *Workload
	mode    archive.Mode
	arc     *archive.Archive
	answers []*archive.Answers // by repeat - 1
	log     *archive.Log
	env     openai.Env

	mu       sync.Mutex
	backends map[string]*openai.Backend // by backend key (name or model)
	names    map[string]bool            // executor names that are live
}

// usesLive reports whether any executor of w is a live backend.
func (w *Workload) usesLive() bool {
	for _, s := range w.Systems {
		for _, e := range s.Executors {
			if LiveSpec(e.Spec) {
				return true
			}
		}
	}
	for _, e := range w.Executors {
		if LiveSpec(e.Spec) {
			return true
		}
	}
	if w.Generator != nil {
		for _, e := range w.Generator.Executors {
			if LiveSpec(e.Spec) {
				return true
			}
		}
	}
	return false
}

// liveConcurrency is the case concurrency live backends can use: twice
// the sum of their max-concurrency, so that while some cases do their
// local work (the run itself, storing the receipt) others are already
// waiting for a request slot, and every slot stays busy.
func (w *Workload) liveConcurrency() int {
	seen := map[string]bool{}
	n := 0
	add := func(spec string) {
		if !LiveSpec(spec) {
			return
		}
		key := spec[len("openai:"):]
		if seen[key] {
			return
		}
		seen[key] = true
		c := Backend{Config: openai.Config{Model: key}}
		if b, ok := w.Backend(key); ok {
			c = b
		}
		if c.Config.MaxConcurrency > 0 {
			n += c.Config.MaxConcurrency
		} else {
			n += openai.DefaultMaxConcurrency
		}
	}
	for _, s := range w.Systems {
		for _, e := range s.Executors {
			add(e.Spec)
		}
	}
	for _, e := range w.Executors {
		add(e.Spec)
	}
	return 2 * n
}

func newLive(w *Workload, opts Options) (*live, error) {
	if !w.usesLive() {
		return nil, nil
	}
	mode := opts.Record
	if mode == "" {
		mode = archive.None
	}
	arc, err := archive.Open(opts.Archive)
	if err != nil {
		return nil, err
	}
	l := &live{w: w, mode: mode, arc: arc, log: archive.NewLog(), env: opts.Env, backends: map[string]*openai.Backend{}, names: map[string]bool{}}
	if l.env == nil {
		l.env = os.LookupEnv
	}
	if mode != archive.All {
		// Recording i answers repeat i only: a repeat replayed from
		// another's recording would not be a sample of its own.
		for rep := 1; rep <= max(1, w.Repeats); rep++ {
			a, err := arc.RepeatAnswers(w.Name, rep)
			if err != nil {
				return nil, err
			}
			l.answers = append(l.answers, a)
		}
	}
	return l, nil
}

func (l *live) config(key string) openai.Config {
	if b, ok := l.w.Backend(key); ok {
		return b.Config
	}
	return openai.Config{Model: key}
}

// builder is the evidence.ExecutorBuilder of repeat rep (1-based).
func (l *live) builder(rep int) evidence.ExecutorBuilder {
	return func(name, spec string, m *manifest.Manifest) (effect.Executor, bool, error) {
		return l.build(rep, name, spec, m)
	}
}

func (l *live) build(rep int, name, spec string, m *manifest.Manifest) (effect.Executor, bool, error) {
	if !LiveSpec(spec) {
		return nil, false, nil
	}
	key := spec[len("openai:"):]
	cfg := l.config(key)
	l.mu.Lock()
	l.names[name] = true
	var inner effect.Executor
	if l.mode != archive.None {
		b, ok := l.backends[key]
		if !ok {
			var err error
			if b, err = openai.New(key, cfg, l.env); err != nil {
				l.mu.Unlock()
				return nil, false, err
			}
			l.backends[key] = b
		}
		inner = &toolsFor{b: b, tools: openai.ToolsOf(m, nil)}
	}
	l.mu.Unlock()
	var answers *archive.Answers
	if rep <= len(l.answers) {
		answers = l.answers[rep-1]
	}
	rec := archive.NewRecorder(name, openai.Descriptor(cfg), l.mode, inner, answers, l.log)
	rec.Repeat = rep
	return rec, true, nil
}

// toolsFor serves one contender through a shared backend with the
// contender's tool catalog.
type toolsFor struct {
	b     *openai.Backend
	tools func(string) []openai.Tool
}

func (t *toolsFor) ID() string                  { return t.b.ID() }
func (t *toolsFor) Describe() effect.Descriptor { return t.b.Describe() }
func (t *toolsFor) Execute(ctx context.Context, req effect.Request) (effect.Response, error) {
	cell, _ := req["cellId"].(string)
	return t.b.ExecuteWith(ctx, req, t.tools(cell))
}

// runnerAt returns the runner repeat rep of the evaluate phase uses: the
// injected one (without its effect memo when the run repeats), admitting
// the recorders when the workload has live backends. A runner that cannot
// admit them is refused: it would call servers unrecorded.
func (r *run) runnerAt(rep int) (evidence.Runner, error) {
	base := r.opts.Runner
	if r.w.Repeats > 1 {
		if m, ok := base.(memoRunner); ok {
			base = m.WithoutMemo()
		}
	}
	if r.live == nil {
		return base, nil
	}
	lr, ok := base.(evidence.LiveRunner)
	if !ok {
		return nil, errors.New("harness: this workload names live backends (openai:), but the runner cannot admit the recording archive in front of them")
	}
	return lr.WithExecutors(r.live.builder(rep)), nil
}

// checkReplay fails the evaluate phase when the archive could not answer,
// and counts the live calls whose server reported no token usage.
func (r *run) checkReplay() error {
	if r.live == nil {
		return nil
	}
	if err := r.countUnknownUsage(); err != nil {
		return err
	}
	misses := r.live.log.Misses()
	if len(misses) == 0 {
		return nil
	}
	cmd := "assay run " + displayPath(r.w.Path) + " --record missing"
	if r.opts.Repeats > 0 {
		cmd += fmt.Sprintf(" --repeats %d", r.opts.Repeats)
	}
	if a := filepath.Clean(r.opts.Archive); r.opts.Archive != "" && filepath.Base(a) != archive.DefaultDir {
		cmd += " --archive " + r.opts.Archive
	}
	r.o.Replay = &ReplayError{Workload: displayPath(r.w.Path), Archive: r.live.arc.Dir(), Misses: misses, Command: cmd}
	return r.o.Replay
}

// contenderCase is one case run a repeat's report names.
type contenderCase struct {
	contender, caseID, receipt string
	repeat                     int
}

// reportedCases lists the case runs of every repeat, in repeat order.
func (r *run) reportedCases() []contenderCase {
	var out []contenderCase
	for i, ev := range r.repeatEvidence() {
		out = append(out, casesOf(ev.bench, ev.foundry, i+1)...)
	}
	return out
}

func casesOf(b *bench.Report, f *foundry.Result, repeat int) []contenderCase {
	var out []contenderCase
	if rep := b; rep != nil {
		for _, s := range rep.Systems {
			for _, c := range s.Cases {
				out = append(out, contenderCase{s.ID, c.ID, c.ReceiptDigest, repeat})
			}
		}
	}
	if f != nil && f.Report != nil {
		rep := f.Report
		for i, cand := range rep.Candidates {
			name := fmt.Sprintf("candidate-%02d-%s", i+1, strings.TrimPrefix(cand.ManifestKey, "organism:"))
			for _, c := range cand.Cases {
				out = append(out, contenderCase{name, c.ID, c.ReceiptDigest, repeat})
			}
			if cand.ManifestDigest == rep.Promoted {
				for _, c := range rep.Holdout.Cases {
					out = append(out, contenderCase{name, c.ID, c.ReceiptDigest, repeat})
				}
			}
		}
	}
	return out
}

// recordArchive adds the run's live answers to the archive (--record
// missing or all). It runs only after the evidence verified, so a
// cancelled, failed or unverified run never records anything.
func (r *run) recordArchive() error {
	if r.live == nil || r.live.mode == archive.None || r.o.Verification == nil || !r.o.Verification.OK {
		return nil
	}
	u := archive.Update{Workload: r.w.Name, Receipts: map[string]map[string]any{}, Replace: r.live.mode == archive.All}
	clock := r.opts.Clock
	if clock == nil {
		clock = time.Now
	}
	u.Now = clock().UTC().Format(time.RFC3339)
	requests := r.live.log.Requests()
	kept := map[string]bool{}
	for _, cc := range r.reportedCases() {
		rec, err := r.opts.Store.Receipt(cc.receipt)
		if err != nil {
			return err
		}
		models := map[string]bool{}
		isLive := false
		effects, _ := rec["effects"].([]any)
		for _, x := range effects {
			e, _ := x.(map[string]any)
			if ex, _ := e["executor"].(string); !r.live.names[ex] || e["configurationDigest"] == nil {
				continue
			}
			isLive = true
			if usage, ok := e["usage"].(map[string]any); ok {
				if m, ok := usage["model"].(string); ok {
					models[m] = true
				}
			}
			if d, ok := e["requestDigest"].(string); ok && requests[d] != nil && !kept[d] {
				kept[d] = true
				u.Requests = append(u.Requests, requests[d])
			}
		}
		if !isLive {
			continue
		}
		ms := make([]string, 0, len(models))
		for m := range models {
			ms = append(ms, m)
		}
		slices.Sort(ms)
		u.Entries = append(u.Entries, archive.Entry{Contender: cc.contender, Case: cc.caseID, Repeat: cc.repeat, Receipt: cc.receipt, Models: ms})
		u.Receipts[cc.receipt] = rec
	}
	return r.live.arc.Apply(u)
}

// startLive sets up recording for a workload with live backends.
func (r *run) startLive() error {
	l, err := newLive(r.w, r.opts)
	if err != nil {
		return err
	}
	r.live = l
	return nil
}

// concurrency is the case concurrency: as asked, else enough to keep the
// live backends' request slots busy.
func (r *run) concurrency() int {
	if r.opts.Concurrency > 0 || r.live == nil {
		return r.opts.Concurrency
	}
	return max(evidence.DefaultConcurrency(), r.w.liveConcurrency())
}

// countUnknownUsage fills Outcome.UnknownUsage: per contender, the live
// calls whose server omitted token counts. Their tokens (and so any cost)
// are unknown, and tables say so instead of showing the 0 the report's
// sums carry.
func (r *run) countUnknownUsage() error {
	counts := map[string]int{}
	for _, cc := range r.reportedCases() {
		rec, err := r.opts.Store.Receipt(cc.receipt)
		if err != nil {
			return err
		}
		effects, _ := rec["effects"].([]any)
		for _, x := range effects {
			e, _ := x.(map[string]any)
			if ex, _ := e["executor"].(string); !r.live.names[ex] || e["configurationDigest"] == nil || e["output"] == nil && e["error"] != nil {
				continue
			}
			u, _ := e["usage"].(map[string]any)
			_, in := u["tokensIn"]
			_, out := u["tokensOut"]
			if !in || !out {
				counts[contenderLabel(r.o, cc.contender)]++
			}
		}
	}
	if len(counts) > 0 {
		r.o.UnknownUsage = counts
	}
	return nil
}

// contenderLabel maps the archive's contender name to the one the summary
// table shows (a foundry candidate's manifest key).
func contenderLabel(o *Outcome, contender string) string {
	if o.Foundry == nil || o.Foundry.Report == nil {
		return contender
	}
	for i, c := range o.Foundry.Report.Candidates {
		if fmt.Sprintf("candidate-%02d-%s", i+1, strings.TrimPrefix(c.ManifestKey, "organism:")) == contender {
			return c.ManifestKey
		}
	}
	return contender
}
