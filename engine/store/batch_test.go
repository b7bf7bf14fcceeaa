package store

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/internal/jsontest"
)

func TestBatchWritesAreVisibleAndCommitClearsThem(t *testing.T) {
	t.Parallel()
	root := filepath.Join(t.TempDir(), ".algal")
	fs, err := OpenFileStore(root)
	if err != nil {
		t.Fatal(err)
	}
	b := fs.Batch()
	var digests []string
	for i := range 50 {
		d, err := b.Put(Runs, map[string]any{"n": float64(i)})
		if err != nil {
			t.Fatal(err)
		}
		digests = append(digests, d)
	}
	rd := jsontest.Digest(t, "req")
	if _, err := b.PutEffect(map[string]any{"requestDigest": rd, "executor": "e", "output": "o"}, "e"); err != nil {
		t.Fatal(err)
	}
	if n := b.Pending(); n != 51 {
		t.Fatalf("pending before commit: %d, want 51", n)
	}
	// Written objects are readable at once, through the batch and through
	// a plain store over the same directory (and so by any other process).
	other, _ := OpenFileStore(root)
	for _, d := range digests {
		if _, ok, err := other.Get(Runs, d); err != nil || !ok {
			t.Fatalf("%s before commit: %v %v", d, ok, err)
		}
	}
	// Putting an object already present still owes its durability.
	if _, err := b.Put(Runs, map[string]any{"n": 0.0}); err != nil {
		t.Fatal(err)
	}
	if n := b.Pending(); n != 52 {
		t.Fatalf("pending after re-put: %d, want 52", n)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	if n := b.Pending(); n != 0 {
		t.Fatalf("pending after commit: %d", n)
	}
	if err := b.Commit(); err != nil {
		t.Fatalf("empty commit: %v", err)
	}
	// A plain store is durable per write: Commit is a no-op for it.
	if err := Commit(other); err != nil {
		t.Fatal(err)
	}
	if err := Commit(NewMemStore()); err != nil {
		t.Fatal(err)
	}
	if err := Commit(b); err != nil {
		t.Fatal(err)
	}
}

// syncEach is the barrier where syncfs(2) is unavailable; it must accept
// a file a repair removed meanwhile and refuse nothing else.
func TestSyncEachFlushesFilesAndDirectories(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	fs, _ := OpenFileStore(root)
	b := fs.Batch()
	d, err := b.Put(Values, "x")
	if err != nil {
		t.Fatal(err)
	}
	hex, _ := canon.DigestHex(d)
	paths := []string{filepath.Join(root, "values", hex+".json"), filepath.Join(root, "values", hex+".json"), filepath.Join(root, "values", "gone.json")}
	if err := syncEach(paths); err != nil {
		t.Fatal(err)
	}
	if err := syncEach([]string{filepath.Join(root, "no-such-dir", "x.json")}); err != nil {
		t.Fatalf("a vanished file: %v", err)
	}
}

// A batch defers the barrier, so an OS crash may leave a name holding
// torn bytes: a prefix of the object, zeros, or nothing. Each is detected
// on read and replaced by the next put.
func TestBatchTornObjectsAreDetectedAndRewritten(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	fs, _ := OpenFileStore(root)
	b := fs.Batch()
	v := map[string]any{"receipt": "r", "events": []any{"a", "b", "c"}}
	d, err := b.Put(Runs, v)
	if err != nil {
		t.Fatal(err)
	}
	hex, _ := canon.DigestHex(d)
	path := filepath.Join(root, "runs", hex+".json")
	good, _ := os.ReadFile(path)
	for name, torn := range map[string][]byte{
		"empty":     {},
		"prefix":    good[:len(good)/2],
		"zeros":     make([]byte, len(good)),
		"last byte": good[:len(good)-1],
	} {
		if err := os.WriteFile(path, torn, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, _, err := b.Get(Runs, d); fault.CodeOf(err) != fault.DigestMismatch {
			t.Fatalf("%s: get: %v", name, err)
		}
		if got, err := b.Put(Runs, v); err != nil || got != d {
			t.Fatalf("%s: put: %s %v", name, got, err)
		}
		if now, _ := os.ReadFile(path); string(now) != string(good) {
			t.Fatalf("%s: not rewritten: %q", name, now)
		}
		if err := b.Commit(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestTornMemoRecordIsAMissAndIsReplaced(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	fs, _ := OpenFileStore(root)
	rd := jsontest.Digest(t, "req")
	if _, err := fs.PutEffect(map[string]any{"requestDigest": rd, "executor": "e", "output": "first"}, "e"); err != nil {
		t.Fatal(err)
	}
	key, _ := MemoKey(rd, "e")
	hex, _ := canon.DigestHex(key)
	path := filepath.Join(root, "effects", hex+".json")
	good, _ := os.ReadFile(path)
	if err := os.WriteFile(path, good[:len(good)-3], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := fs.GetEffect(rd, "e"); err != nil || ok {
		t.Fatalf("torn memo record: ok %v, err %v; want a miss", ok, err)
	}
	// Concurrent writers repairing the record agree on one winner.
	b := fs.Batch()
	winner := memoRace(t, rd, func(i int) (Store, any) {
		if i%2 == 1 {
			return b, fmt.Sprint("w", i)
		}
		return fs, fmt.Sprint("w", i)
	})
	rec, ok, err := fs.GetEffect(rd, "e")
	if err != nil || !ok || rec["output"] != winner {
		t.Fatalf("after repair: %v %v %v (winner %v)", rec, ok, err, winner)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
}

// receiptSized is the i-th of a run of distinct objects about the size of
// a small receipt (1.5 KB canonical).
func receiptSized(i int) map[string]any {
	return map[string]any{"contract": "algal.run.v1", "n": float64(i), "events": strings.Repeat("e", 1450)}
}

// BenchmarkFileStorePut puts distinct receipt-sized objects, side by side:
// "each" syncs every object (FileStore: fsync of the file, link, fsync of
// the directory, the store before batching) and "batch" commits once per
// 2,048 objects, one contract-sized bench part (Batch: one syncfs).
func BenchmarkFileStorePut(b *testing.B) {
	for _, mode := range []string{"each", "batch"} {
		b.Run("durability="+mode, func(b *testing.B) {
			fs, _ := OpenFileStore(b.TempDir())
			var s Store = fs
			if mode == "batch" {
				s = fs.Batch()
			}
			b.SetBytes(1500)
			i := 0
			syncs0, cpu0 := barriers.Load(), cpuTime()
			for b.Loop() {
				if _, err := s.Put(Runs, receiptSized(i)); err != nil {
					b.Fatal(err)
				}
				i++
				if i%2048 == 0 {
					if err := Commit(s); err != nil {
						b.Fatal(err)
					}
				}
			}
			if err := Commit(s); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(barriers.Load()-syncs0)/float64(i), "syncs/op")
			b.ReportMetric((cpuTime()-cpu0).Seconds()*1e6/float64(i), "cpu-µs/op")
		})
	}
}

// cpuTime is the process's user plus system CPU time: on a shared machine
// it moves less with other processes' load than wall time does.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// holdBarrier replaces the batch barrier for one test: each call reports
// the paths it was given on entered, then waits for a result on release.
func holdBarrier(t *testing.T) (entered chan []string, release chan error) {
	t.Helper()
	entered, release = make(chan []string, 4), make(chan error)
	old := barrier
	barrier = func(_ string, paths []string) error {
		entered <- slices.Clone(paths)
		return <-release
	}
	t.Cleanup(func() { barrier = old })
	return entered, release
}

// A Commit that starts while another syncs must not return before the
// writes the other took are durable: its caller would publish a report
// naming them. And when the first one fails, the second syncs what the
// first put back.
func TestConcurrentCommitsWaitForTheWritesTheOtherTook(t *testing.T) {
	for _, firstFails := range []bool{false, true} {
		t.Run(fmt.Sprintf("first fails %v", firstFails), func(t *testing.T) {
			fs, err := OpenFileStore(filepath.Join(t.TempDir(), ".algal"))
			if err != nil {
				t.Fatal(err)
			}
			b := fs.Batch()
			if _, err := b.Put(Runs, map[string]any{"n": 1.0}); err != nil {
				t.Fatal(err)
			}
			entered, release := holdBarrier(t)
			first, second := make(chan error, 1), make(chan error, 1)
			go func() { first <- b.Commit() }()
			took := <-entered
			if len(took) != 1 {
				t.Fatalf("first commit took %v, want the one write", took)
			}
			go func() { second <- b.Commit() }()
			select {
			case err := <-second:
				t.Fatalf("second Commit returned (%v) while the first was still syncing the write it took", err)
			case <-time.After(100 * time.Millisecond):
			}
			if firstFails {
				release <- fmt.Errorf("disk full")
				if err := <-first; err == nil {
					t.Fatal("first Commit: want its barrier's error")
				}
				if again := <-entered; !slices.Equal(again, took) {
					t.Fatalf("second commit synced %v, want what the first put back: %v", again, took)
				}
				release <- nil
			} else {
				release <- nil
				if err := <-first; err != nil {
					t.Fatal(err)
				}
			}
			if err := <-second; err != nil {
				t.Fatal(err)
			}
			if n := b.Pending(); n != 0 {
				t.Fatalf("pending after both commits: %d", n)
			}
		})
	}
}
