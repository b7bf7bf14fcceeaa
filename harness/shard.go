package harness

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/foundry"
	"github.com/algal-assay/assay/harness/workload"
	"github.com/algal-assay/assay/internal/atomicfile"
)

// Shards split one batch of workloads across machines. Every loaded
// workload contributes its parts, in file order, to one sequence (a
// workload in one part contributes one); part g of the sequence (0-based)
// belongs to shard g mod n + 1. The split depends only on the workload
// files, so every machine computes the same one. A shard runs a workload
// all of whose parts it holds as any run (a complete run directory); of a
// workload whose parts it shares with other shards it writes only its
// parts, with their configs and tables, into <out>/<name>/<slug>/ (no
// record, no verdict: not a run directory). It writes ShardFile at the
// runs root listing the whole batch, so `assay ci merge` can check that
// every part of every workload came back exactly once.

// ShardFile is the shard manifest at a shard's runs root.
const (
	ShardFile     = "shard.json"
	ShardContract = "assay.shard.v1"
)

// Shard is shard I of N (1-based).
type Shard struct{ I, N int }

func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.I, s.N) }

// ParseShard reads "i/n".
func ParseShard(text string) (Shard, error) {
	a, b, ok := strings.Cut(text, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 1 || i > n {
		return Shard{}, fmt.Errorf("--shard wants i/n with 1 <= i <= n (e.g. 2/4), got %q", text)
	}
	return Shard{I: i, N: n}, nil
}

// ShardWorkload is one workload of a sharded batch as a shard manifest
// lists it.
type ShardWorkload struct {
	Name, Path, Slug string
	Kind             workload.Kind
	// Parts is how many parts the workload has; Held lists this shard's
	// (1-based part numbers).
	Parts int
	Held  []int
}

// ShardManifest is shard.json.
type ShardManifest struct {
	Shard     Shard
	Workloads []ShardWorkload
}

// Value is shard.json's canonical value.
func (m *ShardManifest) Value() map[string]any {
	ws := make([]any, len(m.Workloads))
	for i, w := range m.Workloads {
		held := make([]any, len(w.Held))
		for j, h := range w.Held {
			held[j] = float64(h)
		}
		ws[i] = map[string]any{"name": w.Name, "path": filepath.ToSlash(w.Path), "slug": w.Slug, "kind": string(w.Kind), "parts": float64(w.Parts), "held": held}
	}
	return map[string]any{"contract": ShardContract, "shard": m.Shard.String(), "workloads": ws}
}

// ReadShardManifest reads a shard's runs root's shard.json.
func ReadShardManifest(root string) (*ShardManifest, error) {
	path := filepath.Join(root, ShardFile)
	v, err := canon.ReadFile(path, 0)
	if err != nil {
		return nil, err
	}
	bad := func(what string) error { return fmt.Errorf("%s: %s", path, what) }
	m, _ := v.(map[string]any)
	if m["contract"] != ShardContract {
		return nil, bad("contract is not " + ShardContract)
	}
	text, _ := m["shard"].(string)
	s, err := ParseShard(text)
	if err != nil {
		return nil, bad(err.Error())
	}
	out := &ShardManifest{Shard: s}
	list, _ := m["workloads"].([]any)
	for i, x := range list {
		e, _ := x.(map[string]any)
		w := ShardWorkload{}
		w.Name, _ = e["name"].(string)
		w.Path, _ = e["path"].(string)
		w.Slug, _ = e["slug"].(string)
		k, _ := e["kind"].(string)
		w.Kind = workload.Kind(k)
		n, _ := e["parts"].(float64)
		w.Parts = int(n)
		held, _ := e["held"].([]any)
		for _, h := range held {
			f, _ := h.(float64)
			w.Held = append(w.Held, int(f))
		}
		if w.Name == "" || w.Slug == "" || w.Parts < 1 || (w.Kind != workload.KindBench && w.Kind != workload.KindFoundry) {
			return nil, bad(fmt.Sprintf("workloads[%d] is not a workload entry", i))
		}
		out.Workloads = append(out.Workloads, w)
	}
	return out, nil
}

// assignShard lists, per workload, the parts (1-based) shard s holds.
func assignShard(ws []*workload.Workload, s Shard) [][]int {
	out := make([][]int, len(ws))
	g := 0
	for i, w := range ws {
		if w == nil {
			continue
		}
		n := len(w.Parts())
		if n == 0 {
			n = 1 // a foundry
		}
		for p := 1; p <= n; p++ {
			if g%s.N == s.I-1 {
				out[i] = append(out[i], p)
			}
			g++
		}
	}
	return out
}

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
	parts := make([]workload.Part, 0, len(held))
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
		parts = append(parts, part)
	}
	// The held parts overlap as a run's do (evaluateParts).
	f := r.newPartFlight(p, opts.Runner)
	f.begin = func() (int, error) { return 0, nil }
	f.put = func(job *partJob, _ int) error {
		b, err := canon.Encode(job.report)
		if err != nil {
			return err
		}
		// Atomic: a part report is whole or absent, never torn.
		return atomicfile.Write(filepath.Join(c.RunDir, job.part.ReportFile()), append(b, '\n'))
	}
	if err := f.run(ctx, parts); err != nil {
		return nil, err
	}
	// Each held part is verified here, on this shard's cores, and carries
	// its verification record to the merge (partrecord.go).
	for _, part := range parts {
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
	held := assignShard(ws, s)
	man := &ShardManifest{Shard: s}
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
		parts := max(len(w.Parts()), 1)
		entry := ShardWorkload{Name: w.Name, Path: path, Kind: w.Kind, Parts: parts, Held: held[i]}
		switch {
		case len(held[i]) == 0:
			c, err := workload.Compile(w, opts.Out, foundry.AdmitOptions{StrictSplits: opts.StrictSplits})
			if err != nil {
				out = append(out, runLoaded(ctx, &Result{Path: path, Err: err}, opts))
				continue
			}
			entry.Slug = c.Slug
			entry.Held = []int{}
		case len(held[i]) == parts:
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
	return out, atomicfile.Write(filepath.Join(root, ShardFile), append(b, '\n'))
}

// Reports supply part reports a run takes instead of running their parts
// (`assay ci merge`): for a file of a part (its report, its verification
// record), the file's bytes, or false when the source does not hold it.
type Reports func(file string) ([]byte, bool, error)

// takenPart is the report of part p from Options.Reports (nil when there
// is no source): its value and, when the part's verification record is
// the record of exactly these bytes checked in a run of this run's slug,
// the bytes, which the run writes as they are and its verify
// phase takes as verified (r.recorded).
func (r *run) takenPart(p workload.Part) (map[string]any, []byte, error) {
	if r.opts.Reports == nil {
		return nil, nil, nil
	}
	b, ok, err := r.opts.Reports(p.ReportFile())
	if err != nil || !ok {
		return nil, nil, err
	}
	v, err := canon.Parse(b, 0)
	if err != nil {
		return nil, nil, canon.InFile(p.ReportFile(), b, err)
	}
	m, isObj := v.(map[string]any)
	if !isObj {
		return nil, nil, fmt.Errorf("%s: not a JSON object", p.ReportFile())
	}
	rb, ok, err := r.opts.Reports(PartRecordFile(p))
	if err != nil || !ok {
		return m, nil, err
	}
	vp := readPartRecord(p, rb, b, r.c.Slug)
	if vp == nil {
		return m, nil, nil
	}
	if r.recorded == nil {
		r.recorded = map[int]*verifiedPart{}
	}
	r.recorded[p.N] = vp
	return m, b, nil
}
