package harness

import (
	"context"
	"sync"

	"github.com/algal-assay/assay/engine/bench"
	"github.com/algal-assay/assay/engine/evidence"
	"github.com/algal-assay/assay/engine/foundry"
	"github.com/algal-assay/assay/engine/manifest"
	"github.com/algal-assay/assay/harness/parts"
)

// usageTap is the store a verification reads receipts through; it keeps,
// per receipt, only what the tables need beside the report's numbers:
// whether the receipt's tokens or cost are unknown (a live server omitted
// usage, a model has no price). Reports do not carry that (upstream's
// usage records are closed), so it is re-derived from the receipts
// whenever a report is, by the run's verify phase and by Rederive alike,
// without reading any receipt a second time.
//
// bench.Verify measures every receipt it checks and hands the figures over
// (bench.MeasureSink), so under a bench verification the tap measures
// nothing itself; a foundry verification does not, so there the tap
// measures each receipt as it passes.
type usageTap struct {
	evidence.Store
	prices map[string]bench.Price
	// reported: the verification reports its measures (bench.Verify).
	reported bool

	mu   sync.Mutex
	seen map[string]*measured // nil value: nothing unknown in that receipt
}

// measured is a receipt's usage as a part's verification keeps it.
type measured = parts.Usage

func newUsageTap(st evidence.Store, prices map[string]bench.Price) *usageTap {
	return &usageTap{Store: st, prices: prices, seen: map[string]*measured{}}
}

// Receipt implements evidence.Store.
func (t *usageTap) Receipt(digest string) (map[string]any, error) {
	rec, err := t.Store.Receipt(digest)
	if err != nil || t.reported {
		return rec, err
	}
	_, usage, attribution := bench.Measure(rec, t.prices)
	t.Measured(digest, usage, attribution)
	return rec, nil
}

// Measured implements bench.MeasureSink.
func (t *usageTap) Measured(digest string, usage bench.Tally, attribution map[string]bench.Tally) {
	var m *measured
	if usage.UnknownTokens != 0 || usage.UnknownCost != 0 {
		m = &measured{Tally: usage, Attribution: attribution}
	}
	t.mu.Lock()
	t.seen[digest] = m
	t.mu.Unlock()
}

// ReplayStored implements evidence.StoredReplayer for the store beneath.
func (t *usageTap) ReplayStored(ctx context.Context, digest string, rec map[string]any, m *manifest.Manifest) ([]string, error) {
	return evidence.ReplayStored(ctx, t.Store, digest, rec, m)
}

// measured returns a receipt's unknown counts, reading it only when the
// verification did not.
func (t *usageTap) measured(digest string) (bench.Tally, map[string]bench.Tally, error) {
	t.mu.Lock()
	m, ok := t.seen[digest]
	t.mu.Unlock()
	if !ok {
		rec, err := t.Store.Receipt(digest)
		if err != nil {
			return bench.Tally{}, nil, err
		}
		_, usage, attribution := bench.Measure(rec, t.prices)
		t.Measured(digest, usage, attribution)
		t.mu.Lock()
		m = t.seen[digest]
		t.mu.Unlock()
	}
	if m == nil {
		return bench.Tally{}, nil, nil
	}
	return m.Tally, m.Attribution, nil
}

// unknown is the measured usage of every receipt seen whose tokens or
// cost are unknown, by digest.
func (t *usageTap) unknown() map[string]*measured {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out map[string]*measured
	for d, m := range t.seen {
		if m != nil {
			if out == nil {
				out = map[string]*measured{}
			}
			out[d] = m
		}
	}
	return out
}

// fill restores the unknown counts of a bench report, and returns, per
// foundry candidate key, the calls of its train and validation cases
// whose tokens are unknown (nil when none): the runs its usage sums.
func (t *usageTap) fill(b *bench.Report, f *foundry.Result) (map[string]int, error) {
	if b != nil {
		return nil, bench.Remeasure(b, t.measured)
	}
	if f == nil || f.Report == nil {
		return nil, nil
	}
	var counts map[string]int
	for _, cand := range f.Report.Candidates {
		for _, c := range cand.Cases {
			u, _, err := t.measured(c.ReceiptDigest)
			if err != nil {
				return nil, err
			}
			if u.UnknownTokens > 0 {
				if counts == nil {
					counts = map[string]int{}
				}
				counts[cand.ManifestKey] += int(u.UnknownTokens)
			}
		}
	}
	return counts, nil
}
