package harness

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/foundry"
	"github.com/algal-assay/assay/harness/parts"
	"github.com/algal-assay/assay/harness/workload"
	"github.com/algal-assay/assay/internal/atomicfile"
)

// runShardParts runs the parts of w that a shard holds (a strict subset
// of a workload in parts) into <out>/<name>/<slug>/: each part's config,
// tables and report, written part by part.
func runShardParts(ctx context.Context, w *workload.Workload, opts Options, held []int) (*workload.Compiled, error) {
	out := opts.Out
	if out == "" {
		out = "runs"
	}
	c, err := workload.Compile(w, out, foundry.AdmitOptions{StrictSplits: opts.StrictSplits})
	if err != nil {
		return nil, err
	}
	if err := os.RemoveAll(c.RunDir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(c.RunDir, 0o755); err != nil {
		return nil, err
	}
	p := &progress{name: w.Name, f: opts.OnProgress}
	for _, n := range held {
		part := c.Parts[n-1]
		p.total += (part.SystemTo - part.SystemFrom) * (part.CaseTo - part.CaseFrom)
	}
	r := &run{w: w, c: c, opts: opts, dir: c.RunDir}
	heldParts := make([]workload.Part, 0, len(held))
	for _, n := range held {
		part := c.Parts[n-1]
		files, err := c.PartFiles(part)
		if err != nil {
			return nil, err
		}
		for _, name := range slices.Sorted(maps.Keys(files)) {
			if err := os.WriteFile(filepath.Join(c.RunDir, name), files[name], 0o644); err != nil {
				return nil, err
			}
		}
		heldParts = append(heldParts, part)
	}
	// The held parts overlap as a run's do (evaluateParts).
	f := r.newPartFlight(p, opts.Runner)
	f.Begin = func() (int, error) { return 0, nil }
	f.Put = func(job *parts.Job, _ int) error {
		b, err := canon.Encode(job.Report)
		if err != nil {
			return err
		}
		// Atomic: a part report is whole or absent, never torn.
		return atomicfile.Write(filepath.Join(c.RunDir, job.Part.ReportFile()), append(b, '\n'))
	}
	if err := f.Run(ctx, heldParts); err != nil {
		return nil, err
	}
	// Each held part is verified here, on this shard's cores, and carries
	// its verification record to the merge (package parts, record.go).
	for _, part := range heldParts {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if _, err := recordPart(ctx, c, c.RunDir, part, opts.Store); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// runShard is RunAll's loop under a shard: each workload all of whose
// parts the shard holds runs as usual, one it shares writes its parts,
// one it holds nothing of is passed over; then shard.json.
func runShard(ctx context.Context, files []string, ws []*workload.Workload, errs []error, opts BatchOptions) ([]*Result, error) {
	s := *opts.Shard
	held := parts.Assign(ws, s)
	man := &parts.ShardManifest{Shard: s}
	var out []*Result
	for i, path := range files {
		if ctx.Err() != nil {
			return out, fmt.Errorf("%w before %s; %d workload(s) not run", ErrCancelled, path, len(files)-i)
		}
		w := ws[i]
		ws[i] = nil
		if w == nil {
			out = append(out, runLoaded(ctx, &Result{Path: path, Err: errs[i]}, opts))
			continue
		}
		n := max(len(w.Parts()), 1)
		entry := parts.ShardWorkload{Name: w.Name, Path: path, Kind: w.Kind, Parts: n, Held: held[i]}
		switch {
		case len(held[i]) == 0:
			c, err := workload.Compile(w, opts.Out, foundry.AdmitOptions{StrictSplits: opts.StrictSplits})
			if err != nil {
				out = append(out, runLoaded(ctx, &Result{Path: path, Err: err}, opts))
				continue
			}
			entry.Slug = c.Slug
			entry.Held = []int{}
		case len(held[i]) == n:
			r := runLoaded(ctx, &Result{Path: path, Workload: w}, opts)
			r.Compact()
			out = append(out, r)
			if r.Outcome == nil || r.Outcome.Compiled == nil {
				continue
			}
			entry.Slug = r.Outcome.Compiled.Slug
			if errors.Is(r.Err, ErrCancelled) {
				return out, r.Err
			}
		default:
			if opts.OnStart != nil {
				opts.OnStart(w)
			}
			r := &Result{Path: path, Workload: w, ShardParts: held[i]}
			c, err := runShardParts(ctx, w, opts.Options, held[i])
			r.Err = err
			if c != nil {
				entry.Slug, r.ShardDir = c.Slug, c.RunDir
			}
			if opts.OnDone != nil {
				opts.OnDone(r)
			}
			r.Compact()
			out = append(out, r)
			if err != nil {
				continue
			}
		}
		man.Workloads = append(man.Workloads, entry)
	}
	root := opts.Out
	if root == "" {
		root = "runs"
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return out, err
	}
	b, err := canon.Encode(man.Value())
	if err != nil {
		return out, err
	}
	return out, atomicfile.Write(filepath.Join(root, parts.ShardFile), append(b, '\n'))
}

// takenPart is the report of part p from Options.Reports (nil when there
// is no source). When the part's verification record is the record of
// exactly these bytes checked in a run of this run's slug, it is the
// bytes alone, unparsed: the run writes them as they are and its verify
// phase, which parses every part report once to fold it, takes them as
// verified (r.recorded). Any other report is parsed here and checked in
// full like a run one.
func (r *run) takenPart(p workload.Part) (map[string]any, []byte, error) {
	if r.opts.Reports == nil {
		return nil, nil, nil
	}
	b, ok, err := r.opts.Reports(p.ReportFile())
	if err != nil || !ok {
		return nil, nil, err
	}
	rb, ok, err := r.opts.Reports(parts.RecordFile(p))
	if err != nil {
		return nil, nil, err
	}
	if ok {
		if vp := parts.ReadRecord(p, rb, b, r.c.Slug); vp != nil {
			if r.recorded == nil {
				r.recorded = map[int]*parts.Verified{}
			}
			r.recorded[p.N] = vp
			return nil, b, nil
		}
	}
	v, err := canon.Parse(b, 0)
	if err != nil {
		return nil, nil, canon.InFile(p.ReportFile(), b, err)
	}
	m, isObj := v.(map[string]any)
	if !isObj {
		return nil, nil, fmt.Errorf("%s: not a JSON object", p.ReportFile())
	}
	return m, nil, nil
}
