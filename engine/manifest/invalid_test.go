package manifest

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
)

// invalidCase is one file of testdata/invalid: a manifest (and optional
// child modules) that admission must reject with want.code, the message
// containing want.contains. Inside the manifest, a string "@name" stands
// for the digest of the module whose key is organism:name.
type invalidCase struct {
	code, contains string
	manifest       any
	modules        []any
}

func loadInvalid(t *testing.T, path string) invalidCase {
	t.Helper()
	v, err := canon.ReadFile(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	doc := v.(map[string]any)
	want := doc["want"].(map[string]any)
	c := invalidCase{code: want["code"].(string), contains: want["contains"].(string), manifest: doc["manifest"]}
	if mods, ok := doc["modules"].([]any); ok {
		c.modules = mods
	}
	return c
}

func substitute(v any, names map[string]string) any {
	switch x := v.(type) {
	case string:
		if d, ok := names[x]; ok {
			return d
		}
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = substitute(e, names)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = substitute(e, names)
		}
		return out
	}
	return v
}

// admit runs the whole admission a CLI check runs: parse, then compile
// against the case's modules.
func admit(manifest any, resolver MapResolver) (*Compiled, error) {
	m, err := ParseValue(manifest)
	if err != nil {
		return nil, err
	}
	return Compile(m, Options{Resolver: resolver})
}

func TestInvalidManifests(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob(filepath.Join("testdata", "invalid", "*.json"))
	if len(files) < 100 {
		t.Fatalf("found %d invalid cases", len(files))
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		t.Run(name, func(t *testing.T) {
			c := loadInvalid(t, f)
			res := MapResolver{}
			names := map[string]string{}
			for _, mv := range c.modules {
				m, err := res.Add(mv)
				if err != nil {
					t.Fatalf("module: %v", err)
				}
				names["@"+strings.TrimPrefix(m.Key, "organism:")] = m.Digest
			}
			_, err := admit(substitute(c.manifest, names), res)
			if err == nil {
				t.Fatalf("admitted; want %s", c.code)
			}
			e, ok := err.(*fault.Error)
			if !ok {
				t.Fatalf("error %T %v has no manifest code", err, err)
			}
			if e.Code != c.code || !strings.Contains(e.Message, c.contains) {
				t.Fatalf("got %s %q\nwant %s containing %q", e.Code, e.Message, c.code, c.contains)
			}
		})
	}
}

// The child modules the table embeds must admit on their own, so a case
// fails for its manifest's defect and not for a broken fixture.
func TestInvalidCaseModulesParse(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob(filepath.Join("testdata", "invalid", "*.json"))
	for _, f := range files {
		c := loadInvalid(t, f)
		for _, mv := range c.modules {
			if _, err := ParseValue(mv); err != nil {
				t.Errorf("%s: module: %v", f, err)
			}
		}
	}
}
