// Package rundir is the run directory: the names of the files a run
// leaves in it (files.go), and installing it so that concurrent runs,
// kills and full disks never leave a run directory half-replaced or
// missing.
//
// A run of slug S under parent P is built in a staging directory
// P/.S.partial-XXXX beside its final place P/S. Two kinds of lock file,
// both OS locks (flock) that die with their process, say who is alive:
//
//	P/.S.lock                run lock: held while staging is set up,
//	                         leftovers are recovered and a stage is
//	                         installed, so writers of P/S take turns; like
//	                         git's index.lock it exists only while held
//	P/.S.partial-XXXX.lock   owner lock: held by the process building the
//	                         staging directory for as long as it lives
//
// Installing exchanges the staging directory with the final one in one
// step (renameat2 RENAME_EXCHANGE on Linux, renamex_np RENAME_SWAP on
// macOS), so a reader or a kill sees the old run or the new one, never
// neither. Where the exchange is not available, the old run is first
// renamed to P/.S.replaced-XXXX; a kill between the two renames leaves it
// there, and the next writer (Begin) renames it back.
//
// What a killed run leaves (staging directories whose owner lock is free,
// replaced directories, the .S.old-* directories of earlier versions) is
// recovered or removed by the next Begin in the same parent, and listed by
// Leftovers for `assay ci verify`. A writer that can finish what a killed
// run of the same slug started (a bench run in parts reusing its finished
// parts) begins with Claim instead: the dead staging directories of its
// slug are not removed but claimed, their owner locks taken by the new
// stage, so that no other writer removes them while their files are read;
// DropClaimed removes them once what they held has been carried over.
package rundir

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/algal-assay/assay/engine/fault"
	"github.com/gofrs/flock"
)

// Names of the files and directories beside a run directory.
const (
	// LockSuffix ends a run lock (.S.lock) and an owner lock
	// (.S.partial-XXXX.lock).
	LockSuffix = ".lock"
	// StagingInfix marks a staging directory: .S.partial-XXXX.
	StagingInfix = ".partial-"
	// ReplacedInfix marks an old run moved aside by the two-rename
	// fallback: .S.replaced-XXXX.
	ReplacedInfix = ".replaced-"
	// legacyOldInfix marks the .S.old-XXXX/run directories earlier
	// versions moved the old run into.
	legacyOldInfix = ".old-"
)

// CodeLocked is the code of a run lock another writer held for longer than
// LockWait (a host-only code); every other failure is fault.IOFailed.
const CodeLocked = "RUNDIR_LOCKED"

func ioErr(path string, err error) *fault.Error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return &fault.Error{Code: fault.IOFailed, File: path, Message: pe.Op, Err: pe.Err}
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return &fault.Error{Code: fault.IOFailed, File: path, Message: le.Op, Err: le.Err}
	}
	return &fault.Error{Code: fault.IOFailed, File: path, Err: err}
}

// LockWait is how long a writer waits for another writer's run lock. The
// lock is held only while setting up or installing (milliseconds), so a
// wait this long means the holder is stuck.
var LockWait = 30 * time.Second

// Stage is a staging directory being built for a final run directory.
type Stage struct {
	// Dir is the staging directory; Final the run directory it becomes.
	Dir, Final string
	// Claimed are the staging directories killed runs of Final left, held
	// by this stage (Claim), most recently written first.
	Claimed []string
	owner   *flock.Flock
	claims  []*flock.Flock
	done    bool
}

func runLockPath(final string) string {
	return filepath.Join(filepath.Dir(final), "."+filepath.Base(final)+LockSuffix)
}

// runLock is a held run lock. Like git's index.lock the file exists only
// while someone holds it: the holder removes it before letting go, and a
// waiter that locked a file already unlinked (or replaced) tries again.
type runLock struct{ l *flock.Flock }

func (r *runLock) unlock() {
	_ = os.Remove(r.l.Path())
	_ = r.l.Unlock()
}

// tryRun takes final's run lock if it is free right now.
func tryRun(final string) (*runLock, bool, error) {
	path := runLockPath(final)
	for {
		l := flock.New(path, flock.SetFlag(os.O_CREATE|os.O_RDWR), flock.SetPermissions(0o644))
		ok, err := l.TryLock()
		if err != nil || !ok {
			return nil, false, err
		}
		held, herr := l.Stat()
		onDisk, derr := os.Stat(path)
		if herr == nil && derr == nil && os.SameFile(held, onDisk) {
			// Who holds it, for a waiter's message; the flock is the lock.
			_ = os.WriteFile(path, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644)
			return &runLock{l}, true, nil
		}
		_ = l.Unlock()
	}
}

// lockRun takes final's run lock, waiting up to LockWait.
func lockRun(ctx context.Context, final string) (*runLock, error) {
	path := runLockPath(final)
	ctx, cancel := context.WithTimeout(ctx, LockWait)
	defer cancel()
	for {
		r, ok, err := tryRun(final)
		if err != nil {
			return nil, ioErr(path, err)
		}
		if ok {
			return r, nil
		}
		select {
		case <-ctx.Done():
			holder := "another process"
			if b, err := os.ReadFile(path); err == nil {
				if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 0 {
					holder = fmt.Sprintf("process %d", pid)
				}
			}
			return nil, &fault.Error{Code: CodeLocked, File: path,
				Message: fmt.Sprintf("%s holds the lock on run directory %s (another assay run is writing it); waited %s: try again when it has finished", holder, final, LockWait),
			}
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// Begin creates a staging directory for final. Under final's run lock it
// first recovers and removes what killed runs left in final's parent, then
// creates .S.partial-XXXX and takes its owner lock, which the Stage holds
// until Install or Release.
func Begin(ctx context.Context, final string) (*Stage, error) {
	return begin(ctx, final, false)
}

// Claim is Begin for a writer that reuses what a killed run of final left:
// the staging directories of final whose owner is gone are kept and held
// by the new stage (Stage.Claimed) instead of removed. Their files are
// whatever a killed process left (torn, or edited since): the caller
// trusts none of them without checking. Release lets go of them (the next
// Begin removes or claims them); DropClaimed removes them.
func Claim(ctx context.Context, final string) (*Stage, error) {
	return begin(ctx, final, true)
}

func begin(ctx context.Context, final string, claim bool) (*Stage, error) {
	parent := filepath.Dir(final)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, ioErr(parent, err)
	}
	run, err := lockRun(ctx, final)
	if err != nil {
		return nil, err
	}
	defer run.unlock()
	var claimed []string
	var claims []*flock.Flock
	if claim {
		// Under the run lock: no other writer of final claims or removes
		// a dead staging directory meanwhile.
		claimed, claims = claimDead(final)
	}
	releaseClaims := func() {
		for _, l := range claims {
			_ = l.Unlock()
		}
	}
	if err := recoverSlug(final); err != nil {
		releaseClaims()
		return nil, err
	}
	cleanOthers(parent, filepath.Base(final))
	dir, err := os.MkdirTemp(parent, "."+filepath.Base(final)+StagingInfix)
	if err != nil {
		releaseClaims()
		return nil, ioErr(parent, err)
	}
	// MkdirTemp makes the directory private; the run directory it becomes
	// is as readable as its parent.
	if err := os.Chmod(dir, 0o755); err != nil {
		releaseClaims()
		_ = os.RemoveAll(dir)
		return nil, ioErr(dir, err)
	}
	owner := flock.New(dir+LockSuffix, flock.SetPermissions(0o644))
	if ok, err := owner.TryLock(); err != nil || !ok {
		releaseClaims()
		_ = os.RemoveAll(dir)
		if err == nil {
			err = errors.New("owner lock of a new staging directory is held")
		}
		return nil, ioErr(dir+LockSuffix, err)
	}
	return &Stage{Dir: dir, Final: final, Claimed: claimed, owner: owner, claims: claims}, nil
}

// claimDead takes the owner lock of every staging directory of final
// whose owner is gone; the caller holds final's run lock. The directories
// come most recently written first: the last killed run got furthest.
func claimDead(final string) ([]string, []*flock.Flock) {
	parent, slug := filepath.Dir(final), filepath.Base(final)
	entries, err := listEntries(parent)
	if err != nil {
		return nil, nil
	}
	type held struct {
		dir  string
		l    *flock.Flock
		when time.Time
	}
	var hs []held
	for _, e := range entries {
		if e.slug != slug || e.kind != kindStaging {
			continue
		}
		p := filepath.Join(parent, e.name)
		info, err := os.Lstat(p)
		if err != nil || !info.IsDir() {
			continue
		}
		l := flock.New(p+LockSuffix, flock.SetPermissions(0o644))
		if ok, err := l.TryLock(); err != nil || !ok {
			continue // its owner lives
		}
		hs = append(hs, held{p, l, info.ModTime()})
	}
	slices.SortStableFunc(hs, func(a, b held) int {
		if c := b.when.Compare(a.when); c != 0 {
			return c
		}
		return strings.Compare(a.dir, b.dir)
	})
	dirs := make([]string, len(hs))
	locks := make([]*flock.Flock, len(hs))
	for i, h := range hs {
		dirs[i], locks[i] = h.dir, h.l
	}
	return dirs, locks
}

// DropClaimed removes the claimed staging directories (their useful files
// are in the stage now) and their owner locks.
func (s *Stage) DropClaimed() error {
	var errs []error
	for i, dir := range s.Claimed {
		if err := os.RemoveAll(dir); err != nil {
			errs = append(errs, ioErr(dir, err))
			_ = s.claims[i].Unlock()
			continue
		}
		_ = os.Remove(dir + LockSuffix)
		_ = s.claims[i].Unlock()
	}
	s.Claimed, s.claims = nil, nil
	return errors.Join(errs...)
}

// releaseClaimed lets go of the claimed directories, leaving them for the
// next writer.
func (s *Stage) releaseClaimed() {
	for _, l := range s.claims {
		_ = l.Unlock()
	}
	s.Claimed, s.claims = nil, nil
}

// Decision is what Install does with a finished stage, decided while the
// run lock is held so that no other writer can change Final meanwhile.
type Decision int

const (
	// Replace swaps the stage into place; a previous run directory is
	// removed.
	Replace Decision = iota
	// Keep leaves Final as it is and the stage in its staging directory
	// (released: the next Begin removes it).
	Keep
	// Same leaves Final as it is and removes the stage: Final already holds
	// an identical complete run.
	Same
)

// Install decides, under the run lock, what to do with the finished
// stage (decide sees Final, which may not exist) and does it. The stage is
// released whatever happens.
func (s *Stage) Install(ctx context.Context, decide func(final string) Decision) (Decision, error) {
	if s.done {
		return Keep, &fault.Error{Code: fault.Internal, File: s.Dir, Message: "stage already installed or released"}
	}
	run, err := lockRun(ctx, s.Final)
	if err != nil {
		s.Release()
		return Keep, err
	}
	defer run.unlock()
	if err := recoverSlug(s.Final); err != nil {
		s.Release()
		return Keep, err
	}
	d := decide(s.Final)
	switch d {
	case Keep:
		s.Release()
		return Keep, nil
	case Same:
		err := os.RemoveAll(s.Dir)
		s.drop()
		if err != nil {
			return Same, ioErr(s.Dir, err)
		}
		return Same, nil
	}
	if err := swapIn(s.Dir, s.Final); err != nil {
		s.Release()
		return Keep, err
	}
	// After an exchange the staging name holds the old run.
	err = os.RemoveAll(s.Dir)
	s.drop()
	if err != nil {
		return Replace, ioErr(s.Dir, err)
	}
	syncDir(filepath.Dir(s.Final))
	return Replace, nil
}

// Release gives up the stage without installing it: the staging directory
// stays, named, until the next Begin in its parent removes it.
func (s *Stage) Release() {
	s.releaseClaimed()
	if s.done {
		return
	}
	s.done = true
	_ = s.owner.Unlock()
}

// drop releases the stage and removes its owner lock file (the staging
// directory is gone).
func (s *Stage) drop() {
	s.releaseClaimed()
	s.done = true
	_ = os.Remove(s.Dir + LockSuffix)
	_ = s.owner.Unlock()
}

// crashHook, set only by tests, runs at named points of a swap so a test
// can kill the process there.
var crashHook func(point string)

func hook(point string) {
	if crashHook != nil {
		crashHook(point)
	}
}

// swapIn makes stage the run directory at final.
func swapIn(stage, final string) error {
	if _, err := os.Lstat(final); errors.Is(err, os.ErrNotExist) {
		hook("before-rename")
		if err := os.Rename(stage, final); err != nil {
			return ioErr(final, err)
		}
		return nil
	}
	hook("before-exchange")
	err := exchange(stage, final)
	if err == nil {
		hook("after-exchange")
		return nil
	}
	if !errors.Is(err, errNoExchange) {
		return ioErr(final, err)
	}
	// Two renames: a kill between them leaves the old run in .S.replaced-*,
	// which recoverSlug puts back.
	aside, err := os.MkdirTemp(filepath.Dir(final), "."+filepath.Base(final)+ReplacedInfix)
	if err != nil {
		return ioErr(filepath.Dir(final), err)
	}
	// os.Rename refuses an existing directory as its target; the name is
	// ours while the run lock is held.
	_ = os.Remove(aside)
	if err := os.Rename(final, aside); err != nil {
		return ioErr(final, err)
	}
	hook("between-renames")
	if err := os.Rename(stage, final); err != nil {
		_ = os.Rename(aside, final)
		return ioErr(final, err)
	}
	// A failure here leaves a .S.replaced-* leftover the next Begin removes.
	_ = os.RemoveAll(aside)
	return nil
}

var errNoExchange = errors.New("atomic exchange not supported")

// exchangeDisabled, set by tests, forces the two-rename fallback.
var exchangeDisabled bool

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
}
