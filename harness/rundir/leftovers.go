package rundir

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gofrs/flock"
)

// entry is one name beside run directories, classified.
type entry struct {
	name, slug, kind string
	dir              bool
}

const (
	kindStaging  = "staging"
	kindOwner    = "owner-lock"
	kindReplaced = "replaced"
	kindOld      = "old"
)

// classify recognises the names this package creates beside a run
// directory; ok is false for anything else (run directories, run locks).
func classify(e fs.DirEntry) (entry, bool) {
	name := e.Name()
	if !strings.HasPrefix(name, ".") {
		return entry{}, false
	}
	for _, k := range []struct{ infix, kind string }{{StagingInfix, kindStaging}, {ReplacedInfix, kindReplaced}, {legacyOldInfix, kindOld}} {
		i := strings.LastIndex(name, k.infix)
		if i <= 1 {
			continue
		}
		kind := k.kind
		if kind == kindStaging && strings.HasSuffix(name, LockSuffix) {
			if e.IsDir() {
				return entry{}, false
			}
			kind = kindOwner
		} else if !e.IsDir() {
			return entry{}, false
		}
		return entry{name: name, slug: name[1:i], kind: kind, dir: e.IsDir()}, true
	}
	return entry{}, false
}

func listEntries(parent string) ([]entry, error) {
	des, err := os.ReadDir(parent)
	if err != nil {
		return nil, err
	}
	var out []entry
	for _, de := range des {
		if e, ok := classify(de); ok {
			out = append(out, e)
		}
	}
	return out, nil
}

// ownerGone reports whether no live process holds the owner lock of a
// staging directory (given the directory's path or its lock file's). The
// probe never creates a lock file.
func ownerGone(stagingDir string) bool {
	l := flock.New(strings.TrimSuffix(stagingDir, LockSuffix)+LockSuffix, flock.SetFlag(os.O_RDONLY))
	ok, err := l.TryLock()
	if err != nil {
		return errors.Is(err, fs.ErrNotExist)
	}
	if ok {
		_ = l.Unlock()
	}
	return ok
}

// recoverSlug repairs final's parent after a killed writer. The caller
// holds final's run lock, so every replaced or legacy-old directory of this
// slug belongs to a writer that died: the old run goes back to final when
// final is missing (a kill between the fallback's two renames) and is
// removed otherwise. Staging directories whose owner is gone are removed.
func recoverSlug(final string) error {
	parent, slug := filepath.Dir(final), filepath.Base(final)
	entries, err := listEntries(parent)
	if err != nil {
		return ioErr(parent, err)
	}
	_, err = os.Lstat(final)
	missing := errors.Is(err, fs.ErrNotExist)
	for _, e := range entries {
		if e.slug != slug {
			continue
		}
		p := filepath.Join(parent, e.name)
		switch e.kind {
		case kindReplaced, kindOld:
			from := p
			if e.kind == kindOld {
				from = filepath.Join(p, "run")
			}
			if missing {
				if err := os.Rename(from, final); err == nil {
					missing = false
					syncDir(parent)
				} else if !errors.Is(err, fs.ErrNotExist) {
					return ioErr(final, err)
				}
			}
			if err := os.RemoveAll(p); err != nil {
				return ioErr(p, err)
			}
		case kindStaging:
			if ownerGone(p) {
				if err := os.RemoveAll(p); err != nil {
					return ioErr(p, err)
				}
				_ = os.Remove(p + LockSuffix)
			}
		case kindOwner:
			if _, err := os.Lstat(strings.TrimSuffix(p, LockSuffix)); errors.Is(err, fs.ErrNotExist) && ownerGone(p) {
				_ = os.Remove(p)
			}
		}
	}
	return nil
}

// cleanOthers recovers the other slugs in parent whose run lock is free
// right now; a slug being written is left for a later run.
func cleanOthers(parent, except string) {
	entries, err := listEntries(parent)
	if err != nil {
		return
	}
	var slugs []string
	for _, e := range entries {
		if e.slug != except && !slices.Contains(slugs, e.slug) {
			slugs = append(slugs, e.slug)
		}
	}
	for _, slug := range slugs {
		final := filepath.Join(parent, slug)
		if l, ok, err := tryRun(final); err == nil && ok {
			_ = recoverSlug(final)
			l.unlock()
		}
	}
}

// Leftovers lists what killed or failed runs left under root (a runs root,
// or one workload's directory in it): staging directories whose owner is
// gone (a run killed while it ran, or one kept in staging because it could
// not be installed), their orphaned owner locks, and old runs moved aside
// by a swap that was killed. It reads and changes nothing; the next run in
// the same directory removes or restores them.
func Leftovers(root string) ([]string, error) {
	var out []string
	scan := func(parent string) error {
		entries, err := listEntries(parent)
		if err != nil {
			return err
		}
		for _, e := range entries {
			p := filepath.Join(parent, e.name)
			switch e.kind {
			case kindStaging:
				if !ownerGone(p) {
					continue
				}
			case kindOwner:
				if _, err := os.Lstat(strings.TrimSuffix(p, LockSuffix)); err == nil || !ownerGone(p) {
					continue
				}
			case kindReplaced, kindOld:
				// Only a writer holding the run lock has one of these.
				l := flock.New(runLockPath(filepath.Join(parent, e.slug)), flock.SetFlag(os.O_RDONLY))
				if ok, err := l.TryLock(); err == nil && !ok {
					continue
				} else if ok {
					_ = l.Unlock()
				}
			}
			out = append(out, p)
		}
		return nil
	}
	if err := scan(root); err != nil {
		return nil, ioErr(root, err)
	}
	des, err := os.ReadDir(root)
	if err != nil {
		return nil, ioErr(root, err)
	}
	for _, de := range des {
		if de.IsDir() && !strings.HasPrefix(de.Name(), ".") {
			if err := scan(filepath.Join(root, de.Name())); err != nil && !errors.Is(err, fs.ErrPermission) {
				return nil, ioErr(filepath.Join(root, de.Name()), err)
			}
		}
	}
	slices.Sort(out)
	return out, nil
}
