package harness

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/algal-assay/assay/engine/bench"
	"github.com/algal-assay/assay/engine/evidence"
	"github.com/algal-assay/assay/engine/manifest"
)

// Per-case scripted responses compile into one table per executor whose
// cell entries are FIFO queues in the order the engine runs cases on a
// session (bench: case order; foundry: selection cases, then holdout). A
// scripted session serves its cases one at a time in that order, so case k
// takes exactly the responses it declared, provided every case declares
// exactly the calls it makes. alignment checks that proviso from the
// receipts: for every executor/cell queue a contender used at all, each of
// its cases must have made as many calls as it declared. A mismatch means
// a response was handed to the wrong case, so the run's evidence, though
// internally consistent, does not mean what the workload says.

// callKey names one queue.
type callKey struct{ executor, cell string }

// receiptCalls counts a receipt's live (non-memo) effect calls by executor
// and local cell id, and the memo hits it skipped.
func receiptCalls(receipt map[string]any) (map[callKey]int, int) {
	paths := map[string][]string{}
	events, _ := receipt["events"].([]any)
	for _, e := range events {
		ev, _ := e.(map[string]any)
		if ev["kind"] != "effect" {
			continue
		}
		d, _ := ev["digest"].(string)
		p, _ := ev["path"].(string)
		paths[d] = append(paths[d], p)
	}
	calls := map[callKey]int{}
	cached := 0
	for _, eff := range evidence.Effects(receipt) {
		d, _ := eff["requestDigest"].(string)
		ex, _ := eff["executor"].(string)
		ps := paths[d]
		var p string
		if len(ps) > 0 {
			p, paths[d] = ps[0], ps[1:]
		}
		if c, _ := eff["cached"].(bool); c {
			cached++
			continue
		}
		cell := p[strings.LastIndex(p, "/")+1:]
		calls[callKey{ex, cell}]++
	}
	return calls, cached
}

// receiptTap is the evidence store the verify phase hands the engine's
// verification: it passes every read through and keeps, per receipt read,
// only the call counts the alignment check needs, so each receipt is read
// from the store and parsed once per verification (a 2,048-receipt part
// used to read each twice). It keeps the counts, never the receipts, so its
// memory stays a few small maps per receipt.
type receiptTap struct {
	evidence.Store
	mu    sync.Mutex
	calls map[string]tappedCalls
}

type tappedCalls struct {
	calls  map[callKey]int
	cached int
}

func newReceiptTap(st evidence.Store) *receiptTap {
	return &receiptTap{Store: st, calls: map[string]tappedCalls{}}
}

// Receipt implements evidence.Store.
func (t *receiptTap) Receipt(digest string) (map[string]any, error) {
	rec, err := t.Store.Receipt(digest)
	if err != nil {
		return nil, err
	}
	calls, cached := receiptCalls(rec)
	t.mu.Lock()
	t.calls[digest] = tappedCalls{calls, cached}
	t.mu.Unlock()
	return rec, nil
}

// Measured implements bench.MeasureSink for the store beneath.
func (t *receiptTap) Measured(digest string, usage bench.Tally, attribution map[string]bench.Tally) {
	if s, ok := t.Store.(bench.MeasureSink); ok {
		s.Measured(digest, usage, attribution)
	}
}

// ReplayStored implements evidence.StoredReplayer for the store beneath.
func (t *receiptTap) ReplayStored(ctx context.Context, digest string, rec map[string]any, m *manifest.Manifest) ([]string, error) {
	return evidence.ReplayStored(ctx, t.Store, digest, rec, m)
}

// callsOf returns a receipt's call counts, reading it only when the
// verification did not (a claim it rejected before reaching the receipt).
func (t *receiptTap) callsOf(digest string) (map[callKey]int, int, error) {
	t.mu.Lock()
	c, ok := t.calls[digest]
	t.mu.Unlock()
	if ok {
		return c.calls, c.cached, nil
	}
	rec, err := t.Store.Receipt(digest)
	if err != nil {
		return nil, 0, err
	}
	calls, cached := receiptCalls(rec)
	return calls, cached, nil
}

// contenderRun is one contender's case runs in session order.
type contenderRun struct {
	label    string // `system "circuit"` or `candidate organism:x`
	executor map[string]bool
	cases    []caseRun
}

type caseRun struct{ id, receipt string }

func (r *run) contenders() []contenderRun {
	var out []contenderRun
	if r.o.Bench != nil {
		for _, s := range r.o.Bench.Systems {
			cr := contenderRun{label: fmt.Sprintf("system %q", s.ID), executor: map[string]bool{}}
			for _, ws := range r.w.Systems {
				if ws.ID == s.ID {
					for _, e := range ws.Executors {
						if e.FromCases() {
							cr.executor[e.Name] = true
						}
					}
				}
			}
			for _, c := range s.Cases {
				cr.cases = append(cr.cases, caseRun{c.ID, c.ReceiptDigest})
			}
			out = append(out, cr)
		}
		return out
	}
	if r.o.Foundry == nil || r.o.Foundry.Report == nil {
		return nil
	}
	rep := r.o.Foundry.Report
	execs := map[string]bool{}
	for _, e := range r.w.Executors {
		if e.FromCases() {
			execs[e.Name] = true
		}
	}
	for _, c := range rep.Candidates {
		cr := contenderRun{label: "candidate " + c.ManifestKey, executor: execs}
		for _, cs := range c.Cases {
			cr.cases = append(cr.cases, caseRun{cs.ID, cs.ReceiptDigest})
		}
		if c.ManifestDigest == rep.Promoted {
			for _, cs := range rep.Holdout.Cases {
				cr.cases = append(cr.cases, caseRun{cs.ID, cs.ReceiptDigest})
			}
		}
		out = append(out, cr)
	}
	return out
}

// alignment returns one sentence per case whose scripted calls differ from
// its declared responses, reading call counts through tap.
func (r *run) alignment(tap *receiptTap) ([]string, error) {
	var problems []string
	for _, cr := range r.contenders() {
		if len(cr.executor) == 0 {
			continue
		}
		per := make([]map[callKey]int, len(cr.cases))
		cachedIn := make([]int, len(cr.cases))
		used := map[callKey]bool{}
		for i, c := range cr.cases {
			var err error
			per[i], cachedIn[i], err = tap.callsOf(c.receipt)
			if err != nil {
				return nil, err
			}
			for k, n := range per[i] {
				if n > 0 && cr.executor[k.executor] {
					used[k] = true
				}
			}
		}
		// Queues in a stable order: executor, then cell.
		var keys []callKey
		for _, ex := range slices.Sorted(maps.Keys(cr.executor)) {
			cells := map[string]bool{}
			for k := range used {
				if k.executor == ex {
					cells[k.cell] = true
				}
			}
			for _, cell := range slices.Sorted(maps.Keys(cells)) {
				keys = append(keys, callKey{ex, cell})
			}
		}
		for _, k := range keys {
			for i, c := range cr.cases {
				want := r.c.Declared[c.id][k.executor][k.cell]
				got := per[i][k]
				if want == got {
					continue
				}
				msg := fmt.Sprintf("scripted responses: %s, case %q declares %d response(s) for cell %q on executor %q but made %d such call(s).",
					cr.label, c.id, want, k.cell, k.executor, got)
				if got < want {
					msg += " An unused response stays in the cell's queue and is handed to the next case that calls the cell; declare only the calls this case really makes."
				} else {
					msg += " The extra calls took responses declared for later cases; declare one response per call (use !queue for several)."
				}
				if cachedIn[i] > 0 {
					msg += fmt.Sprintf(" (%d call(s) of this case were served from the effect memo, which does not consume scripted queues.)", cachedIn[i])
				}
				problems = append(problems, msg)
			}
		}
	}
	return problems, nil
}
