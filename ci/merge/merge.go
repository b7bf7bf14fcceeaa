// Package merge assembles the runs of a sharded batch (`assay run --shard
// i/n` on n machines) into the run directories one machine would have
// written: `assay ci merge`. It checks that the shards are one batch
// (their manifests list the same workloads, with the same run slugs and
// part counts, and every shard 1..n is there) and that every part of every
// workload came back exactly once; it gathers the shards' stores into
// one (hard links where it can, every object hashed on the way in); a
// workload one shard ran whole is checked with ci/verify and copied; a
// workload whose parts several shards ran is run again from its workload
// file with every part's report taken from its shard instead of run, so
// its compile, verify and summarize phases (the aggregate, gate, summary,
// report.html) are the ones a single run would have. A shard verifies the
// parts it runs and leaves a verification record beside each (package
// harness/parts, record.go); a part whose report and config are the bytes its record
// names is taken as verified, so no part is verified twice and the merge
// does not redo the shards' work on one machine. Any other part is
// verified against the merged store like a part run here, and a part that
// does not verify fails the merge naming its shard. `ci verify` of the
// merged runs re-derives every part from the receipts and reads no record.
package merge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/algal-assay/assay/ci/verify"
	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/evidence"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/foundry"
	"github.com/algal-assay/assay/engine/manifest"
	"github.com/algal-assay/assay/engine/store"
	"github.com/algal-assay/assay/engine/vm"
	"github.com/algal-assay/assay/harness"
	"github.com/algal-assay/assay/harness/parts"
	"github.com/algal-assay/assay/harness/workload"
	"golang.org/x/sync/errgroup"
)

// CodeShards is the code of a set of shard directories that is not one
// whole batch.
const CodeShards = "SHARDS_INVALID"

// Layout of a shard directory: the runs root and the store a shard
// machine wrote (`assay run --shard i/n --out DIR/runs --dir DIR/.algal`).
const (
	ShardRuns  = "runs"
	ShardStore = ".algal"
)

// Options configure Merge.
type Options struct {
	// Out is the merged runs root.
	Out string
	// Store is the merged store (shards' objects are copied into it).
	Store *vm.Workbench
	// StoreDir is Store's directory ("" for a memory store): with the
	// shard directories, not a change to the checkout (harness.Options's
	// AssayDirs).
	StoreDir string
	// OnDone is called with each workload's result.
	OnDone func(*harness.Result)
}

type shard struct {
	dir string
	man *parts.ShardManifest
}

func fail(format string, a ...any) error {
	return &fault.Error{Code: CodeShards, Message: fmt.Sprintf(format, a...)}
}

// Merge merges the shard directories dirs; see the package doc. The
// results are one per workload, in batch order, compact as RunAll's
// (harness.Result.Compact); OnDone sees each whole.
func Merge(ctx context.Context, dirs []string, opts Options) ([]*harness.Result, error) {
	shards, err := readShards(dirs)
	if err != nil {
		return nil, err
	}
	holders, err := partHolders(shards)
	if err != nil {
		return nil, err
	}
	if err := copyStores(ctx, shards, opts.Store); err != nil {
		return nil, err
	}
	var out []*harness.Result
	for wi, sw := range shards[0].man.Workloads {
		if ctx.Err() != nil {
			return out, ctx.Err()
		}
		r := mergeWorkload(ctx, sw, holders[wi], opts)
		if opts.OnDone != nil {
			opts.OnDone(r)
		}
		r.Compact() // a merge of many workloads holds what its table prints
		out = append(out, r)
	}
	return out, nil
}

// readShards reads the shard directories' manifests, in shard order, and
// holds them to one batch: the same n, each shard once, none missing.
func readShards(dirs []string) ([]shard, error) {
	if len(dirs) == 0 {
		return nil, fail("no shard directories given")
	}
	shards := make([]shard, 0, len(dirs))
	for _, d := range dirs {
		m, err := parts.ReadShardManifest(filepath.Join(d, ShardRuns))
		if err != nil {
			return nil, fail("%s is not a shard directory (%s/%s): %v", d, ShardRuns, parts.ShardFile, err)
		}
		shards = append(shards, shard{dir: d, man: m})
	}
	sort.SliceStable(shards, func(i, j int) bool { return shards[i].man.Shard.I < shards[j].man.Shard.I })
	return shards, oneBatch(shards)
}

// oneBatch holds shards (in shard order) to one batch: the same n, each
// shard once, none missing.
func oneBatch(shards []shard) error {
	n := shards[0].man.Shard.N
	for i, s := range shards {
		if s.man.Shard.N != n {
			return fail("%s is shard %s but %s is shard %s: shards of one batch share n", s.dir, s.man.Shard, shards[0].dir, shards[0].man.Shard)
		}
		if i > 0 && shards[i-1].man.Shard.I == s.man.Shard.I {
			return fail("%s and %s are both shard %s", shards[i-1].dir, s.dir, s.man.Shard)
		}
	}
	if len(shards) != n {
		return fail("shard(s) %s missing: a merge needs every shard of the batch", strings.Join(missingShards(shards, n), ", "))
	}
	return nil
}

// missingShards names the shards of n that are not among shards (i/n).
func missingShards(shards []shard, n int) []string {
	have := map[int]bool{}
	for _, s := range shards {
		have[s.man.Shard.I] = true
	}
	var missing []string
	for i := 1; i <= n; i++ {
		if !have[i] {
			missing = append(missing, fmt.Sprintf("%d/%d", i, n))
		}
	}
	return missing
}

// partHolders says, for each workload of the batch, which shard holds
// each part. Every manifest lists the same batch; each part comes back
// once.
func partHolders(shards []shard) ([]map[int]string, error) {
	first := shards[0].man.Workloads
	holders := make([]map[int]string, len(first))
	for wi, w := range first {
		holders[wi] = map[int]string{}
		for _, s := range shards {
			if err := holdParts(holders[wi], s, shards[0].dir, first, wi); err != nil {
				return nil, err
			}
		}
		if len(holders[wi]) != w.Parts {
			return nil, fail("%s (%s) is missing part(s) %s: no shard holds them", w.Name, w.Slug, strings.Join(missingParts(holders[wi], w.Parts), ", "))
		}
	}
	return holders, nil
}

// holdParts records the parts of workload wi of the batch (first, as the
// first shard's manifest in firstDir lists it) that shard s holds, once
// each.
func holdParts(holders map[int]string, s shard, firstDir string, first []parts.ShardWorkload, wi int) error {
	w, ws := first[wi], s.man.Workloads
	if len(ws) != len(first) || ws[wi].Name != w.Name || ws[wi].Slug != w.Slug || ws[wi].Parts != w.Parts {
		return fail("%s lists another batch than %s (workload %d: %s %s with %d parts): the shards were not made from the same workloads", s.dir, firstDir, wi+1, w.Name, w.Slug, w.Parts)
	}
	for _, p := range ws[wi].Held {
		if p < 1 || p > w.Parts {
			return fail("%s holds part %d of %s, which has %d", s.dir, p, w.Name, w.Parts)
		}
		if prev, dup := holders[p]; dup {
			return fail("part %d of %s (%s) is in both %s and %s", p, w.Name, w.Slug, prev, s.dir)
		}
		holders[p] = s.dir
	}
	return nil
}

// missingParts names the parts of 1..parts no shard holds.
func missingParts(holders map[int]string, parts int) []string {
	var missing []string
	for p := 1; p <= parts; p++ {
		if _, ok := holders[p]; !ok {
			missing = append(missing, fmt.Sprint(p))
		}
	}
	return missing
}

// copyStores copies every shard's store into the merged one and commits
// it.
func copyStores(ctx context.Context, shards []shard, st *vm.Workbench) error {
	for _, s := range shards {
		if holdsNothing(s.man) {
			continue // more shards than parts: this one ran nothing, and may have no store
		}
		if err := copyStore(ctx, filepath.Join(s.dir, ShardStore), st.Store); err != nil {
			return err
		}
	}
	return st.Commit()
}

// mergeWorkload assembles one workload's run directory.
func mergeWorkload(ctx context.Context, sw parts.ShardWorkload, holders map[int]string, opts Options) *harness.Result {
	res := &harness.Result{Path: sw.Path}
	w, err := workload.Load(sw.Path)
	if err != nil {
		res.Err = err
		return res
	}
	res.Workload = w
	if whole, ok := wholeShard(holders); ok { // one shard ran it whole, as any run
		res.Outcome, res.Err = copyRun(ctx, w, sw, whole, opts)
		return res
	}
	parts := shardParts{sw: sw, holders: holders}
	shardDirs := slices.Sorted(maps.Values(holders))
	r := harness.RunWorkload(ctx, sw.Path, w, harness.BatchOptions{Options: harness.Options{
		Runner: refuse{}, Store: opts.Store, Out: opts.Out, Reports: parts.read,
		AssayDirs: append([]string{opts.StoreDir}, shardDirs...),
	}})
	if r.Outcome != nil {
		parts.check(r)
	}
	return r
}

// check holds a merged run to the shards': the workload compiles to the
// run they ran, and a part that does not verify is its shard's, named.
func (sp shardParts) check(r *harness.Result) {
	if c := r.Outcome.Compiled; c != nil && c.Slug != sp.sw.Slug {
		r.Err = errors.Join(r.Err, fail("%s compiles to run %s here, but the shards ran %s: the workload or an input changed since", sp.sw.Path, c.Slug, sp.sw.Slug))
	}
	if r.Outcome.Verification == nil {
		return
	}
	for _, m := range r.Outcome.Verification.Mismatches {
		if err := sp.blame(m); err != nil {
			r.Err = errors.Join(r.Err, err)
		}
	}
}

// wholeShard is the one shard holding every part of a workload; false
// when its parts are spread over several.
func wholeShard(holders map[int]string) (string, bool) {
	whole := ""
	for _, d := range holders {
		if whole != "" && whole != d {
			return "", false
		}
		whole = d
	}
	return whole, true
}

// shardParts are the parts of one workload, each in the shard holding it.
type shardParts struct {
	sw      parts.ShardWorkload
	holders map[int]string
}

// dir is the directory of the shard holding part n.
func (sp shardParts) dir(n int) (string, bool) {
	d, ok := sp.holders[n]
	return filepath.Join(d, ShardRuns, sp.sw.Name, sp.sw.Slug), ok
}

// read is the merge's harness.Options.Reports: a part's report or
// verification record from the shard holding it (a part a shard did not
// record as verified is verified here instead).
func (sp shardParts) read(file string) ([]byte, bool, error) {
	m := partFile.FindStringSubmatch(file)
	if m == nil {
		return nil, false, nil
	}
	n, _ := strconv.Atoi(m[1])
	d, ok := sp.dir(n)
	if !ok {
		return nil, false, nil
	}
	path := filepath.Join(d, file)
	if m[2] == "verified" {
		if _, err := os.Lstat(path); errors.Is(err, os.ErrNotExist) {
			return nil, false, nil // verified here instead
		}
	}
	b, err := canon.ReadBounded(path, 0)
	if err != nil {
		return nil, false, fmt.Errorf("%s: %v", path, err)
	}
	return b, true, nil
}

// blame names the shard of a part that does not verify (nil when the
// mismatch names no part a shard holds).
func (sp shardParts) blame(mismatch string) error {
	f := partFile.FindStringSubmatch(mismatch)
	if f == nil || !strings.HasPrefix(mismatch, f[0]) {
		return nil
	}
	n, _ := strconv.Atoi(f[1])
	d, ok := sp.dir(n)
	if !ok {
		return nil
	}
	return fail("shard %s: %s", sp.holders[n], filepath.Join(d, mismatch))
}

// partFile matches the files of a part a shard holds: its report and its
// verification record.
var partFile = regexp.MustCompile(`^part-(\d{4})-(report|verified)\.json`)

// copyRun checks a run directory one shard wrote whole and copies it
// into the merged runs root.
func copyRun(ctx context.Context, w *workload.Workload, sw parts.ShardWorkload, shardDir string, opts Options) (*harness.Outcome, error) {
	src := filepath.Join(shardDir, ShardRuns, sw.Name, sw.Slug)
	ws, err := verify.LoadWorkloads(sw.Path)
	if err != nil {
		return nil, err
	}
	chk, err := verify.CheckRun(ctx, src, verify.Options{Evidence: opts.Store, Workloads: ws})
	if err != nil {
		return nil, err
	}
	if !chk.OK {
		return nil, fail("%s does not verify: %s", src, strings.Join(chk.Mismatches, "; "))
	}
	dst := filepath.Join(opts.Out, sw.Name, sw.Slug)
	if err := copyDir(src, dst); err != nil {
		return nil, err
	}
	return copiedOutcome(w, dst, chk, opts.Out), nil
}

// copiedOutcome is the outcome of a run copied to dst, as its check
// re-derived it.
func copiedOutcome(w *workload.Workload, dst string, chk verify.Result, out string) *harness.Outcome {
	o := &harness.Outcome{Workload: w, RunDir: dst, Status: chk.Status}
	if d := chk.Run.Derived; d != nil {
		o.Bench, o.Foundry, o.Verification, o.Gates = d.Bench, d.Foundry, d.Verification, d.Gates
	}
	if c, err := workload.Compile(w, out, foundry.AdmitOptions{}); err == nil {
		o.Compiled = c
	}
	return o
}

// copyDir replaces dst with a copy of the regular files of src, built
// beside it and renamed into place.
func copyDir(src, dst string) error {
	entries, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".merge-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := copyRegularFiles(src, tmp, entries); err != nil {
		return err
	}
	if err := os.RemoveAll(dst); err != nil {
		return err
	}
	return os.Rename(tmp, dst)
}

// copyRegularFiles copies the regular files among entries of src into
// dst; links and directories are left.
func copyRegularFiles(src, dst string, entries []os.DirEntry) error {
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		if err := copyFile(filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// holdsNothing says a shard holds no part of any workload.
func holdsNothing(m *parts.ShardManifest) bool {
	for _, w := range m.Workloads {
		if len(w.Held) > 0 {
			return false
		}
	}
	return true
}

// copyStore puts every manifest, value and receipt of the store in dir
// into dst; each object is read through the store's digest check, so a
// torn or edited object fails the merge instead of entering the store.
// Into a file store on the same file system an object is a hard link to
// the shard's file (read back and hashed under its new name), elsewhere
// a copy of its canonical bytes (never parsed and encoded again); one
// worker per CPU. A linked object shares its file with the shard's
// store: bytes edited there after the merge fail the digest check of
// whatever reads them from the merged store (`ci verify` reads every
// receipt so), as bytes damaged in a copy would.
func copyStore(ctx context.Context, dir string, dst store.Store) error {
	if _, err := os.Stat(dir); err != nil {
		return fail("shard store %s: %v", dir, err)
	}
	src, err := store.OpenFileStore(dir)
	if err != nil {
		return err
	}
	for _, ns := range []store.Namespace{store.Manifests, store.Values, store.Runs} {
		if err := copyNamespace(ctx, dir, src, dst, ns); err != nil {
			return err
		}
	}
	return nil
}

// copyNamespace takes every object of one namespace of the shard store
// in dir into dst, one worker per CPU: hard-linked into a file store
// (store.Linker: no file created and written per receipt, and copied
// where a link cannot be made), copied into any other store.
func copyNamespace(ctx context.Context, dir string, src *store.FileStore, dst store.Store, ns store.Namespace) error {
	digests, err := src.List(ns)
	if err != nil {
		return err
	}
	if l, ok := dst.(store.Linker); ok {
		_, err := l.LinkFrom(ctx, src, ns, digests)
		return err
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(evidence.DefaultConcurrency())
	for _, d := range digests {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error { return copyObject(dir, src, dst, ns, d) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	return ctx.Err()
}

// copyObject copies one object as its canonical bytes, read through the
// store's digest check; it must store under the same digest.
func copyObject(dir string, src *store.FileStore, dst store.Store, ns store.Namespace, d string) error {
	b, ok, err := src.GetEncoded(ns, d)
	if err != nil || !ok {
		return err
	}
	got, err := putEncoded(dst, ns, b)
	if err != nil {
		return err
	}
	if got != d {
		return fail("shard store %s: %s object %s stores as %s", dir, ns, d, got)
	}
	return nil
}

// putEncoded stores an object's canonical bytes, parsing them only for a
// store that takes values alone.
func putEncoded(dst store.Store, ns store.Namespace, b []byte) (string, error) {
	if p, ok := dst.(store.EncodedPutter); ok {
		return p.PutEncoded(ns, b)
	}
	v, err := canon.Parse(b, store.MaxObjectBytes)
	if err != nil {
		return "", err
	}
	return dst.Put(ns, v)
}

// refuse is the runner of a merge: every part comes from a shard, so
// anything asking to run is a part no shard holds.
type refuse struct{}

func (refuse) Open(context.Context, *manifest.Manifest, map[string]string) (evidence.Session, error) {
	return nil, errors.New("merge: a part no shard holds would have to run here")
}
