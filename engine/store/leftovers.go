package store

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/algal-assay/assay/engine/fault"
	"github.com/gofrs/flock"
)

// TempPrefix starts the name of every temporary file a FileStore write
// creates beside the object it publishes (slots, repairs, and objects
// where O_TMPFILE is refused: a nameless file has no name to leave). A
// write removes its own; one killed mid-write leaves it behind.
const TempPrefix = ".tmp-"

// WritersLock is the file at the store root every write holds a shared
// OS lock (flock) on while its temporary file exists; a Batch takes it at
// its first write and keeps it until Commit, so a bench part pays for one
// lock, not one per object. The lock dies with its process, so whoever can
// take it exclusively knows no write is in flight anywhere, and every
// temporary file is a killed writer's.
const WritersLock = ".writers.lock"

// RepairLock is the file at the store root a writer holds an exclusive
// lock on while it replaces a torn memo record, so two repairs of one
// record take turns and agree on the record that is retained.
const RepairLock = ".repair.lock"

// writing holds the writers' lock for one publish (a batch's hold covers
// it); the first write of a FileStore first removes killed writers'
// temporary files.
func (f *FileStore) writing(op string) (release func(), err error) {
	if err := noLink(f.root); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(f.root, 0o755); err != nil {
		return nil, errf(fault.IOFailed, op, f.root, "%v", unwrap(err))
	}
	return f.enter(op)
}

// enter is writing in a store whose root is known to be there (a
// namespace directory in it is open): the hold of the writers' lock,
// after the first write's cleanup.
func (f *FileStore) enter(op string) (release func(), err error) {
	f.clean.Do(f.removeTemps)
	if f.hold != nil {
		return f.hold.enter(op, f.lockFile())
	}
	l := writersLock(f.lockFile())
	if err := l.RLock(); err != nil {
		return nil, errf(fault.IOFailed, op, l.Path(), "%v", unwrap(err))
	}
	return func() { _ = l.Unlock() }, nil
}

// lockFile is the writers' lock of the store: WritersLock at its root,
// or the file its options name.
func (f *FileStore) lockFile() string {
	if f.lock != "" {
		return f.lock
	}
	return filepath.Join(f.root, WritersLock)
}

func writersLock(path string) *flock.Flock {
	// A lock outside the root may be in a directory not made yet; a
	// failure here surfaces as the lock's own, with its path.
	_ = os.MkdirAll(filepath.Dir(path), 0o755)
	return flock.New(path, flock.SetFlag(os.O_CREATE|os.O_RDONLY), flock.SetPermissions(0o644))
}

// batchHold is a batch's shared hold of the writers' lock: taken by the
// first publish, kept across the ones after it, and dropped at Commit once
// no publish is in flight (one still writing keeps it to the next Commit,
// since its temporary file must not look like a killed writer's). A batch
// dropped without a Commit releases it when its process exits, or when
// the collector finalizes the lock's file.
type batchHold struct {
	mu       sync.Mutex
	lock     *flock.Flock
	inFlight int
}

func (h *batchHold) enter(op, lockFile string) (release func(), err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.lock == nil {
		l := writersLock(lockFile)
		if err := l.RLock(); err != nil {
			return nil, errf(fault.IOFailed, op, l.Path(), "%v", unwrap(err))
		}
		h.lock = l
	}
	h.inFlight++
	return h.leave, nil
}

func (h *batchHold) leave() {
	h.mu.Lock()
	h.inFlight--
	h.mu.Unlock()
}

// drop releases the hold when no publish is in flight.
func (h *batchHold) drop() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.lock != nil && h.inFlight == 0 {
		_ = h.lock.Unlock()
		h.lock = nil
	}
}

// held reports whether the batch holds the writers' lock.
func (h *batchHold) held() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.lock != nil
}

// removeTemps removes every temporary file when no write is in flight
// (best effort: a store in use by another process is cleaned later).
func (f *FileStore) removeTemps() {
	l := writersLock(f.lockFile())
	if ok, err := l.TryLock(); err != nil || !ok {
		return
	}
	defer func() { _ = l.Unlock() }()
	temps, _ := f.temps()
	for _, p := range temps {
		os.Remove(p)
	}
}

// temps lists the temporary files in the store's namespace directories.
func (f *FileStore) temps() ([]string, error) {
	des, err := os.ReadDir(f.root)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, errf(fault.IOFailed, "leftovers", f.root, "%v", unwrap(err))
	}
	var out []string
	for _, de := range des {
		if !de.IsDir() {
			continue
		}
		dir := filepath.Join(f.root, de.Name())
		entries, err := os.ReadDir(dir)
		if err != nil {
			return nil, errf(fault.IOFailed, "leftovers", dir, "%v", unwrap(err))
		}
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), TempPrefix) && e.Type().IsRegular() {
				out = append(out, filepath.Join(dir, e.Name()))
			}
		}
	}
	slices.Sort(out)
	return out, nil
}

// Leftovers lists the temporary files killed writers left in the store.
// It writes nothing (not even the lock file). While a write is in flight
// in any process, no temporary file can be told from one being written,
// so it reports none and busy is true.
func (f *FileStore) Leftovers() (paths []string, busy bool, err error) {
	l := flock.New(f.lockFile(), flock.SetFlag(os.O_RDONLY))
	ok, lerr := l.TryLock()
	switch {
	case lerr == nil && !ok:
		return nil, true, nil
	case lerr == nil:
		defer func() { _ = l.Unlock() }()
	case !errors.Is(lerr, fs.ErrNotExist):
		return nil, false, errf(fault.IOFailed, "leftovers", l.Path(), "%v", unwrap(lerr))
	}
	paths, err = f.temps()
	return paths, false, err
}
