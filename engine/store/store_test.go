package store

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/crashtest"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/internal/jsontest"
)

func impls(t *testing.T) map[string]func() Store {
	return map[string]func() Store{
		"mem": func() Store { return NewMemStore() },
		"file": func() Store {
			s, err := OpenFileStore(filepath.Join(t.TempDir(), ".algal"))
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
		"overlay": func() Store { return NewOverlay(NewMemStore()) },
	}
}

func TestPutGetRoundTrip(t *testing.T) {
	t.Parallel()
	for name, mk := range impls(t) {
		t.Run(name, func(t *testing.T) {
			s := mk()
			v := map[string]any{"b": 2.0, "a": []any{"x", true, nil}}
			for _, ns := range []Namespace{Manifests, Values, Runs} {
				d, err := s.Put(ns, v)
				if err != nil {
					t.Fatal(err)
				}
				if want := jsontest.Digest(t, v); d != want {
					t.Fatalf("digest %s, want %s", d, want)
				}
				got, ok, err := s.Get(ns, d)
				if err != nil || !ok {
					t.Fatalf("get: ok=%v err=%v", ok, err)
				}
				if jsontest.Digest(t, got) != d {
					t.Fatalf("got a different value back: %v", got)
				}
				if has, err := s.Has(ns, d); err != nil || !has {
					t.Fatalf("has: %v %v", has, err)
				}
				// idempotent
				if d2, err := s.Put(ns, v); err != nil || d2 != d {
					t.Fatalf("second put: %s %v", d2, err)
				}
			}
			missing := jsontest.Digest(t, "absent")
			if _, ok, err := s.Get(Values, missing); ok || err != nil {
				t.Fatalf("miss: ok=%v err=%v", ok, err)
			}
			if _, err := Load(s, Manifests, missing); fault.CodeOf(err) != fault.StoreMiss {
				t.Fatalf("Load miss: %v", err)
			}
			if _, _, err := s.Get(Values, "sha256:XYZ"); fault.CodeOf(err) != fault.Parse {
				t.Fatalf("bad key: %v", err)
			}
			if _, err := s.Put("secrets", v); fault.CodeOf(err) != fault.Parse {
				t.Fatalf("bad namespace: %v", err)
			}
			list, err := s.List(Values)
			if err != nil || len(list) != 1 || list[0] != jsontest.Digest(t, v) {
				t.Fatalf("list %v %v", list, err)
			}
		})
	}
}

func TestFileLayoutIsCanonical(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	s, _ := OpenFileStore(root)
	receipt := map[string]any{"contract": "algal.run.v1", "digest": "sha256:" + strings.Repeat("0", 64)}
	ref, err := s.Put(Runs, receipt)
	if err != nil {
		t.Fatal(err)
	}
	hex, _ := canon.DigestHex(ref)
	b, err := os.ReadFile(filepath.Join(root, "runs", hex+".json"))
	if err != nil {
		t.Fatal(err)
	}
	want, _ := canon.Encode(receipt)
	if string(b) != string(want) {
		t.Fatalf("file bytes %q, want canonical %q", b, want)
	}
	// A pretty-printed copy of the same value still verifies: identity is
	// the value, not its spelling.
	if err := os.WriteFile(filepath.Join(root, "runs", hex+".json"), []byte("{\n \"digest\": \"sha256:"+strings.Repeat("0", 64)+"\", \"contract\": \"algal.run.v1\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.Get(Runs, ref); err != nil || !ok {
		t.Fatalf("non-canonical equal copy: %v", err)
	}
}

func TestTamperIsDigestMismatchAndPutRepairs(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	s, _ := OpenFileStore(root)
	d, err := s.Put(Values, map[string]any{"amount": 10.0})
	if err != nil {
		t.Fatal(err)
	}
	hex, _ := canon.DigestHex(d)
	path := filepath.Join(root, "values", hex+".json")
	for _, tampered := range []string{`{"amount":11}`, `{"amount":10`, ``, "\x00\x00\x00\x00"} {
		if err := os.WriteFile(path, []byte(tampered), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.Get(Values, d); fault.CodeOf(err) != fault.DigestMismatch {
			t.Fatalf("tampered %q: got %v", tampered, err)
		}
		// The next put of the object replaces the bad copy with the bytes
		// its name stands for.
		if got, err := s.Put(Values, map[string]any{"amount": 10.0}); err != nil || got != d {
			t.Fatalf("put over tampered %q: %s, %v", tampered, got, err)
		}
		if b, _ := os.ReadFile(path); string(b) != `{"amount":10}` {
			t.Fatalf("put over tampered %q left %q", tampered, b)
		}
		if v, ok, err := s.Get(Values, d); err != nil || !ok || v.(map[string]any)["amount"] != 10.0 {
			t.Fatalf("get after repair of %q: %v %v %v", tampered, v, ok, err)
		}
	}
}

func TestSymlinksRefused(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	s, _ := OpenFileStore(root)
	d, _ := s.Put(Values, "x")
	hex, _ := canon.DigestHex(d)
	outside := filepath.Join(t.TempDir(), "elsewhere.json")
	if err := os.WriteFile(outside, []byte(`"x"`), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(root, "values", hex+".json")
	os.Remove(path)
	if err := os.Symlink(outside, path); err != nil {
		t.Skip("no symlinks here")
	}
	if _, _, err := s.Get(Values, d); fault.CodeOf(err) != fault.IOFailed {
		t.Fatalf("symlinked object: %v", err)
	}
	// a symlinked namespace directory
	other := t.TempDir()
	if err := os.Symlink(other, filepath.Join(root, "manifests")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(Manifests, "m"); fault.CodeOf(err) != fault.IOFailed {
		t.Fatalf("symlinked namespace: %v", err)
	}
	// a symlinked root
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(root, link); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenFileStore(link); fault.CodeOf(err) != fault.IOFailed {
		t.Fatalf("symlinked root: %v", err)
	}
}

func TestConcurrentWritersOneFile(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	s, _ := OpenFileStore(root)
	v := map[string]any{"blob": strings.Repeat("z", 100_000)}
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := s.Put(Values, v); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	checkSingleValidObject(t, root, v)
}

func checkSingleValidObject(t *testing.T, root string, v any) {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(root, "values"))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		names := []string{}
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Fatalf("want exactly one file, got %v", names)
	}
	s, _ := OpenFileStore(root)
	if _, ok, err := s.Get(Values, jsontest.Digest(t, v)); err != nil || !ok {
		t.Fatalf("object unreadable: %v", err)
	}
}

// TestHelperProcess is not a test: the two-process test re-executes the
// test binary into it.
func TestHelperProcess(t *testing.T) {
	t.Parallel()
	root := os.Getenv("ASSAY_STORE_HELPER_DIR")
	if root == "" {
		t.Skip("helper process only")
	}
	s, err := OpenFileStore(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	who := os.Getenv("ASSAY_STORE_HELPER_WHO")
	rd := jsontest.Digest(t, "request")
	for range 200 {
		if _, err := s.Put(Values, map[string]any{"blob": strings.Repeat("q", 50_000)}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(4)
		}
		if _, err := s.PutEffect(map[string]any{"requestDigest": rd, "executor": "x", "output": who}, "x"); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(5)
		}
	}
	os.Exit(0)
}

func TestTwoProcessesWriteOneObject(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("spawns processes")
	}
	root := t.TempDir()
	var cmds []*exec.Cmd
	for _, who := range []string{"a", "b"} {
		cmd := crashtest.Child("TestHelperProcess", "ASSAY_STORE_HELPER_DIR="+root, "ASSAY_STORE_HELPER_WHO="+who)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("helper: %v", err)
		}
	}
	checkSingleValidObject(t, root, map[string]any{"blob": strings.Repeat("q", 50_000)})
	s, _ := OpenFileStore(root)
	rec, ok, err := s.GetEffect(jsontest.Digest(t, "request"), "x")
	if err != nil || !ok {
		t.Fatalf("memo: %v", err)
	}
	if w := rec["output"]; w != "a" && w != "b" {
		t.Fatalf("memo winner %v", w)
	}
	effects, _ := os.ReadDir(filepath.Join(root, "effects"))
	if len(effects) != 1 {
		t.Fatalf("want one memo file, got %d", len(effects))
	}
}

func TestMemoFirstWins(t *testing.T) {
	t.Parallel()
	for name, mk := range impls(t) {
		t.Run(name, func(t *testing.T) {
			s := mk()
			rd := jsontest.Digest(t, map[string]any{"contract": "algal.effect.v1", "cellId": "route"})
			first := map[string]any{"requestDigest": rd, "executor": "scripted", "output": "bug"}
			second := map[string]any{"requestDigest": rd, "executor": "scripted", "output": "feature"}
			if _, ok, err := s.GetEffect(rd, "id"); ok || err != nil {
				t.Fatalf("empty memo: %v %v", ok, err)
			}
			got, err := s.PutEffect(first, "id")
			if err != nil || got["output"] != "bug" {
				t.Fatalf("first put: %v %v", got, err)
			}
			got, err = s.PutEffect(second, "id")
			if err != nil || got["output"] != "bug" {
				t.Fatalf("second put must return the retained winner: %v %v", got, err)
			}
			rec, ok, err := s.GetEffect(rd, "id")
			if err != nil || !ok || rec["output"] != "bug" {
				t.Fatalf("get: %v %v %v", rec, ok, err)
			}
			// another executor identity is another entry
			if _, ok, _ := s.GetEffect(rd, "other"); ok {
				t.Fatal("memo leaked across executor identities")
			}
			// failures never enter the memo
			bad := map[string]any{"requestDigest": rd, "executor": "scripted", "error": map[string]any{"code": "EFFECT_FAILED", "message": "x"}}
			if _, err := s.PutEffect(bad, "fresh"); fault.CodeOf(err) != fault.Parse {
				t.Fatalf("error record: %v", err)
			}
			if _, ok, _ := s.GetEffect(rd, "fresh"); ok {
				t.Fatal("an error was memoized")
			}
		})
	}
}

func TestMemoConcurrentFirstWins(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	s, _ := OpenFileStore(root)
	rd := jsontest.Digest(t, "req")
	memoRace(t, rd, func(i int) (Store, any) { return s, float64(i) })
}

// memoRace has 16 writers put a memo record for rd under executor "e" at
// once, writer i through the store and with the output writer(i) gives,
// and returns the output every writer got back: the first record filed
// wins for all of them.
func memoRace(t *testing.T, rd string, writer func(i int) (Store, any)) any {
	t.Helper()
	var wg sync.WaitGroup
	winners := make([]any, 16)
	for i := range winners {
		s, out := writer(i)
		wg.Go(func() {
			r, err := s.PutEffect(map[string]any{"requestDigest": rd, "executor": "e", "output": out}, "e")
			if err != nil {
				t.Error(err)
				return
			}
			winners[i] = r["output"]
		})
	}
	wg.Wait()
	for _, w := range winners {
		if w != winners[0] {
			t.Fatalf("writers saw different winners: %v", winners)
		}
	}
	return winners[0]
}

func TestMemoTamperedRecord(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	s, _ := OpenFileStore(root)
	rd := jsontest.Digest(t, "req")
	if _, err := s.PutEffect(map[string]any{"requestDigest": rd, "executor": "e", "output": 1.0}, "e"); err != nil {
		t.Fatal(err)
	}
	key, _ := MemoKey(rd, "e")
	hex, _ := canon.DigestHex(key)
	other := jsontest.Digest(t, "other")
	if err := os.WriteFile(filepath.Join(root, "effects", hex+".json"), []byte(`{"executor":"e","output":1,"requestDigest":"`+other+`"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.GetEffect(rd, "e"); fault.CodeOf(err) != fault.DigestMismatch {
		t.Fatalf("foreign memo record: %v", err)
	}
	if err := os.WriteFile(filepath.Join(root, "effects", hex+".json"), []byte(`{"executor":"e","error":{},"requestDigest":"`+rd+`"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.GetEffect(rd, "e"); fault.CodeOf(err) != fault.DigestMismatch {
		t.Fatalf("malformed memo record: %v", err)
	}
}

func TestMemoKey(t *testing.T) {
	t.Parallel()
	rd := jsontest.Digest(t, "req")
	k, err := MemoKey(rd, "scripted")
	if err != nil {
		t.Fatal(err)
	}
	want := jsontest.Digest(t, map[string]any{"contract": "algal.effect-cache.v1", "executor": "scripted", "requestDigest": rd})
	if k != want {
		t.Fatalf("memo key %s want %s", k, want)
	}
	if k, _ := MemoKey(rd, ""); k != rd {
		t.Fatalf("empty identity keys by request digest, got %s", k)
	}
	if _, err := MemoKey("nope", "x"); fault.CodeOf(err) != fault.Parse {
		t.Fatalf("bad digest: %v", err)
	}
}

func TestSlots(t *testing.T) {
	t.Parallel()
	for name, mk := range impls(t) {
		t.Run(name, func(t *testing.T) {
			s := mk()
			if _, ok, err := s.GetSlot("count"); ok || err != nil {
				t.Fatalf("unwritten slot: %v %v", ok, err)
			}
			for _, v := range []any{0.0, 1.0, map[string]any{"n": 2.0}} {
				if err := s.SetSlot("count", v); err != nil {
					t.Fatal(err)
				}
				got, ok, err := s.GetSlot("count")
				if err != nil || !ok || jsontest.Digest(t, got) != jsontest.Digest(t, v) {
					t.Fatalf("slot read %v, want %v (%v)", got, v, err)
				}
			}
			for _, bad := range []string{"", "Count", "../x", "a/b", "1a", strings.Repeat("a", 65)} {
				if err := s.SetSlot(bad, 1.0); fault.CodeOf(err) != fault.Parse {
					t.Fatalf("slot name %q: %v", bad, err)
				}
			}
			if err := s.SetSlot("big", strings.Repeat("x", MaxSlotBytes)); fault.CodeOf(err) != fault.BudgetExhausted {
				t.Fatalf("oversized slot: %v", err)
			}
		})
	}
}

func TestFileSlotPersistsAcrossOpen(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	s, _ := OpenFileStore(root)
	if err := s.SetSlot("mem", "one"); err != nil {
		t.Fatal(err)
	}
	if err := s.SetSlot("mem", "two"); err != nil {
		t.Fatal(err)
	}
	s2, _ := OpenFileStore(root)
	v, ok, err := s2.GetSlot("mem")
	if err != nil || !ok || v != "two" {
		t.Fatalf("reopened slot: %v %v %v", v, ok, err)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "slots", "mem.json")); string(b) != `"two"` {
		t.Fatalf("slot file %q", b)
	}
}

func TestListIgnoresForeignFiles(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	s, _ := OpenFileStore(root)
	d, _ := s.Put(Runs, "r")
	if err := os.WriteFile(filepath.Join(root, "runs", ".tmp-123"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "runs", "notes.json"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := s.List(Runs)
	if err != nil || len(got) != 1 || got[0] != d {
		t.Fatalf("list %v %v", got, err)
	}
	empty, _ := OpenFileStore(t.TempDir())
	if got, err := empty.List(Runs); err != nil || len(got) != 0 {
		t.Fatalf("empty list %v %v", got, err)
	}
}

func TestOverlayLeavesBaseUntouched(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	base, _ := OpenFileStore(root)
	old, _ := base.Put(Values, "old")
	if err := base.SetSlot("s", "base"); err != nil {
		t.Fatal(err)
	}
	rd := jsontest.Digest(t, "r")
	if _, err := base.PutEffect(map[string]any{"requestDigest": rd, "executor": "e", "output": "base"}, "e"); err != nil {
		t.Fatal(err)
	}
	o := NewOverlay(base)
	if _, ok, _ := o.Get(Values, old); !ok {
		t.Fatal("overlay must read through")
	}
	nd, _ := o.Put(Values, "new")
	if err := o.SetSlot("s", "overlay"); err != nil {
		t.Fatal(err)
	}
	if r, _ := o.PutEffect(map[string]any{"requestDigest": rd, "executor": "e", "output": "new"}, "e"); r["output"] != "base" {
		t.Fatalf("base memo must still win: %v", r)
	}
	if has, _ := base.Has(Values, nd); has {
		t.Fatal("overlay write reached the base")
	}
	if v, _, _ := base.GetSlot("s"); v != "base" {
		t.Fatalf("base slot changed: %v", v)
	}
	if v, _, _ := o.GetSlot("s"); v != "overlay" {
		t.Fatalf("overlay slot: %v", v)
	}
	if l, _ := o.List(Values); len(l) != 2 {
		t.Fatalf("overlay list %v", l)
	}
}

func benchValue() map[string]any {
	return map[string]any{"payload": strings.Repeat("a", 4096-14)}
}

func benchPutGet(b *testing.B, s Store) {
	v := benchValue()
	if n, _ := canon.Encode(v); len(n) != 4096 {
		b.Fatalf("bench value is %d bytes", len(n))
	}
	d, err := s.Put(Values, v)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("put", func(b *testing.B) {
		b.SetBytes(4096)
		for b.Loop() {
			if _, err := s.Put(Values, v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("put-new", func(b *testing.B) {
		b.SetBytes(4096)
		i := 0
		for b.Loop() {
			i++
			v := map[string]any{"payload": strings.Repeat("a", 4096-22), "n": float64(i)}
			if _, err := s.Put(Values, v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("get", func(b *testing.B) {
		b.SetBytes(4096)
		for b.Loop() {
			if _, ok, err := s.Get(Values, d); err != nil || !ok {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkMemStore4KiB(b *testing.B)  { benchPutGet(b, NewMemStore()) }
func BenchmarkFileStore4KiB(b *testing.B) { s, _ := OpenFileStore(b.TempDir()); benchPutGet(b, s) }
