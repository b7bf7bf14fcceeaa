package manifest

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
)

func upstreamDir(t testing.TB) string {
	dir := os.Getenv("ASSAY_UPSTREAM_DIR")
	if dir == "" {
		t.Skip("ASSAY_UPSTREAM_DIR unset: upstream example parity not checked")
	}
	return dir
}

// upstreamModules admits every top-level example plus the manifests of
// every bundle in bundles/ (what the "bundles" file transport would
// supply). Example cells name their children by upstream digest, so an
// example only compiles when our digest of its child matches upstream's.
func upstreamModules(t *testing.T, examples string) MapResolver {
	t.Helper()
	mods, err := LoadModules(examples)
	if err != nil {
		t.Fatalf("LoadModules: %v", err)
	}
	bundles, _ := filepath.Glob(filepath.Join(examples, "bundles", "*.bundle.json"))
	for _, b := range bundles {
		v, err := canon.ReadFile(b, 64<<20)
		if err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		for _, mv := range v.(map[string]any)["manifests"].(map[string]any) {
			if _, err := mods.Add(mv); err != nil {
				t.Fatalf("%s: %v", b, err)
			}
		}
	}
	return mods
}

func TestUpstreamExamplesAdmit(t *testing.T) {
	t.Parallel()
	examples := filepath.Join(upstreamDir(t), "examples")
	mods := upstreamModules(t, examples)
	files, _ := filepath.Glob(filepath.Join(examples, "*.algal.json"))
	sort.Strings(files)
	if len(files) < 47 {
		t.Fatalf("found %d top-level examples, want at least 47", len(files))
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".algal.json"), func(t *testing.T) {
			m, err := ReadFile(f)
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			if _, err := Compile(m, Options{Resolver: mods}); err != nil {
				t.Fatalf("compile: %v (%s)", err, err.(*fault.Error).Code)
			}
			if !canon.IsDigest(m.Digest) {
				t.Fatalf("digest %q", m.Digest)
			}
		})
	}
}

// Subfolder manifests are not part of the upstream suite; some need host
// tools the suite does not configure. The test reports which admit and
// requires that every rejection is a coded admission error.
func TestUpstreamSubfolderExamples(t *testing.T) {
	t.Parallel()
	examples := filepath.Join(upstreamDir(t), "examples")
	mods := upstreamModules(t, examples)
	var files []string
	for _, root := range []string{examples, filepath.Join(upstreamDir(t), "variants")} {
		_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".algal.json") && filepath.Dir(p) != examples {
				files = append(files, p)
			}
			return nil
		})
	}
	sort.Strings(files)
	for _, f := range files {
		dirMods, err := LoadModules(filepath.Dir(f))
		if err != nil {
			t.Errorf("%s: modules: %v", f, err)
			continue
		}
		for k, v := range mods {
			dirMods[k] = v
		}
		rel, _ := filepath.Rel(upstreamDir(t), f)
		m, err := ReadFile(f)
		if err == nil {
			_, err = Compile(m, Options{Resolver: dirMods})
		}
		if err != nil {
			e, ok := err.(*fault.Error)
			if !ok || e.Code == "" {
				t.Errorf("%s: uncoded rejection %v", rel, err)
			}
			t.Logf("%s: rejected %s: %v", rel, e.Code, err)
			continue
		}
		t.Logf("%s: admits", rel)
	}
}

func TestUpstreamBundleDigests(t *testing.T) {
	t.Parallel()
	examples := filepath.Join(upstreamDir(t), "examples")
	bundles, _ := filepath.Glob(filepath.Join(examples, "bundles", "*.bundle.json"))
	if len(bundles) == 0 {
		t.Fatal("no upstream bundles found")
	}
	for _, b := range bundles {
		v, err := canon.ReadFile(b, 64<<20)
		if err != nil {
			t.Fatal(err)
		}
		bundle := v.(map[string]any)
		root := bundle["root"].(string)
		if filepath.Base(b) != strings.TrimPrefix(root, "sha256:")+".bundle.json" {
			t.Errorf("%s: root %s does not name the file", b, root)
		}
		manifests := bundle["manifests"].(map[string]any)
		if _, ok := manifests[root]; !ok {
			t.Errorf("%s: root %s missing from manifests", b, root)
		}
		for key, mv := range manifests {
			m, err := ParseValue(mv)
			if err != nil {
				t.Fatalf("%s: %s: %v", b, key, err)
			}
			if m.Digest != key {
				t.Errorf("%s: manifest keyed %s normalizes to %s", b, key, m.Digest)
			}
			// The bundle holds the normalized form, so normalizing is the identity.
			raw, _ := canon.Encode(mv)
			if string(raw) != string(m.Canonical) {
				t.Errorf("%s: %s: normalization changed a normalized manifest", b, key)
			}
		}
	}
}
