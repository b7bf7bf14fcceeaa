package bundle

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/fault/faulttest"
	"github.com/algal-assay/assay/engine/internal/jsontest"
	"github.com/algal-assay/assay/engine/manifest"
	"github.com/algal-assay/assay/engine/store"
)

func mustManifest(t testing.TB, s string) *manifest.Manifest {
	t.Helper()
	m, err := manifest.ParseValue(jsontest.Parse(t, s))
	if err != nil {
		t.Fatalf("manifest: %v", err)
	}
	return m
}

const leafJSON = `{"contract":"algal.organism.v1","key":"organism:leaf","name":"Leaf",
 "interface":{"inputs":{"q":{"cell":"src","port":"v"}},"outputs":{"out":{"cell":"echo","port":"value"}}},
 "cells":[{"id":"src","kind":"input","outputs":{"v":"json"}},{"id":"echo","kind":"fn","fn":"echo.v1"},
  {"id":"doc","kind":"const","outputs":{"r":{"type":"ref","value":"REF"}}}],
 "edges":[{"from":{"cell":"src","port":"v"},"to":{"cell":"echo","port":"value"}}]}`

// fixture builds a three-level closure in a store: root -each-> mid
// -organism-> leaf, where leaf names a stored value through a const ref.
func fixture(t testing.TB) (store.Store, *manifest.Manifest, *manifest.Manifest, *manifest.Manifest, string) {
	st := store.NewMemStore()
	ref, err := st.Put(store.Values, map[string]any{"doc": "kept"})
	if err != nil {
		t.Fatal(err)
	}
	leaf := mustManifest(t, strings.Replace(leafJSON, "REF", ref, 1))
	mid := mustManifest(t, `{"contract":"algal.organism.v1","key":"organism:mid","name":"Mid",
	 "interface":{"inputs":{"q":{"cell":"in","port":"v"}},"outputs":{"out":{"cell":"inner","port":"out"}}},
	 "cells":[{"id":"in","kind":"input","outputs":{"v":"json"}},{"id":"inner","kind":"organism","manifest":"`+leaf.Digest+`"}],
	 "edges":[{"from":{"cell":"in","port":"v"},"to":{"cell":"inner","port":"q"}}]}`)
	root := mustManifest(t, `{"contract":"algal.organism.v1","key":"organism:root","name":"Root",
	 "cells":[{"id":"in","kind":"input","outputs":{"qs":"json"}},{"id":"map","kind":"each","manifest":"`+mid.Digest+`","over":"q","maxItems":4},
	  {"id":"again","kind":"organism","manifest":"`+leaf.Digest+`"}],
	 "edges":[{"from":{"cell":"in","port":"qs"},"to":{"cell":"map","port":"q"}},{"from":{"cell":"in","port":"qs"},"to":{"cell":"again","port":"q"}}]}`)
	for _, m := range []*manifest.Manifest{leaf, mid, root} {
		if _, err := st.Put(store.Manifests, m.Value); err != nil {
			t.Fatal(err)
		}
	}
	return st, root, mid, leaf, ref
}

func TestPackWalksEmbeddingGraphAndRefs(t *testing.T) {
	t.Parallel()
	st, root, mid, leaf, ref := fixture(t)
	// An unrelated manifest in the store must stay out of the closure.
	other := mustManifest(t, `{"contract":"algal.organism.v1","key":"organism:other","name":"O","cells":[]}`)
	if _, err := st.Put(store.Manifests, other.Value); err != nil {
		t.Fatal(err)
	}
	b, err := Pack(st, root.Digest)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Manifests) != 3 || b.Manifests[root.Digest] == nil || b.Manifests[mid.Digest] == nil || b.Manifests[leaf.Digest] == nil {
		t.Fatalf("manifests: %d", len(b.Manifests))
	}
	if len(b.Values) != 1 || b.Values[ref] == nil {
		t.Fatalf("values: %v", b.Values)
	}
	// Round trip: the canonical bytes parse back to the same closure and
	// install into an empty store from which the root packs identically.
	data, err := canon.Encode(b.Value())
	if err != nil {
		t.Fatal(err)
	}
	fresh := store.NewMemStore()
	got, err := Unpack(fresh, data)
	if err != nil {
		t.Fatal(err)
	}
	if got.Root != root.Digest {
		t.Fatalf("root %s", got.Root)
	}
	again, err := Pack(fresh, root.Digest)
	if err != nil {
		t.Fatal(err)
	}
	data2, _ := canon.Encode(again.Value())
	if string(data) != string(data2) {
		t.Fatal("pack of the unpacked closure differs")
	}
	if v, ok, _ := fresh.Get(store.Values, ref); !ok || v.(map[string]any)["doc"] != "kept" {
		t.Fatal("ref payload not installed")
	}
}

func TestPackMissing(t *testing.T) {
	t.Parallel()
	st, root, _, leaf, ref := fixture(t)
	partial := store.NewMemStore()
	if _, err := partial.Put(store.Manifests, root.Value); err != nil {
		t.Fatal(err)
	}
	_, err := Pack(partial, root.Digest)
	faulttest.Want(t, err, fault.StoreMiss)
	// A missing ref payload fails the pack too.
	partial = store.NewMemStore()
	if _, err := partial.Put(store.Manifests, leaf.Value); err != nil {
		t.Fatal(err)
	}
	_, err = Pack(partial, leaf.Digest)
	faulttest.Want(t, err, fault.StoreMiss)
	if !strings.Contains(err.Error(), strings.TrimPrefix(ref, "sha256:")) && !strings.Contains(err.Error(), ref) {
		t.Fatalf("message should name the ref: %v", err)
	}
	_, err = Pack(st, "nope")
	faulttest.Want(t, err, fault.Parse)
}

func packed(t testing.TB) (map[string]any, *manifest.Manifest, *manifest.Manifest, string) {
	st, root, _, leaf, ref := fixture(t)
	b, err := Pack(st, root.Digest)
	if err != nil {
		t.Fatal(err)
	}
	// Work on a private copy of the JSON.
	data, _ := canon.Encode(b.Value())
	return jsontest.Parse(t, string(data)).(map[string]any), root, leaf, ref
}

func TestDecodeRejects(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		edit func(b map[string]any, root, leaf *manifest.Manifest, ref string)
		code string
	}{
		{"tampered manifest", func(b map[string]any, _, leaf *manifest.Manifest, _ string) {
			b["manifests"].(map[string]any)[leaf.Digest].(map[string]any)["name"] = "Evil"
		}, fault.DigestMismatch},
		{"tampered value", func(b map[string]any, _, _ *manifest.Manifest, ref string) {
			b["values"].(map[string]any)[ref] = map[string]any{"doc": "swapped"}
		}, fault.DigestMismatch},
		{"root not among manifests", func(b map[string]any, root, _ *manifest.Manifest, _ string) {
			delete(b["manifests"].(map[string]any), root.Digest)
		}, fault.DigestMismatch},
		{"non-normalized manifest", func(b map[string]any, _, leaf *manifest.Manifest, _ string) {
			ms := b["manifests"].(map[string]any)
			raw := ms[leaf.Digest].(map[string]any)
			delete(raw, "budgets")
			delete(ms, leaf.Digest)
			d, _ := canon.Digest(raw)
			ms[d] = raw
		}, fault.DigestMismatch},
		{"unknown field", func(b map[string]any, _, _ *manifest.Manifest, _ string) { b["extra"] = true }, fault.Parse},
		{"wrong contract", func(b map[string]any, _, _ *manifest.Manifest, _ string) { b["contract"] = "algal.bundle.v0" }, fault.Parse},
		{"bad root", func(b map[string]any, _, _ *manifest.Manifest, _ string) { b["root"] = "sha256:zz" }, fault.Parse},
		{"bad key", func(b map[string]any, _, _ *manifest.Manifest, _ string) {
			b["values"].(map[string]any)["k"] = 1.0
		}, fault.Parse},
		{"manifests not object", func(b map[string]any, _, _ *manifest.Manifest, _ string) { b["manifests"] = []any{} }, fault.Parse},
		{"not a manifest", func(b map[string]any, _, _ *manifest.Manifest, _ string) {
			v := map[string]any{"contract": "algal.organism.v1"}
			d, _ := canon.Digest(v)
			b["manifests"].(map[string]any)[d] = v
		}, fault.Parse},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, root, leaf, ref := packed(t)
			c.edit(b, root, leaf, ref)
			_, err := Decode(b)
			faulttest.Want(t, err, c.code)
		})
	}
	// Values may be absent: the closure then holds manifests only.
	b, _, _, _ := packed(t)
	delete(b, "values")
	for _, m := range b["manifests"].(map[string]any) {
		_ = m
	}
	if _, err := Decode(b); err != nil {
		t.Fatalf("values is optional: %v", err)
	}
}

func TestParseRejectsBOMAndBadUTF8(t *testing.T) {
	t.Parallel()
	b, _, _, _ := packed(t)
	data, _ := canon.Encode(b)
	if _, err := Parse(data); err != nil {
		t.Fatal(err)
	}
	_, err := Parse(append([]byte("\ufeff"), data...))
	faulttest.Want(t, err, fault.Parse)
	bad := strings.Replace(string(data), `"name":"Leaf"`, "\"name\":\"L\xffaf\"", 1)
	_, err = Parse([]byte(bad))
	faulttest.Want(t, err, fault.Parse)
	_, err = Parse(make([]byte, MaxBytes+1))
	faulttest.Want(t, err, fault.BudgetExhausted)
}

func writeBundle(t testing.TB, dir string, b map[string]any) string {
	t.Helper()
	data, err := canon.Encode(b)
	if err != nil {
		t.Fatal(err)
	}
	hex, _ := canon.DigestHex(b["root"].(string))
	p := filepath.Join(dir, hex+".bundle.json")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDirSource(t *testing.T) {
	t.Parallel()
	b, root, leaf, _ := packed(t)
	dir := t.TempDir()
	writeBundle(t, dir, b)
	ctx := context.Background()
	got, err := Fetch(ctx, Dir(dir), root.Digest)
	if err != nil || got.Root != root.Digest {
		t.Fatalf("fetch: %v", err)
	}
	// Absent bundle: STORE_MISS.
	_, err = Fetch(ctx, Dir(dir), leaf.Digest)
	faulttest.Want(t, err, fault.StoreMiss)
	// A bundle served under another root's name: DIGEST_MISMATCH.
	lh, _ := canon.DigestHex(leaf.Digest)
	rh, _ := canon.DigestHex(root.Digest)
	data, _ := os.ReadFile(filepath.Join(dir, rh+".bundle.json"))
	if err := os.WriteFile(filepath.Join(dir, lh+".bundle.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Fetch(ctx, Dir(dir), leaf.Digest)
	faulttest.Want(t, err, fault.DigestMismatch)
	// A tampered file: DIGEST_MISMATCH.
	tampered := strings.Replace(string(data), `"name":"Leaf"`, `"name":"Lea"`, 1)
	if err := os.WriteFile(filepath.Join(dir, rh+".bundle.json"), []byte(tampered), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Fetch(ctx, Dir(dir), root.Digest)
	faulttest.Want(t, err, fault.DigestMismatch)
}

func TestDirSourceRefusesFIFO(t *testing.T) {
	t.Parallel()
	_, root, _, _ := packed(t)
	dir := t.TempDir()
	hex, _ := canon.DigestHex(root.Digest)
	p := filepath.Join(dir, hex+".bundle.json")
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	// No writer ever opens the FIFO: a blocking read would hang the test.
	_, err := Fetch(context.Background(), Dir(dir), root.Digest)
	faulttest.Want(t, err, fault.IOFailed)
	if !strings.Contains(err.Error(), "regular") {
		t.Fatalf("message: %v", err)
	}
	_, err = ReadFile(p)
	faulttest.Want(t, err, fault.IOFailed)
	// A directory under the bundle's name is refused too.
	os.Remove(p)
	if err := os.Mkdir(p, 0o755); err != nil {
		t.Fatal(err)
	}
	_, err = Fetch(context.Background(), Dir(dir), root.Digest)
	faulttest.Want(t, err, fault.IOFailed)
}

func TestDirSourceFollowsConfiguredSymlink(t *testing.T) {
	t.Parallel()
	b, root, _, _ := packed(t)
	real := t.TempDir()
	p := writeBundle(t, real, b)
	dir := t.TempDir()
	if err := os.Symlink(p, filepath.Join(dir, filepath.Base(p))); err != nil {
		t.Skip(err)
	}
	if _, err := Fetch(context.Background(), Dir(dir), root.Digest); err != nil {
		t.Fatalf("a symlink to a regular bundle file is admitted: %v", err)
	}
}

func TestUpstreamBundle(t *testing.T) {
	t.Parallel()
	dir := os.Getenv("ASSAY_UPSTREAM_DIR")
	if dir == "" {
		t.Skip("ASSAY_UPSTREAM_DIR unset: the upstream bundle is not available")
	}
	bdir := filepath.Join(dir, "examples", "bundles")
	entries, err := os.ReadDir(bdir)
	if err != nil || len(entries) == 0 {
		t.Fatalf("no upstream bundles: %v", err)
	}
	for _, e := range entries {
		b, err := ReadFile(filepath.Join(bdir, e.Name()))
		if err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		hex, _ := canon.DigestHex(b.Root)
		if e.Name() != hex+".bundle.json" {
			t.Fatalf("%s is rooted at %s", e.Name(), b.Root)
		}
		st := store.NewMemStore()
		if err := b.Install(st); err != nil {
			t.Fatal(err)
		}
		// The installed root packs back to the same bytes.
		again, err := Pack(st, b.Root)
		if err != nil {
			t.Fatal(err)
		}
		x, _ := canon.Encode(b.Value())
		y, _ := canon.Encode(again.Value())
		if string(x) != string(y) {
			t.Fatal("upstream bundle does not re-pack identically")
		}
	}
}

func TestTransportsConfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "transports.json")
	if err := os.WriteFile(cfg, []byte(`{"local":"bundles","abs":"/srv/b","web":"https://example.test/b/",
	 "slow":{"source":"http://example.test","timeoutMs":600000}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	tr, err := LoadTransports(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if tr["local"].String() != filepath.Join(dir, "bundles") || tr["abs"].String() != "/srv/b" {
		t.Fatalf("dirs: %s %s", tr["local"], tr["abs"])
	}
	if h, ok := tr["web"].(*HTTP); !ok || h.Timeout != DefaultTimeout {
		t.Fatalf("web: %#v", tr["web"])
	}
	if h := tr["slow"].(*HTTP); h.Timeout.Milliseconds() != 600000 {
		t.Fatalf("slow timeout %v", h.Timeout)
	}
	bad := []struct{ json, code string }{
		{`[]`, fault.Parse},
		{`{"Bad":"x"}`, fault.Parse},
		{`{"a":""}`, fault.Parse},
		{`{"a":"ftp://host/x"}`, fault.EffectUnbound},
		{`{"a":{"source":"x","timeoutMs":0}}`, fault.Parse},
		{`{"a":{"source":"x","timeoutMs":600001}}`, fault.Parse},
		{`{"a":{"source":"x","timeoutMs":1.5}}`, fault.Parse},
		{`{"a":{"source":"x","retries":1}}`, fault.Parse},
		{`{"a":7}`, fault.Parse},
	}
	for _, c := range bad {
		_, err := ParseTransports(jsontest.Parse(t, c.json), "")
		if fault.CodeOf(err) != c.code {
			t.Errorf("%s: want %s, got %v", c.json, c.code, err)
		}
	}
	many := map[string]any{}
	for i := 0; i < MaxTransports+1; i++ {
		many["t"+string(rune('a'+i))] = "d"
	}
	_, err = ParseTransports(many, "")
	faulttest.Want(t, err, fault.BudgetExhausted)
	_, err = NewSource("d", 600_001_000_000)
	faulttest.Want(t, err, fault.Parse)
}

func TestResolverAndPrefetch(t *testing.T) {
	t.Parallel()
	b, root, leaf, _ := packed(t)
	dir := t.TempDir()
	writeBundle(t, dir, b)
	remote := mustManifest(t, `{"contract":"algal.organism.v1","key":"organism:remote","name":"R",
	 "cells":[{"id":"in","kind":"input","outputs":{"qs":"json"}},{"id":"svc","kind":"organism","manifest":"`+root.Digest+`","via":"far"}],
	 "edges":[{"from":{"cell":"in","port":"qs"},"to":{"cell":"svc","port":"qs"}}]}`)
	st := store.NewMemStore()
	served, err := Prefetch(context.Background(), st, remote, Transports{"far": Dir(dir)})
	if err != nil || served[root.Digest] != "far" {
		t.Fatalf("prefetch: %v %v", err, served)
	}
	if ok, _ := st.Has(store.Manifests, leaf.Digest); !ok {
		t.Fatal("closure not installed")
	}
	// Without the transport: STORE_MISS; a local hit never consults it.
	_, err = Prefetch(context.Background(), store.NewMemStore(), remote, Transports{})
	faulttest.Want(t, err, fault.StoreMiss)
	served, err = Prefetch(context.Background(), st, remote, Transports{})
	if err != nil || len(served) != 0 {
		t.Fatalf("local closure: %v %v", err, served)
	}
	r := &Resolver{Store: st, Transports: Transports{"far": Dir(t.TempDir())}}
	if _, err := r.ResolveManifest(root.Digest, "far"); err != nil || r.Served[root.Digest] != "" {
		t.Fatalf("local hit must not consult the transport: %v %v", err, r.Served)
	}
}
