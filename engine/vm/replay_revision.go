package vm

import (
	"context"
	"fmt"
	"strings"

	"github.com/algal-assay/assay/engine/bundle"
	"github.com/algal-assay/assay/engine/manifest"
	"github.com/algal-assay/assay/engine/store"
)

// ReplayRevision is `assay replay`: a revised manifest (the value as read)
// compared against the recorded run rec. With transports, the revision's
// missing closures are fetched into opts.Store first. With persist, the
// revised receipt and the revised manifest are stored there, so the
// receipt verifies from that store alone.
func ReplayRevision(ctx context.Context, rec map[string]any, revision any, opts ReplayOptions, transports bundle.Transports, persist store.Store) (*Comparison, error) {
	if transports != nil {
		m, err := manifest.ParseValue(revision)
		if err != nil {
			return nil, err
		}
		if _, err := bundle.Prefetch(ctx, opts.Store, m, transports); err != nil {
			return nil, err
		}
	}
	cmp, err := CompareValue(rec, revision, opts)
	if err != nil {
		return nil, err
	}
	if persist == nil || cmp.Revised == nil {
		return cmp, nil
	}
	m, err := manifest.ParseValue(revision)
	if err != nil {
		return nil, err
	}
	if _, err := persist.Put(store.Manifests, m.Value); err != nil {
		return nil, err
	}
	if _, err := persist.Put(store.Runs, cmp.Revised); err != nil {
		return nil, err
	}
	return cmp, nil
}

// Readable is the comparison's form for people: the verdict, the
// outcomes, the identical prefix, the first divergence and why it could
// not replay.
func (c *Comparison) Readable() string {
	var b strings.Builder
	fmt.Fprintf(&b, "verdict: %s\n", c.Verdict)
	if c.OriginalOutcome != "" || c.RevisedOutcome != "" {
		fmt.Fprintf(&b, "outcome: recorded %s, revised %s\n", c.OriginalOutcome, c.RevisedOutcome)
	}
	fmt.Fprintf(&b, "replayed prefix: %d cells identical\n", len(c.Prefix))
	if d := c.Divergence; d != nil {
		where := d.Path
		if where == "" {
			where = "(the receipt)"
		}
		fmt.Fprintf(&b, "first divergence: %s at %s\n", d.Kind, where)
	}
	if r := c.Reason; r != nil {
		fmt.Fprintf(&b, "could not replay: %s", r.Code)
		if r.Path != "" {
			fmt.Fprintf(&b, " at %s", r.Path)
		}
		b.WriteString("\n")
	}
	return b.String()
}
