package vm

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/bundle"
	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/manifest"
	"github.com/algal-assay/assay/engine/store"
)

// bundleDir packs child into a fresh transport directory.
func bundleDir(t *testing.T, child *manifest.Manifest) (string, []byte) {
	t.Helper()
	src := store.NewMemStore()
	if _, err := src.Put(store.Manifests, child.Value); err != nil {
		t.Fatal(err)
	}
	b, err := bundle.Pack(src, child.Digest)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := canon.Encode(b.Value())
	dir := t.TempDir()
	hex, _ := canon.DigestHex(child.Digest)
	if err := os.WriteFile(filepath.Join(dir, hex+".bundle.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, data
}

func TestTransports(t *testing.T) {
	t.Parallel()
	child := mustManifest(t, echoChild)
	dir, data := bundleDir(t, child)
	viaCells := func(kind string) *manifest.Manifest {
		extra := ""
		switch kind {
		case "each":
			extra = `,"over":"q","maxItems":4`
		case "repeat":
			extra = `,"maxRounds":2`
		}
		in := `{"id":"in","kind":"input","outputs":{"q":"text"}}`
		if kind == "each" {
			in = `{"id":"in","kind":"input","outputs":{"q":"json"}}`
		}
		return mustManifest(t, organism("far-"+kind, in+`,{"id":"svc","kind":"`+kind+`","manifest":"`+child.Digest+`","via":"far"`+extra+`}`,
			edge("in", "q", "svc", "q")))
	}
	for _, kind := range []string{"organism", "repeat", "each"} {
		t.Run(kind, func(t *testing.T) {
			m := viaCells(kind)
			args := `{"in":{"q":"hi"}}`
			if kind == "each" {
				args = `{"in":{"q":["a","b"]}}`
			}
			st := store.NewMemStore()
			rec := runAndVerify(t, m, args, &Host{Store: st, Transports: map[string]string{"far": dir}})
			if rec["outcome"] != "complete" || cell(t, rec, "svc")["via"] != "far" {
				t.Fatalf("via: %s %s", rec["outcome"], enc(cell(t, rec, "svc")))
			}
			// The closure is now local: the next run never consults the
			// transport (a broken one would fail) and records no via.
			rec = runAndVerify(t, m, args, &Host{Store: st, Transports: map[string]string{"far": t.TempDir()}})
			if _, ok := cell(t, rec, "svc")["via"]; ok {
				t.Fatal("a local hit must not record via")
			}
		})
	}
	m := viaCells("organism")
	args := obj(t, `{"in":{"q":"hi"}}`)
	fails := []struct {
		name string
		host *Host
		code string
	}{
		{"missing transport", &Host{}, "STORE_MISS"},
		{"missing bundle", &Host{Transports: map[string]string{"far": t.TempDir()}}, "STORE_MISS"},
		{"unsupported scheme", &Host{Transports: map[string]string{"far": "ftp://x/y"}}, "EFFECT_UNBOUND"},
	}
	tampered := t.TempDir()
	hex, _ := canon.DigestHex(child.Digest)
	if err := os.WriteFile(filepath.Join(tampered, hex+".bundle.json"), []byte(strings.Replace(string(data), `"name":"E"`, `"name":"X"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	fails = append(fails, struct {
		name string
		host *Host
		code string
	}{"tampered bundle", &Host{Transports: map[string]string{"far": tampered}}, "DIGEST_MISMATCH"})
	// A bundle rooted elsewhere, served under the child's name.
	other := mustManifest(t, triageJSON)
	otherDir, otherData := bundleDir(t, other)
	wrong := t.TempDir()
	if err := os.WriteFile(filepath.Join(wrong, hex+".bundle.json"), otherData, 0o644); err != nil {
		t.Fatal(err)
	}
	_ = otherDir
	fails = append(fails, struct {
		name string
		host *Host
		code string
	}{"wrong root", &Host{Transports: map[string]string{"far": wrong}}, "DIGEST_MISMATCH"})
	for _, c := range fails {
		t.Run(c.name, func(t *testing.T) {
			c.host.Store = store.NewMemStore()
			_, err := Run(m, args, c.host)
			if fault.CodeOf(err) != c.code {
				t.Fatalf("want %s, got %v", c.code, err)
			}
			if ok, _ := c.host.Store.Has(store.Manifests, child.Digest); ok {
				t.Fatal("a rejected bundle must install nothing it could not verify")
			}
		})
	}
	t.Run("http", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/bundles/"+hex+".bundle.json" {
				_, _ = w.Write(data)
				return
			}
			http.NotFound(w, r)
		}))
		defer srv.Close()
		st := store.NewMemStore()
		rec := runAndVerify(t, m, `{"in":{"q":"hi"}}`, &Host{Store: st, Transports: map[string]string{"far": srv.URL + "/bundles"}})
		if cell(t, rec, "svc")["via"] != "far" {
			t.Fatal("http transport must record via")
		}
		// Configured sources override specs by name.
		src, _ := bundle.NewSource(srv.URL+"/missing", 0)
		_, err := Run(m, args, &Host{Store: store.NewMemStore(), Transports: map[string]string{"far": srv.URL + "/bundles"},
			Sources: bundle.Transports{"far": src}})
		if fault.CodeOf(err) != "STORE_MISS" {
			t.Fatalf("override: %v", err)
		}
	})
	t.Run("verify uses no transports", func(t *testing.T) {
		st := store.NewMemStore()
		rec := runAndVerify(t, m, `{"in":{"q":"hi"}}`, &Host{Store: st, Transports: map[string]string{"far": dir}})
		// Against a store without the closure, the replay cannot fetch it.
		_, err := Verify(rec, m, VerifyOptions{Store: store.NewMemStore()})
		if fault.CodeOf(err) != "STORE_MISS" {
			t.Fatalf("verify fetched over a transport? %v", err)
		}
	})
}

// A child no transport serves stops admission: Run's error prints the
// failure as "CODE: message" under its code. A spawned manifest embedding
// it fails the spawn cell with the message alone, as any cell failure.
func TestFetchFailureText(t *testing.T) {
	t.Parallel()
	child := mustManifest(t, echoChild)
	embed := organism("far-organism", `{"id":"in","kind":"input","outputs":{"q":"text"}},{"id":"svc","kind":"organism","manifest":"`+child.Digest+`","via":"far"}`,
		edge("in", "q", "svc", "q"))
	_, err := Run(mustManifest(t, embed), obj(t, `{"in":{"q":"hi"}}`), &Host{Store: store.NewMemStore()})
	if fault.CodeOf(err) != "STORE_MISS" || err.Error() != "STORE_MISS: transport far is not configured" {
		t.Fatalf("admission: %q (code %q)", err, fault.CodeOf(err))
	}
	spawner := mustManifest(t, organism("spawner",
		`{"id":"in","kind":"input","outputs":{"q":"text"}},
		 {"id":"writer","kind":"agent","prompt":"p","inputs":{"q":"text"},"output":{"kind":"json","schema":{"type":"object"}}},
		 {"id":"run","kind":"spawn"}`,
		edge("in", "q", "writer", "q")+","+edge("writer", "out", "run", "manifest")))
	rec, err := Run(spawner, obj(t, `{"in":{"q":"x"}}`), scriptedHost(t, store.NewMemStore(), `{"writer":`+embed+`}`))
	if err != nil {
		t.Fatal(err)
	}
	want(t, "spawn failure", cell(t, rec, "run")["failure"], `{"code":"STORE_MISS","message":"transport far is not configured"}`)
}
