package vm

import (
	"context"
	"crypto/sha256"
	"sync"
	"sync/atomic"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/effect"
	"github.com/algal-assay/assay/engine/manifest"
)

// VerifiedReceipts remembers which receipts a workbench has replayed
// without a divergence, so a receipt that a run or a `ci verify` meets again
// (the same case of two systems that run one contender, the same workload
// in two batches) is replayed once.
//
// An entry is keyed by the digest the receipt's bytes were read and checked
// under (the store checks every object it reads against its digest, so a
// file rewritten since holds other bytes and fails that check before the
// memo is asked), the manifest it was replayed against, and the
// workbench's host tool signatures, the one executor configuration an
// offline replay reads. Never a file name and never a digest a document
// claims. Only a replay that found nothing is kept; a divergence is
// replayed again each time it is met. Two verifications of one receipt at
// once replay it once: the second waits for the first.
//
// A memo holds one trust scope: whoever makes a workbench decides whether
// it gets one (`assay run`, `ci verify`, `ci merge` of one machine's
// evidence do; an artifact from a pull request is opened on a workbench of
// its own per side, whose memo spans only that side's verification and
// the diff re-derived from it). It is bounded, so memory stays flat in the number
// of cases: at Limit entries it starts over.
type VerifiedReceipts struct {
	// Limit bounds the entries (0: 1<<14, under 1 MB: duplicates meet
	// within a part, whose receipts number at most 2,048, or across the
	// workloads of a batch).
	Limit int

	mu    sync.Mutex
	seen  map[[sha256.Size]byte]*replayEntry
	tools map[*effect.Tools]string
	hits  atomic.Int64
	// read holds, from a receipt's read (Workbench.Receipt) to its replay
	// (ReplayStored), the canonical bytes it was read as, by the digest
	// they hash to, so the replay is checked against them instead of being
	// encoded again (VerifyOptions.Canonical). Its entries are the bytes a
	// read checked, under the digest it checked them against, so a replay
	// of that digest may use them whichever read left them. A read whose
	// replay never comes (a case rejected before it) leaves its entry
	// behind: at maxRead entries it starts over.
	read map[string][]byte
}

// maxRead bounds VerifiedReceipts.read: reads and their replays follow
// one another on each of a verification's few workers, so this is room
// for many times what is in flight (under 1 MB of receipts).
const maxRead = 256

// keepRead keeps the canonical bytes a receipt was read as until its
// replay.
func (v *VerifiedReceipts) keepRead(digest string, canonical []byte) {
	v.mu.Lock()
	switch {
	case v.read == nil:
		v.read = map[string][]byte{}
	case len(v.read) >= maxRead:
		clear(v.read)
	}
	v.read[digest] = canonical
	v.mu.Unlock()
}

// takeRead returns and forgets the canonical bytes read under digest (nil
// when none are kept).
func (v *VerifiedReceipts) takeRead(digest string) []byte {
	v.mu.Lock()
	defer v.mu.Unlock()
	b := v.read[digest]
	delete(v.read, digest)
	return b
}

// replayEntry is one receipt's replay: done closes when it ends, and ok
// says it found nothing.
type replayEntry struct {
	done chan struct{}
	ok   bool
}

// replayedClean is every finished clean entry (one value, so a full memo
// holds a key and a pointer per receipt).
var replayedClean = func() *replayEntry {
	e := &replayEntry{done: make(chan struct{}), ok: true}
	close(e.done)
	return e
}()

// Hits is how many replays the memo has answered.
func (v *VerifiedReceipts) Hits() int64 { return v.hits.Load() }

func (v *VerifiedReceipts) key(digest, manifestDigest string, tools *effect.Tools) ([sha256.Size]byte, error) {
	v.mu.Lock()
	id, ok := v.tools[tools]
	v.mu.Unlock()
	if !ok {
		sigs := map[string]any{}
		if tools != nil {
			for _, n := range tools.Names() {
				t, _ := tools.Lookup(n)
				sigs[n] = t.Signature
			}
		}
		d, err := canon.Digest(sigs)
		if err != nil {
			return [sha256.Size]byte{}, err
		}
		id = d
		v.mu.Lock()
		if v.tools == nil {
			v.tools = map[*effect.Tools]string{}
		}
		v.tools[tools] = id
		v.mu.Unlock()
	}
	return sha256.Sum256([]byte(digest + "\x00" + manifestDigest + "\x00" + id)), nil
}

// claim returns the finished or running replay of k, or, when there is
// none, a new entry the caller must finish.
func (v *VerifiedReceipts) claim(k [sha256.Size]byte) (e *replayEntry, mine bool) {
	limit := v.Limit
	if limit <= 0 {
		limit = 1 << 14
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if e := v.seen[k]; e != nil {
		return e, false
	}
	if v.seen == nil || len(v.seen) >= limit {
		v.seen = map[[sha256.Size]byte]*replayEntry{}
	}
	e = &replayEntry{done: make(chan struct{})}
	v.seen[k] = e
	return e, true
}

// finish ends the caller's replay of k: a clean one stays, a divergent one
// is forgotten (the next meeting replays again).
func (v *VerifiedReceipts) finish(k [sha256.Size]byte, e *replayEntry, ok bool) {
	e.ok = ok
	v.mu.Lock()
	if v.seen[k] == e {
		if ok {
			v.seen[k] = replayedClean
		} else {
			delete(v.seen, k)
		}
	}
	v.mu.Unlock()
	close(e.done)
}

// ReplayStored implements evidence.StoredReplayer: Replay, answered from
// w.Verified when this workbench has replayed the receipt read under digest
// against m before and found nothing.
func (w *Workbench) ReplayStored(ctx context.Context, digest string, rec map[string]any, m *manifest.Manifest) ([]string, error) {
	if w.Verified == nil {
		return w.Replay(ctx, rec, m)
	}
	canonical := w.Verified.takeRead(digest)
	k, err := w.Verified.key(digest, m.Digest, w.Tools)
	if err != nil {
		return nil, err
	}
	for {
		e, mine := w.Verified.claim(k)
		if mine {
			diffs, err := w.replay(rec, canonical, m)
			w.Verified.finish(k, e, err == nil && len(diffs) == 0)
			return diffs, err
		}
		select {
		case <-e.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if e.ok {
			w.Verified.hits.Add(1)
			return nil, nil
		}
		// The other replay diverged or failed: this one finds out for
		// itself (and names its own divergences).
	}
}
