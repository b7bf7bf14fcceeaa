package effect

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/store"
)

// ReplayID is the id a Replay executor reports.
const ReplayID = "replay"

// Replay serves recorded effects by request digest. When a digest repeats
// (retries, a cell re-activated in a loop) its records are served in record
// order. It is not a route: the router asks it first, before capability
// routing, and a digest it does not hold falls through to the live
// executors behind it, which lets resume replay a recorded prefix and run
// the tail live in one pass. With no live executor behind it a miss is
// unbound; Explain then says which cell and call missed and where the
// request departs from the nearest recorded one.
type Replay struct {
	mu       sync.Mutex
	queues   map[string][]Record
	counts   map[string]int     // digest -> records loaded
	requests map[string]Request // digest -> recorded request, when known
	order    []string           // recorded digests, first occurrence order
	paths    map[string]string  // digest -> owning cell path (receipt events)
	calls    map[string]int     // cell -> requests seen
}

// NewReplay holds records in the order given.
func NewReplay(records []Record) *Replay {
	r := &Replay{
		queues:   map[string][]Record{},
		counts:   map[string]int{},
		requests: map[string]Request{},
		paths:    map[string]string{},
		calls:    map[string]int{},
	}
	for _, rec := range records {
		r.add(rec)
	}
	return r
}

func (r *Replay) add(rec Record) {
	if _, seen := r.counts[rec.RequestDigest]; !seen {
		r.order = append(r.order, rec.RequestDigest)
	}
	r.counts[rec.RequestDigest]++
	r.queues[rec.RequestDigest] = append(r.queues[rec.RequestDigest], rec)
}

// ParseRecords admits a receipt's effects list.
func ParseRecords(effects []any) ([]Record, error) {
	out := make([]Record, 0, len(effects))
	for i, v := range effects {
		rec, err := ParseRecord(v)
		if err != nil {
			return nil, Errorf(fault.Parse, "effects[%d]: %s", i, fault.MessageOf(err))
		}
		out = append(out, rec)
	}
	return out, nil
}

// AddRequests keeps recorded requests (digest -> request) so a miss can be
// compared against them. Entries whose key is not the request's digest are
// ignored.
func (r *Replay) AddRequests(requests map[string]Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for d, req := range requests {
		if got, err := canon.Digest(req); err == nil && got == d {
			r.requests[d] = req
		}
	}
}

// AddReceipt appends a receipt's effect records (in order) and learns which
// cell path issued each digest from its "effect" events.
func (r *Replay) AddReceipt(receipt map[string]any) error {
	effects, _ := receipt["effects"].([]any)
	recs, err := ParseRecords(effects)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rec := range recs {
		r.add(rec)
	}
	events, _ := receipt["events"].([]any)
	for _, ev := range events {
		e, _ := ev.(map[string]any)
		if e["kind"] != "effect" {
			continue
		}
		d, _ := e["digest"].(string)
		p, _ := e["path"].(string)
		if d != "" && p != "" {
			if _, ok := r.paths[d]; !ok {
				r.paths[d] = p
			}
		}
	}
	return nil
}

// LoadReplay reads every receipt in a store's runs namespace, in storage
// reference order, for replay:<dir>. A request stored as a value under its
// own digest (values/<hex>.json) is kept for miss explanations.
func LoadReplay(s store.Store) (*Replay, error) { return LoadReplayScoped(s, ReplayScope{}) }

// ReplayScope narrows what a replay:<dir> executor serves, so that a
// directory holding several systems' recordings answers each system with
// its own: the same request can have been answered differently by a cheap
// and a frontier model.
type ReplayScope struct {
	// Manifest keeps only receipts that ran this manifest digest; empty
	// keeps every receipt.
	Manifest string
	// Executor keeps only records this executor made, when the kept
	// receipts hold any; otherwise every record is kept.
	Executor string
}

// LoadReplayScoped is LoadReplay narrowed by scope.
func LoadReplayScoped(s store.Store, scope ReplayScope) (*Replay, error) {
	receipts, byExecutor, err := scopedReceipts(s, scope)
	if err != nil {
		return nil, err
	}
	r := NewReplay(nil)
	for i, receipt := range receipts {
		if byExecutor {
			receipt = keepExecutor(receipt, scope.Executor)
		}
		if err := r.AddReceipt(receipt); err != nil {
			return nil, Errorf(fault.Parse, "receipt %d: %s", i, fault.MessageOf(err))
		}
	}
	if err := r.loadRequests(s); err != nil {
		return nil, err
	}
	return r, nil
}

// scopedReceipts reads the stored receipts of scope's manifest, in store
// order; byExecutor is true when any of them holds a record of scope's
// executor.
func scopedReceipts(s store.Store, scope ReplayScope) (receipts []map[string]any, byExecutor bool, err error) {
	refs, err := s.List(store.Runs)
	if err != nil {
		return nil, false, err
	}
	for _, ref := range refs {
		v, err := store.Load(s, store.Runs, ref)
		if err != nil {
			return nil, false, err
		}
		receipt, ok := v.(map[string]any)
		if !ok {
			return nil, false, Errorf(fault.Parse, "receipt %s is not an object", ref)
		}
		if scope.Manifest != "" && receipt["manifestDigest"] != scope.Manifest {
			continue
		}
		byExecutor = byExecutor || (scope.Executor != "" && hasExecutor(receipt, scope.Executor))
		receipts = append(receipts, receipt)
	}
	return receipts, byExecutor, nil
}

// hasExecutor reports whether a receipt holds a record executor made.
func hasExecutor(receipt map[string]any, executor string) bool {
	effects, _ := receipt["effects"].([]any)
	for _, e := range effects {
		if m, _ := e.(map[string]any); m["executor"] == executor {
			return true
		}
	}
	return false
}

// loadRequests adds the stored request bodies of the recorded digests.
func (r *Replay) loadRequests(s store.Store) error {
	for _, d := range r.order {
		v, ok, err := s.Get(store.Values, d)
		if err != nil {
			return err
		}
		if req, isObj := v.(map[string]any); ok && isObj {
			r.requests[d] = req
		}
	}
	return nil
}

// keepExecutor returns a shallow copy of receipt whose effects list holds
// only the records executor made.
func keepExecutor(receipt map[string]any, executor string) map[string]any {
	out := make(map[string]any, len(receipt))
	for k, v := range receipt {
		out[k] = v
	}
	effects, _ := receipt["effects"].([]any)
	kept := make([]any, 0, len(effects))
	for _, e := range effects {
		if m, _ := e.(map[string]any); m["executor"] == executor {
			kept = append(kept, e)
		}
	}
	out["effects"] = kept
	return out
}

// LoadReplayDir is LoadReplay over the file store at dir.
func LoadReplayDir(dir string) (*Replay, error) { return LoadReplayDirScoped(dir, ReplayScope{}) }

// LoadReplayDirScoped is LoadReplayScoped over the file store at dir.
func LoadReplayDirScoped(dir string, scope ReplayScope) (*Replay, error) {
	s, err := store.OpenFileStore(dir)
	if err != nil {
		return nil, err
	}
	return LoadReplayScoped(s, scope)
}

// ID implements Executor.
func (r *Replay) ID() string { return ReplayID }

// Describe implements Executor. Replay admission is by digest (Serves), so
// its capabilities never enter routing.
func (r *Replay) Describe() Descriptor { return Descriptor{Effects: AllEffects} }

// Serves implements Admitter: a recorded record for the digest remains.
func (r *Replay) Serves(req Request) bool {
	d, err := canon.Digest(req)
	if err != nil {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.queues[d]) > 0
}

// Remaining reports how many records are still unserved.
func (r *Replay) Remaining() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, q := range r.queues {
		n += len(q)
	}
	return n
}

// Take implements RecordSource.
func (r *Replay) Take(req Request, d string) (Record, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls[callKey(req)]++
	q := r.queues[d]
	if len(q) == 0 {
		return Record{}, false
	}
	r.queues[d] = q[1:]
	if _, known := r.requests[d]; !known && req != nil {
		r.requests[d] = req
	}
	return q[0], true
}

// Execute implements Executor for direct callers: the next recorded record
// becomes a response or an error.
func (r *Replay) Execute(_ context.Context, req Request) (Response, error) {
	d, err := RequestDigest(req)
	if err != nil {
		return Response{}, err
	}
	rec, ok := r.Take(req, d)
	if !ok {
		return Response{}, &fault.Error{Code: fault.EffectUnbound, Message: r.Explain(req), NotRetryable: true}
	}
	if e := rec.AsError(); e != nil {
		return Response{}, e
	}
	return Response{Output: rec.Output, Usage: rec.Usage, Executor: rec.Executor, Cached: rec.Cached}, nil
}

// callKey names the caller of a request: the cell id of an effect request,
// the path of a tool request.
func callKey(req Request) string {
	if c, ok := req["cellId"].(string); ok {
		return c
	}
	if p, ok := req["path"].(string); ok {
		return p
	}
	return ""
}

func sameCaller(req, recorded Request) bool {
	if c, ok := req["cellId"].(string); ok {
		return recorded["cellId"] == c
	}
	if p, ok := req["path"].(string); ok {
		return recorded["path"] == p
	}
	return false
}

// Explain says why the replay holds no answer for req: the cell and call,
// the request digest, and the nearest recorded request of that cell with
// the first field path where the two differ.
func (r *Replay) Explain(req Request) string {
	d, err := canon.Digest(req)
	if err != nil {
		return "replay miss: request is not canonical JSON"
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	caller := callKey(req)
	what := fmt.Sprintf("cell %q", caller)
	if _, isTool := req["tool"]; isTool && req["cellId"] == nil {
		what = fmt.Sprintf("tool %v at %q", req["tool"], caller)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "replay miss: %s call %d: request %s", what, max(r.calls[caller], 1), d)
	if n := r.counts[d]; n > 0 {
		fmt.Fprintf(&b, " was recorded %d time(s) and every recording is already served", n)
		return b.String()
	}
	b.WriteString(" is not recorded")
	if best, path := r.nearest(req); best != "" {
		fmt.Fprintf(&b, "; nearest recorded request for %q is %s, first difference at %s", caller, best, path)
		return b.String()
	}
	// No recorded body for this caller: name the recorded digests the
	// receipt events attribute to it, if any.
	if same := r.attributed(caller); len(same) > 0 {
		fmt.Fprintf(&b, "; recorded requests for %q: %s (their bodies are not stored, so no field comparison)", caller, strings.Join(same, ", "))
	} else {
		fmt.Fprintf(&b, "; no recorded request for %q", caller)
	}
	return b.String()
}

// nearest is the recorded request body of req's caller that differs from
// it in the fewest field paths (the first in record order on a tie), and
// the first differing path found on the way to it; "" when no body of
// that caller is recorded.
func (r *Replay) nearest(req Request) (digest, firstDiff string) {
	bestDiffs := -1
	for _, rd := range r.order {
		rec, ok := r.requests[rd]
		if !ok || !sameCaller(req, rec) {
			continue
		}
		var diffs []string
		diffPaths(&diffs, "", rec, req)
		if bestDiffs < 0 || len(diffs) < bestDiffs {
			digest, bestDiffs = rd, len(diffs)
			if len(diffs) > 0 {
				firstDiff = diffs[0]
			}
		}
	}
	if firstDiff == "" {
		firstDiff = "(request root)"
	}
	return digest, firstDiff
}

// attributed lists the recorded digests the receipt's events attribute
// to caller.
func (r *Replay) attributed(caller string) []string {
	var same []string
	for _, rd := range r.order {
		if p, ok := r.paths[rd]; ok && (p == caller || strings.HasSuffix(p, "/"+caller)) {
			same = append(same, rd)
		}
	}
	return same
}

// diffPaths appends, in canonical key order, the paths where a and b
// differ. A path is dotted object keys with [i] list indices, e.g.
// context.inputs.ticket or context.toolLog[0].output.
func diffPaths(out *[]string, path string, a, b any) {
	am, aObj := a.(map[string]any)
	bm, bObj := b.(map[string]any)
	if aObj && bObj {
		diffObjects(out, path, am, bm)
		return
	}
	al, aList := a.([]any)
	bl, bList := b.([]any)
	if aList && bList {
		diffLists(out, path, al, bl)
		return
	}
	ab, err1 := canon.Encode(a)
	bb, err2 := canon.Encode(b)
	if err1 != nil || err2 != nil || string(ab) != string(bb) {
		if path == "" {
			path = "(request root)"
		}
		*out = append(*out, path)
	}
}

func diffObjects(out *[]string, path string, am, bm map[string]any) {
	keys := make(map[string]struct{}, len(am)+len(bm))
	for k := range am {
		keys[k] = struct{}{}
	}
	for k := range bm {
		keys[k] = struct{}{}
	}
	for _, k := range canon.SortedKeys(keys) {
		av, aok := am[k]
		bv, bok := bm[k]
		p := k
		if path != "" {
			p = path + "." + k
		}
		if aok != bok {
			*out = append(*out, p)
			continue
		}
		diffPaths(out, p, av, bv)
	}
}

func diffLists(out *[]string, path string, al, bl []any) {
	for i := range max(len(al), len(bl)) {
		p := path + "[" + strconv.Itoa(i) + "]"
		if i >= len(al) || i >= len(bl) {
			*out = append(*out, p)
			continue
		}
		diffPaths(out, p, al[i], bl[i])
	}
}

// Differences lists, in canonical key order, the field paths where two
// requests differ, in the form replay misses use (context.inputs.ticket,
// context.toolLog[0].output).
func Differences(a, b Request) []string {
	var diffs []string
	diffPaths(&diffs, "", a, b)
	return diffs
}
