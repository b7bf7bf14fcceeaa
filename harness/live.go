package harness

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/algal-assay/assay/engine/bench"
	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/effect"
	"github.com/algal-assay/assay/engine/effect/live"
	"github.com/algal-assay/assay/engine/evidence"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/foundry"
	"github.com/algal-assay/assay/engine/manifest"
	"github.com/algal-assay/assay/harness/archive"
	"github.com/algal-assay/assay/harness/workload"
)

// CodeCouldNotReplay is the code of a run whose live requests the archive
// could not answer under --record none.
const CodeCouldNotReplay = "COULD_NOT_REPLAY"

// ReplayError is what ends a run whose live backends were asked something
// the archive holds no answer for: every such request and the one command
// that records exactly those. The run fails with a *fault.Error of code
// CodeCouldNotReplay that wraps it (errors.As reaches it) and prints as it
// does.
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
		fmt.Fprintf(&b, "\n  - %s: request %s", where(m.Contender, m.Case, m.Cell, m.Executor, m.Repeat), m.RequestDigest)
		if m.Detail != "" {
			fmt.Fprintf(&b, "; %s", m.Detail)
		}
	}
	fmt.Fprintf(&b, "\nrecord only these with: %s", e.Command)
	return b.String()
}

// where names a live request's place: the system (or candidate) and case
// that asked, when known, the cell and the executor.
func where(contender, cs, cell, executor string, repeat int) string {
	var b strings.Builder
	if contender != "" {
		fmt.Fprintf(&b, "system %q case %q ", contender, cs)
	}
	fmt.Fprintf(&b, "cell %q (executor %s", cell, executor)
	if repeat > 1 {
		fmt.Fprintf(&b, ", repeat %d", repeat)
	}
	b.WriteString(")")
	return b.String()
}

// CodeLiveFailed is the code of a run in which live requests got no
// answer (an HTTP error status, a timeout, a lost connection, a refused
// redirect or answer): the run fails whatever its gate says, and those
// runs are not archived.
const CodeLiveFailed = "LIVE_REQUEST_FAILED"

// FailedError names every live request of a run that got no answer: the
// system and case that asked, the cell, the executor, the HTTP status and
// the server's message (secrets redacted), and how to ask again.
type FailedError struct {
	Workload string
	Failures []archive.Failure
	// Command asks the failed requests again once the server is fixed.
	Command string
}

func (e *FailedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "live requests failed: %d request(s) of %s got no answer; nothing of their runs was archived:", len(e.Failures), e.Workload)
	for _, f := range e.Failures {
		fmt.Fprintf(&b, "\n  - %s: ", where(f.Contender, f.Case, f.Cell, f.Executor, f.Repeat))
		if f.Status != 0 {
			fmt.Fprintf(&b, "HTTP %d: ", f.Status)
		}
		fmt.Fprintf(&b, "%s: %s", f.Code, f.Message)
	}
	if e.Command != "" {
		fmt.Fprintf(&b, "\nonce the server answers, ask only these again with: %s", e.Command)
	}
	return b.String()
}

// couldNotReplay is the coded error of a run the archive could not
// answer: its text is e's alone.
func couldNotReplay(e *ReplayError) *fault.Error {
	return &fault.Error{Code: CodeCouldNotReplay, Err: e}
}

// Recording puts the recording archive in front of the live model
// backends of one run (every registered scheme with effect.Live): the executors it builds answer from the
// archive or from the server as the record mode says; after the run it
// names what the archive could not answer (ReplayError) and adds what the
// servers answered (Record). Workload runs and the config commands
// (`assay bench CONFIG`, `assay foundry CONFIG`) share it, so a recording
// behaves the same whoever makes it.
type Recording struct {
	name     string
	backends []workload.Backend
	opts     RecordOptions
	arc      *archive.Archive
	answers  []*archive.Answers // by repeat - 1
	log      *archive.Log

	// Signatures type the host tools agent cells may call, for the
	// function tools a backend offers (nil: the manifest's own).
	Signatures map[string]manifest.Signature

	mu    sync.Mutex
	live  map[string]effect.LiveClient // by spec (scheme and backend name or model)
	names map[string]bool              // executor names that are live
	// secrets are the values of every key variable the run's backends
	// name: each backend redacts all of them, not only its own.
	secrets []string
}

// RecordOptions say who answers a run's live backends and where answers
// are kept.
type RecordOptions struct {
	// Mode: none (the default: only the archive), missing or all.
	Mode archive.Mode
	// Archive is the archive directory (default archive.DefaultDir).
	Archive string
	// Env reads the live backends' variables and keys (nil: os.LookupEnv).
	Env effect.Env
	// Repeats is how many independent samples of each case the run takes
	// (a workload's repeats:, default 1); recording i answers repeat i.
	Repeats int
}

// NewRecording opens the archive for the run named name (the archive
// index's workload: a workload's name, or a config file's path), whose
// live specs (<scheme>:<name>) reach backends (a name not declared there
// is a model used with defaults).
func NewRecording(name string, backends []workload.Backend, opts RecordOptions) (*Recording, error) {
	if opts.Mode == "" {
		opts.Mode = archive.None
	}
	if opts.Env == nil {
		opts.Env = os.LookupEnv
	}
	arc, err := archive.Open(opts.Archive)
	if err != nil {
		return nil, err
	}
	l := &Recording{name: name, backends: backends, opts: opts, arc: arc, log: archive.NewLog(), live: map[string]effect.LiveClient{}, names: map[string]bool{}}
	// Every live backend redacts the values of every key variable any
	// backend of the run names (each scheme's default one included), not
	// only its own: a gateway may echo another's.
	var vars []string
	for _, sc := range effect.Schemes() {
		if sc.Live != nil {
			if k, ok := sc.Live.Default("m").(keyEnv); ok {
				vars = append(vars, k.KeyEnv())
			}
		}
	}
	for _, b := range backends {
		if k, ok := b.Config.(keyEnv); ok {
			vars = append(vars, k.KeyEnv())
		}
	}
	for _, v := range vars {
		if k, ok := opts.Env(v); ok && k != "" && !slices.Contains(l.secrets, k) {
			l.secrets = append(l.secrets, k)
		}
	}
	if opts.Mode != archive.All {
		// Recording i answers repeat i only: a repeat replayed from
		// another's recording would not be a sample of its own.
		for rep := 1; rep <= max(1, opts.Repeats); rep++ {
			a, err := arc.RepeatAnswers(name, rep)
			if err != nil {
				return nil, err
			}
			l.answers = append(l.answers, a)
		}
	}
	return l, nil
}

// Mode is the record mode.
func (l *Recording) Mode() archive.Mode { return l.opts.Mode }

// Dir is the archive directory.
func (l *Recording) Dir() string { return l.arc.Dir() }

// Live is the number of requests that went to a server.
func (l *Recording) Live() int { return l.log.Live() }

// liveConcurrency is the case concurrency the workload's live backends
// can use (see Recording.Concurrency).
func liveConcurrency(w *workload.Workload) int {
	var specs []string
	for _, s := range w.Systems {
		for _, e := range s.Executors {
			specs = append(specs, e.Spec)
		}
	}
	for _, e := range w.Executors {
		specs = append(specs, e.Spec)
	}
	l := Recording{backends: w.Backends}
	return l.Concurrency(specs)
}

// Concurrency is the case concurrency the live backends among specs can
// use: twice the sum of their max-concurrency, so that while some cases
// do their local work (the run itself, storing the receipt) others are
// already waiting for a request slot, and every slot stays busy.
func (l *Recording) Concurrency(specs []string) int {
	seen := map[string]bool{}
	n := 0
	for _, spec := range specs {
		s, ok := effect.ParseSpec(spec, effect.InConfig|effect.InFlag|effect.InWorkload)
		if !ok || s.Scheme.Live == nil || seen[spec] {
			continue
		}
		seen[spec] = true
		n += l.config(s).Concurrency()
	}
	return 2 * n
}

func newLive(w *workload.Workload, opts Options) (*Recording, error) {
	if !w.UsesLive() {
		return nil, nil
	}
	return NewRecording(w.Name, w.Backends, RecordOptions{Mode: opts.Record, Archive: opts.Archive, Env: opts.Env, Repeats: w.Repeats})
}

// config is the configuration a live spec names: its declared backend,
// else its scheme's defaults for the model it names.
func (l *Recording) config(s effect.Spec) effect.LiveConfig {
	for _, b := range l.backends {
		if b.Name == s.Arg && b.API == s.Scheme.Name {
			return b.Config
		}
	}
	return s.Scheme.Live.Default(s.Arg)
}

// Build implements evidence.ExecutorBuilder for a run without repeats
// (Builder(1)).
func (l *Recording) Build(name, spec string, m *manifest.Manifest) (effect.Executor, bool, error) {
	return l.build(1, name, spec, m)
}

// Builder is the evidence.ExecutorBuilder of repeat rep (1-based): a live
// spec becomes a recorder in front of its backend (no
// backend at all under --record none: nothing may leave the machine),
// answering from repeat rep's recording; other specs are left to the
// runner.
func (l *Recording) Builder(rep int) evidence.ExecutorBuilder {
	return func(name, spec string, m *manifest.Manifest) (effect.Executor, bool, error) {
		return l.build(rep, name, spec, m)
	}
}

func (l *Recording) build(rep int, name, spec string, m *manifest.Manifest) (effect.Executor, bool, error) {
	s, ok := effect.ParseSpec(spec, effect.InConfig|effect.InFlag|effect.InWorkload)
	if !ok || s.Scheme.Live == nil {
		return nil, false, nil
	}
	cfg := l.config(s)
	l.mu.Lock()
	l.names[name] = true
	var inner effect.Executor
	if l.opts.Mode != archive.None {
		b, ok := l.live[spec]
		if !ok {
			var err error
			if b, err = s.Scheme.Live.Dial(s.Arg, cfg, l.opts.Env); err != nil {
				l.mu.Unlock()
				return nil, false, err
			}
			if r, ok := b.(redactor); ok {
				r.Redact(l.secrets...)
			}
			l.live[spec] = b
		}
		inner = b.Serve(m, l.Signatures)
	}
	l.mu.Unlock()
	var answers *archive.Answers
	if rep <= len(l.answers) {
		answers = l.answers[rep-1]
	}
	rec := archive.NewRecorder(name, cfg.Descriptor(), l.opts.Mode, inner, answers, l.log)
	rec.Repeat = rep
	rec.Config = cfg.Value()
	return rec, true, nil
}

// Runner returns r admitting the recorders of repeat rep. A runner that
// cannot admit them is refused: it would call servers unrecorded.
func (l *Recording) Runner(r evidence.Runner, rep int) (evidence.Runner, error) {
	lr, ok := r.(evidence.LiveRunner)
	if !ok {
		return nil, errors.New("harness: this run names live backends (" + liveForms() + "), but the runner cannot admit the recording archive in front of them")
	}
	return lr.WithExecutors(l.Builder(rep)), nil
}

// ReplayError is nil when the archive answered every request it was
// asked; otherwise it is the could-not-replay error (CodeCouldNotReplay)
// naming them (display names the run) with command, the one that records
// only those.
func (l *Recording) ReplayError(display, command string) *fault.Error {
	if e := l.unanswered(display, command); e != nil {
		return couldNotReplay(e)
	}
	return nil
}

// unanswered names the requests the archive could not answer, or is nil.
func (l *Recording) unanswered(display, command string) *ReplayError {
	misses := l.log.Misses()
	if len(misses) == 0 {
		return nil
	}
	return &ReplayError{Workload: display, Archive: l.arc.Dir(), Misses: misses, Command: command}
}

// liveForms names the live schemes for a message, each with its colon.
func liveForms() string {
	var names []string
	for _, s := range effect.Schemes() {
		if s.Live != nil {
			names = append(names, s.Name+":")
		}
	}
	return strings.Join(names, ", ")
}

// Placed is ReplayError naming, on every line, the system and case of
// runs (read from their receipts in st) that asked each request.
func (l *Recording) Placed(st evidence.Store, runs []RecordedRun, display, command string) *ReplayError {
	e := l.unanswered(display, command)
	if e == nil {
		return nil
	}
	at := l.askers(st, runs)
	var out []archive.Miss
	for _, m := range e.Misses {
		places := at[askKey(m.Executor, m.RequestDigest, m.Repeat)]
		if len(places) == 0 {
			out = append(out, m)
		}
		for _, p := range places {
			m.Contender, m.Case = p.Contender, p.Case
			out = append(out, m)
		}
	}
	e.Misses = out
	return e
}

// Failed is nil when every live request of the run was answered;
// otherwise it names each failed request with the system and case of
// runs that asked it.
func (l *Recording) Failed(st evidence.Store, runs []RecordedRun, display, command string) *FailedError {
	fails := l.log.Failures()
	if len(fails) == 0 {
		return nil
	}
	at := l.askers(st, runs)
	var out []archive.Failure
	for _, f := range fails {
		places := at[askKey(f.Executor, f.RequestDigest, f.Repeat)]
		if len(places) == 0 {
			out = append(out, f)
		}
		for _, p := range places {
			f.Contender, f.Case = p.Contender, p.Case
			out = append(out, f)
		}
	}
	return &FailedError{Workload: display, Failures: out, Command: command}
}

// FailedErr is Failed as the run's coded error (CodeLiveFailed), or nil.
func (l *Recording) FailedErr(st evidence.Store, runs []RecordedRun, display, command string) error {
	if e := l.Failed(st, runs, display, command); e != nil {
		return &fault.Error{Code: CodeLiveFailed, Err: e}
	}
	return nil
}

func askKey(executor, digest string, repeat int) string {
	return fmt.Sprintf("%s\x00%s\x00%d", executor, digest, max(1, repeat))
}

// askers maps each live request (executor, digest, repeat) to the runs
// whose receipts record it, in run order.
func (l *Recording) askers(st evidence.Store, runs []RecordedRun) map[string][]RecordedRun {
	out := map[string][]RecordedRun{}
	for _, run := range runs {
		rec, err := st.Receipt(run.Receipt)
		if err != nil {
			continue
		}
		seen := map[string]bool{}
		for _, e := range evidence.Effects(rec) {
			ex, _ := e["executor"].(string)
			d, _ := e["requestDigest"].(string)
			k := askKey(ex, d, run.Repeat)
			if !l.names[ex] || seen[k] {
				continue
			}
			seen[k] = true
			out[k] = append(out[k], run)
		}
	}
	return out
}

// runnerAt returns the runner repeat rep of the evaluate phase uses: the
// injected one (without its effect memo when the run repeats), admitting
// the recorders when the workload has live backends.
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
	return r.live.Runner(base, rep)
}

// checkReplay fails the evaluate phase when the archive could not answer.
func (r *run) checkReplay() error {
	if r.live == nil {
		return nil
	}
	cmd := r.recordCommand()
	r.o.Replay = r.live.Placed(r.opts.Store, r.reportedCases(), workload.DisplayPath(r.w.Path), cmd)
	if r.o.Replay == nil {
		return nil
	}
	return couldNotReplay(r.o.Replay)
}

// recordCommand is the command that asks the server only what the
// archive lacks.
func (r *run) recordCommand() string {
	cmd := "assay run " + workload.DisplayPath(r.w.Path) + " --record missing"
	if r.opts.Repeats > 0 {
		cmd += fmt.Sprintf(" --repeats %d", r.opts.Repeats)
	}
	if a := filepath.Clean(r.opts.Archive); r.opts.Archive != "" && filepath.Base(a) != archive.DefaultDir {
		cmd += " --archive " + r.opts.Archive
	}
	return cmd
}

// checkFailed fails the run when a live request got no answer, whatever
// its gate says (the runs that were answered are archived before).
func (r *run) checkFailed() error {
	if r.live == nil {
		return nil
	}
	return r.live.FailedErr(r.opts.Store, r.reportedCases(), workload.DisplayPath(r.w.Path), r.recordCommand())
}

// reportedCases lists the case runs of every repeat, in repeat order.
func (r *run) reportedCases() []RecordedRun {
	var out []RecordedRun
	for i, ev := range r.repeatEvidence() {
		out = append(out, casesOf(ev.Bench, ev.Foundry, i+1)...)
	}
	return out
}

// casesOf lists every run a report of repeat `repeat` cites: each
// system's cases, each candidate's train and validation cases, the
// promoted candidate's holdout, and the generator's run when a generator
// made the population.
func casesOf(b *bench.Report, f *foundry.Result, repeat int) []RecordedRun {
	var out []RecordedRun
	if b != nil {
		for _, s := range b.Systems {
			for _, c := range s.Cases {
				out = append(out, RecordedRun{s.ID, c.ID, c.ReceiptDigest, repeat})
			}
		}
	}
	if f != nil && f.Report != nil {
		rep := f.Report
		if rep.Lineage != nil {
			out = append(out, RecordedRun{GeneratorContender, GeneratorContender, rep.Lineage.ReceiptDigest, repeat})
		}
		for i, cand := range rep.Candidates {
			name := candidateContender(i, cand.ManifestKey)
			for _, c := range cand.Cases {
				out = append(out, RecordedRun{name, c.ID, c.ReceiptDigest, repeat})
			}
			if cand.ManifestDigest == rep.Promoted {
				for _, c := range rep.Holdout.Cases {
					out = append(out, RecordedRun{name, c.ID, c.ReceiptDigest, repeat})
				}
			}
		}
	}
	return out
}

// GeneratorContender names a foundry generator's run in the archive.
const GeneratorContender = "generator"

func candidateContender(i int, key string) string {
	return fmt.Sprintf("candidate-%02d-%s", i+1, strings.TrimPrefix(key, "organism:"))
}

// recordArchive adds the run's live answers to the archive (--record
// missing or all). It runs only after the evidence verified, so a
// cancelled, failed or unverified run never records anything.
func (r *run) recordArchive() error {
	if r.live == nil || r.o.Verification == nil || !r.o.Verification.OK {
		return nil
	}
	clock := r.opts.Clock
	if clock == nil {
		clock = time.Now
	}
	return r.live.RecordRuns(r.opts.Store, r.reportedCases(), clock())
}

// Record adds the live answers of a finished run to the archive under
// --record missing or all (nothing under none): the receipt of every
// case run the report (b or f) cites that made a live call, and the body
// of every live request. Call it only once the report's evidence
// verified, so that nothing half-answered is recorded.
func (l *Recording) Record(st evidence.Store, b *bench.Report, f *foundry.Result, now time.Time) error {
	return l.RecordRuns(st, casesOf(b, f, 1), now)
}

// Runs lists the case runs a bench report b or a foundry result f cites,
// as a recording names and archives them.
func Runs(b *bench.Report, f *foundry.Result) []RecordedRun { return casesOf(b, f, 1) }

// SearchRuns lists the runs an algal.search.v1 report cites, as a
// recording names and archives them: each generation's generator run and
// candidate cases under "gen-NN-" names (the previous winner competes
// again in every generation, and each generator run hears other
// feedback, so a name without its generation would stand for several
// receipts), then the final epoch's as Runs names them.
func SearchRuns(s *foundry.SearchReport) []RecordedRun {
	var out []RecordedRun
	for _, g := range s.Generations {
		prefix := fmt.Sprintf("gen-%02d-", g.Index)
		out = append(out, RecordedRun{prefix + GeneratorContender, GeneratorContender, g.ReceiptDigest, 1})
		for i, cand := range g.Candidates {
			name := prefix + candidateContender(i, cand.ManifestKey)
			for _, c := range cand.Cases {
				out = append(out, RecordedRun{name, c.ID, c.ReceiptDigest, 1})
			}
		}
	}
	return append(out, casesOf(nil, &foundry.Result{Report: s.Result}, 1)...)
}

// RecordedRun is one run a recording may archive: who ran which case in
// which repeat (1-based), and the storage digest of its receipt.
type RecordedRun struct {
	Contender, Case, Receipt string
	Repeat                   int
}

// RecordRuns is Record for runs named one by one (`assay run MANIFEST`,
// a workload's repeats): each run's receipt is archived when it made a
// live call.
func (l *Recording) RecordRuns(st evidence.Store, runs []RecordedRun, now time.Time) error {
	if l.opts.Mode == archive.None {
		return nil
	}
	u := archive.Update{Workload: l.name, Receipts: map[string]map[string]any{}, Replace: l.opts.Mode == archive.All}
	u.Now = now.UTC().Format(time.RFC3339)
	requests := l.log.Requests()
	kept := map[string]bool{}
	for _, c := range l.log.Configs() {
		u.Configs = append(u.Configs, c)
	}
	slices.SortFunc(u.Configs, func(a, b map[string]any) int {
		x, _ := canon.Encode(a)
		y, _ := canon.Encode(b)
		return strings.Compare(string(x), string(y))
	})
runs:
	for _, run := range runs {
		rec, err := st.Receipt(run.Receipt)
		if err != nil {
			return err
		}
		models := map[string]bool{}
		isLive := false
		redacted := 0
		var cache []archive.CacheTokens
		cached := map[string]bool{}
		for _, e := range evidence.Effects(rec) {
			ex, _ := e["executor"].(string)
			if !l.names[ex] || e["configurationDigest"] == nil {
				continue
			}
			d, _ := e["requestDigest"].(string)
			if _, failed := l.log.Failed(ex, d); failed {
				// Only answers are archived: a run with a failed request
				// is left for --record missing to ask again.
				continue runs
			}
			if errv, ok := e["error"].(map[string]any); ok {
				if code, _ := errv["code"].(string); live.IsFailureCode(code) {
					continue runs
				}
			}
			redacted += l.log.Redactions(d)
			isLive = true
			if c, ok := l.log.Cache(ex, d); ok && !cached[ex+"\x00"+d] {
				cached[ex+"\x00"+d] = true
				cache = append(cache, c)
			}
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
		archive.SortCache(cache)
		u.Entries = append(u.Entries, archive.Entry{Contender: run.Contender, Case: run.Case, Repeat: run.Repeat, Receipt: run.Receipt, Models: ms,
			Redacted: redacted, Rejected: rejectedCells(rec), Cache: cache})
		u.Receipts[run.Receipt] = rec
	}
	return l.arc.Apply(u)
}

// rejectedCells lists the cells of a receipt whose output contract
// rejected the answer (failed with EFFECT_UNPARSEABLE), sorted.
func rejectedCells(rec map[string]any) []string {
	cells, _ := rec["cells"].(map[string]any)
	var out []string
	for id, c := range cells {
		cm, _ := c.(map[string]any)
		f, _ := cm["failure"].(map[string]any)
		if f["code"] == fault.EffectUnparseable {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// keyEnv is a live configuration that names the variable holding its key.
type keyEnv interface{ KeyEnv() string }

// redactor is a live client that redacts secrets besides its own key.
type redactor interface{ Redact(secrets ...string) }

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
	return max(evidence.DefaultConcurrency(), liveConcurrency(r.w))
}
