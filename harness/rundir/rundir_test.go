package rundir

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/algal-assay/assay/engine/fault"
	"github.com/gofrs/flock"
)

// newRun makes a staging directory holding one file that says which run
// it is.
func newRun(t *testing.T, final, marker string) *Stage {
	t.Helper()
	s, err := Begin(context.Background(), final)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s.Dir, "marker"), []byte(marker), 0o644); err != nil {
		t.Fatal(err)
	}
	return s
}

func marker(t *testing.T, final string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(final, "marker"))
	if err != nil {
		return ""
	}
	return string(b)
}

// hidden lists the dot names in dir.
func hidden(t *testing.T, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, de := range des {
		if n := de.Name(); strings.HasPrefix(n, ".") {
			out = append(out, n)
		}
	}
	return out
}

func replace(string) Decision { return Replace }

func TestInstallReplacesKeepsOrDrops(t *testing.T) {
	for _, fallback := range []bool{false, true} {
		t.Run(map[bool]string{false: "exchange", true: "two renames"}[fallback], func(t *testing.T) {
			exchangeDisabled = fallback
			t.Cleanup(func() { exchangeDisabled = false })
			final := filepath.Join(t.TempDir(), "w", "slug")
			ctx := context.Background()
			if d, err := newRun(t, final, "one").Install(ctx, replace); err != nil || d != Replace {
				t.Fatalf("first install: %v %v", d, err)
			}
			if got := marker(t, final); got != "one" {
				t.Fatalf("final holds %q", got)
			}
			if d, err := newRun(t, final, "two").Install(ctx, replace); err != nil || d != Replace || marker(t, final) != "two" {
				t.Fatalf("replace: %v %v, final holds %q", d, err, marker(t, final))
			}
			s := newRun(t, final, "three")
			if d, err := s.Install(ctx, func(string) Decision { return Same }); err != nil || d != Same || marker(t, final) != "two" {
				t.Fatalf("same: %v %v, final holds %q", d, err, marker(t, final))
			}
			if _, err := os.Stat(s.Dir); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("an identical stage was not removed: %v", err)
			}
			if h := hidden(t, filepath.Dir(final)); len(h) != 0 {
				t.Fatalf("left beside the run directory: %v", h)
			}
			k := newRun(t, final, "four")
			if d, err := k.Install(ctx, func(string) Decision { return Keep }); err != nil || d != Keep || marker(t, final) != "two" {
				t.Fatalf("keep: %v %v, final holds %q", d, err, marker(t, final))
			}
			if marker(t, k.Dir) != "four" {
				t.Fatal("a kept stage is gone")
			}
			left, err := Leftovers(filepath.Dir(filepath.Dir(final)))
			if err != nil || !slices.Contains(left, k.Dir) {
				t.Fatalf("Leftovers %v (%v) does not list the kept stage %s", left, err, k.Dir)
			}
			// The next writer removes what a finished run left.
			s = newRun(t, final, "five")
			if _, err := os.Stat(k.Dir); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("the released stage survived the next Begin: %v", err)
			}
			s.Release()
		})
	}
}

func TestHeldLockIsReported(t *testing.T) {
	old := LockWait
	LockWait = 50 * time.Millisecond
	t.Cleanup(func() { LockWait = old })
	final := filepath.Join(t.TempDir(), "slug")
	held := flock.New(runLockPath(final))
	if ok, err := held.TryLock(); err != nil || !ok {
		t.Fatal(err)
	}
	if err := os.WriteFile(runLockPath(final), []byte("4242\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Begin(context.Background(), final)
	var e *fault.Error
	if !errors.As(err, &e) || e.Code != CodeLocked || !strings.Contains(e.Error(), "process 4242 holds the lock on run directory "+final) {
		t.Fatalf("Begin under a held lock: %v", err)
	}
	if err := held.Unlock(); err != nil {
		t.Fatal(err)
	}
	s, err := Begin(context.Background(), final)
	if err != nil {
		t.Fatalf("Begin after the holder let go: %v", err)
	}
	s.Release()
}

// A staging directory whose owner died (a run killed mid-way) is listed,
// then removed by the next writer; one whose owner lives is neither.
func TestStaleStagingIsCleaned(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	final := filepath.Join(root, "w", "slug")
	other := filepath.Join(root, "w", "other-slug")
	live := newRun(t, final, "live")
	dead := newRun(t, final, "dead")
	deadOther := newRun(t, other, "dead")
	dead.Release()
	deadOther.Release()
	left, err := Leftovers(root)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{deadOther.Dir, dead.Dir}; !slices.Equal(left, want) {
		t.Fatalf("Leftovers = %v, want %v", left, want)
	}
	next := newRun(t, final, "next")
	for _, d := range []string{dead.Dir, deadOther.Dir} {
		if _, err := os.Stat(d); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("stale %s survived", d)
		}
		if _, err := os.Stat(d + LockSuffix); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("stale %s survived", d+LockSuffix)
		}
	}
	if marker(t, live.Dir) != "live" {
		t.Fatal("a live run's staging directory was removed")
	}
	live.Release()
	next.Release()
}

// The crash test: a helper process installs a new run over an old one and
// is SIGKILLed at a point inside the swap. The old run or the new one is
// visible at once with the exchange; with the two-rename fallback the next
// writer puts the old one back. Either way nothing is left over after it.
func TestKillInsideTheSwap(t *testing.T) {
	t.Parallel()
	if os.Getenv("RUNDIR_HELPER_FINAL") != "" {
		return
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		point    string
		fallback bool
		want     []string // markers the final directory may hold right after the kill
	}{
		{"before-exchange", false, []string{"old"}},
		{"after-exchange", false, []string{"new"}},
		{"between-renames", true, []string{""}},
	} {
		t.Run(tc.point, func(t *testing.T) {
			root := t.TempDir()
			final := filepath.Join(root, "w", "slug")
			if _, err := newRun(t, final, "old").Install(context.Background(), replace); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(exe, "-test.run=^TestSwapHelper$")
			cmd.Env = append(os.Environ(), "RUNDIR_HELPER_FINAL="+final, "RUNDIR_HELPER_POINT="+tc.point)
			if tc.fallback {
				cmd.Env = append(cmd.Env, "RUNDIR_HELPER_FALLBACK=1")
			}
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("helper was not killed inside the swap: %v\n%s", err, out)
			}
			if got := marker(t, final); !slices.Contains(tc.want, got) {
				t.Fatalf("right after the kill the run directory holds %q, want one of %q", got, tc.want)
			}
			left, err := Leftovers(root)
			if err != nil || len(left) == 0 {
				t.Fatalf("the killed swap left nothing to recover? %v %v", left, err)
			}
			s := newRun(t, final, "next")
			if got := marker(t, final); got != "old" && got != "new" {
				t.Fatalf("after recovery the run directory holds %q: neither run is visible", got)
			}
			if tc.point == "between-renames" && marker(t, final) != "old" {
				t.Fatalf("recovery did not put the old run back")
			}
			s.Release()
			os.RemoveAll(s.Dir)
			os.Remove(s.Dir + LockSuffix)
			if h := hidden(t, filepath.Dir(final)); len(h) != 0 {
				t.Fatalf("left after recovery: %v", h)
			}
		})
	}
}

// TestSwapHelper is the helper process of TestKillInsideTheSwap.
func TestSwapHelper(t *testing.T) {
	final := os.Getenv("RUNDIR_HELPER_FINAL")
	if final == "" {
		t.Skip("helper process only")
	}
	exchangeDisabled = os.Getenv("RUNDIR_HELPER_FALLBACK") != ""
	point := os.Getenv("RUNDIR_HELPER_POINT")
	crashHook = func(p string) {
		if p == point {
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			time.Sleep(time.Minute)
		}
	}
	s := newRun(t, final, "new")
	_, _ = s.Install(context.Background(), replace)
	t.Fatalf("the swap never reached %s", point)
}

// Claim keeps the staging directories of the slug whose owner is gone,
// most recently written first, and holds them: a Begin of the same slug
// meanwhile neither removes them nor claims them again, a live writer's
// staging directory is never claimed, Release leaves them for the next
// writer, and DropClaimed removes them with their lock files.
func TestClaimHoldsWhatKilledRunsLeft(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	final := filepath.Join(t.TempDir(), "w", "slug")
	parent := filepath.Dir(final)
	live, err := Begin(ctx, final)
	if err != nil {
		t.Fatal(err)
	}
	older, newer := filepath.Join(parent, ".slug.partial-older"), filepath.Join(parent, ".slug.partial-newer")
	for i, d := range []string{older, newer} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		when := time.Now().Add(time.Duration(i-2) * time.Minute)
		if err := os.Chtimes(d, when, when); err != nil {
			t.Fatal(err)
		}
	}
	// An orphaned owner lock beside the older one, as a killed run leaves.
	if err := os.WriteFile(older+LockSuffix, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Claim(ctx, final)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(s.Claimed, []string{newer, older}) {
		t.Fatalf("claimed %v, want the newer then the older leftover", s.Claimed)
	}
	other, err := Claim(ctx, final)
	if err != nil {
		t.Fatal(err)
	}
	if len(other.Claimed) != 0 {
		t.Fatalf("a second writer claimed %v", other.Claimed)
	}
	for _, d := range []string{older, newer, live.Dir} {
		if _, err := os.Stat(d); err != nil {
			t.Fatalf("%s was removed while held: %v", d, err)
		}
	}
	if left, err := Leftovers(parent); err != nil || slices.Contains(left, older) || slices.Contains(left, newer) {
		t.Fatalf("leftovers %v (%v) list a claimed directory", left, err)
	}
	other.Release()
	live.Release()

	s.Release() // lets go: the next writer finds them again
	s, err = Claim(ctx, final)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Claimed) != 5 { // the two, and the three stages released above
		t.Fatalf("after a release, claimed %v", s.Claimed)
	}
	if err := s.DropClaimed(); err != nil {
		t.Fatal(err)
	}
	if got := hidden(t, parent); len(got) != 2 || !slices.Contains(got, filepath.Base(s.Dir)) {
		t.Fatalf("after DropClaimed %v remain, want only the stage and its lock", got)
	}
	if d, err := s.Install(ctx, replace); err != nil || d != Replace {
		t.Fatalf("install: %v %v", d, err)
	}
	if got := hidden(t, parent); len(got) != 0 {
		t.Fatalf("after install %v remain", got)
	}
}
