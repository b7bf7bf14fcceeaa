package store

import (
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/algal-assay/assay/engine/fault"
	"golang.org/x/sync/errgroup"
)

// Committer is a store whose writes become durable at a barrier rather
// than one by one. A caller that publishes something naming stored objects
// (a report naming receipts) commits first, so nothing visible ever names
// an object a crash could still lose.
type Committer interface {
	// Commit makes every write that returned before the call durable.
	Commit() error
}

// Commit commits s when it defers durability (a Batch); every other store
// is already durable when a write returns, so it is a no-op for them.
func Commit(s Store) error {
	if c, ok := s.(Committer); ok {
		return c.Commit()
	}
	return nil
}

// Batch is a FileStore whose writes skip the per-object barriers (two
// fsyncs per object) and become durable together at Commit: one barrier
// for any number of objects. Until then a write is as safe against a
// killed process as any (the bytes are in the kernel's page cache and the
// name points at complete bytes), but an OS crash or power loss may lose
// it or leave its name holding torn bytes; reads detect those by the
// digest check and the next Put replaces them. A Batch is safe for
// concurrent use, and it stays usable after Commit: each Commit covers the
// writes since the previous one. It holds the store's writers' lock from
// its first write to its Commit (leftovers.go), so meanwhile no writer
// anywhere removes temporary files and Leftovers reports the store busy.
type Batch struct {
	*FileStore
}

// Batch returns a batch over the same directory (and the same cleanup of
// killed writers' temporary files).
func (f *FileStore) Batch() *Batch {
	return &Batch{FileStore: &FileStore{root: f.root, dirs: f.dirs, clean: f.clean, pend: &pending{}, hold: &batchHold{}, lock: f.lock, mode: f.mode}}
}

// Commit implements Committer. On failure the writes stay pending, so a
// later Commit retries them. Either way the batch lets go of the writers'
// lock (leftovers.go) unless a write is still in flight.
//
// Commits run one at a time: a Commit takes the pending writes and then
// syncs them, so a second Commit running meanwhile would find the list
// empty, or its own writes taken by the first, and return before they are
// durable; its caller would then publish a report naming them. In turn,
// each write that returned before a Commit began was either synced by an
// earlier Commit that succeeded or put back by one that failed, and so is
// taken by this one.
func (b *Batch) Commit() error {
	defer b.hold.drop()
	b.pend.commit.Lock()
	defer b.pend.commit.Unlock()
	paths := b.pend.take()
	if len(paths) == 0 {
		return nil
	}
	if err := barrier(b.root, paths); err != nil {
		b.pend.putBack(paths)
		return err
	}
	return nil
}

// Pending reports how many object files wait for Commit.
func (b *Batch) Pending() int {
	b.pend.mu.Lock()
	defer b.pend.mu.Unlock()
	return len(b.pend.paths)
}

// barriers counts the syncs (fsync or syncfs) the package issued, for the
// benchmarks that compare batching with a sync per object.
var barriers atomic.Int64

// Barriers is the number of syncs (fsync or syncfs) the package has
// issued in this process, for tests and benchmarks that count durability
// barriers.
func Barriers() int64 { return barriers.Load() }

// barrier is the batch's sync of its pending files: syncPaths, or in tests
// a barrier they can hold open.
var barrier = syncPaths

// pending is the set of files a batch wrote or retained since its last
// Commit.
type pending struct {
	mu    sync.Mutex
	paths []string
	// commit is held by a Commit from taking the paths to syncing them.
	commit sync.Mutex
}

func (p *pending) add(path string) {
	p.mu.Lock()
	p.paths = append(p.paths, path)
	p.mu.Unlock()
}

func (p *pending) take() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.paths
	p.paths = nil
	return out
}

func (p *pending) putBack(paths []string) {
	p.mu.Lock()
	p.paths = append(p.paths, paths...)
	p.mu.Unlock()
}

// syncEach is the portable barrier: fsync every file, then every directory
// holding one, once each. The file syncs run 16 at a time: concurrent
// fsyncs share journal commits, where one after another each waits for
// its own.
func syncEach(paths []string) error {
	slices.Sort(paths)
	paths = slices.Compact(paths)
	var g errgroup.Group
	g.SetLimit(16)
	dirs := map[string]bool{}
	for _, p := range paths {
		g.Go(func() error { return syncFileErr(p) })
		// The namespace directory's own entry, too: a batch may have
		// created it.
		dirs[filepath.Dir(p)] = true
		dirs[filepath.Dir(filepath.Dir(p))] = true
	}
	if err := g.Wait(); err != nil {
		return err
	}
	for _, d := range slices.Sorted(maps.Keys(dirs)) {
		syncDir(d)
	}
	return nil
}

// syncFileErr flushes one pending file. A file that vanished was removed
// by a repair that published (and will commit) its replacement.
func syncFileErr(path string) error {
	fd, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return errf(fault.IOFailed, "commit", path, "%v", unwrap(err))
	}
	defer fd.Close()
	barriers.Add(1)
	if err := fd.Sync(); err != nil {
		return errf(fault.IOFailed, "commit", path, "%v", unwrap(err))
	}
	return nil
}
