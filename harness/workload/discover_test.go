package workload

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/fault"
)

func TestLoadAllRefusesDuplicateNames(t *testing.T) {
	t.Parallel()
	a := writeWorkload(t, "a.bench.yaml", goodBench)
	other := strings.Replace(goodBench, "revision: 2", "revision: 3", 1)
	b := filepath.Join(filepath.Dir(a), "b.bench.yaml")
	if err := os.WriteFile(b, []byte("# same name, other inputs\n"+other), 0o644); err != nil {
		t.Fatal(err)
	}
	unique := filepath.Join(filepath.Dir(a), "c.bench.yaml")
	if err := os.WriteFile(unique, []byte(strings.Replace(goodBench, "name: tiny", "name: tiny-two", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, errs := LoadAll([]string{a, b, unique})
	for i, want := range []struct{ self, other string }{{"a.bench.yaml:1:7", "b.bench.yaml:2:7"}, {"b.bench.yaml:2:7", "a.bench.yaml:1:7"}} {
		if ws[i] != nil || errs[i] == nil {
			t.Fatalf("file %d: loaded despite a shared name (err %v)", i, errs[i])
		}
		msg := errs[i].Error()
		if !strings.Contains(msg, want.self+": name: ") || !strings.Contains(msg, want.other) || !strings.Contains(msg, `"tiny"`) {
			t.Errorf("file %d: error %q should point at %s and name %s", i, msg, want.self, want.other)
		}
		if e, ok := errs[i].(*fault.Error); !ok || e.Code != CodeWorkload {
			t.Errorf("file %d: error %T is not a coded workload error", i, errs[i])
		}
	}
	if ws[2] == nil || errs[2] != nil {
		t.Errorf("a uniquely named workload was refused: %v", errs[2])
	}
}

// A missing file (a workload named on the command line, a manifest a
// workload names, an included case file) is answered with the closest
// name in the directory it would be in, spelled as it was written.
func TestMissingFilesSuggestNearbyNames(t *testing.T) {
	t.Parallel()
	p := writeWorkload(t, "tiny.bench.yaml", goodBench)
	dir := filepath.Dir(p)

	_, err := Discover(filepath.Join(dir, "tiny.bench.yml"))
	if e, ok := fault.As(err); !ok || !strings.HasSuffix(e.Message, `no such file or directory (did you mean "`+filepath.Join(dir, "tiny.bench.yaml")+`"?)`) {
		t.Errorf("Discover: %v", err)
	}

	we, _ := loadErr(t, "typo.bench.yaml", strings.Replace(goodBench, "single.algal.json", "singel.algal.json", 1))
	if we.Line != 5 || we.Column != 15 || !strings.HasSuffix(we.Message, `(did you mean "single.algal.json"?)`) {
		t.Errorf("manifest typo: %d:%d %s", we.Line, we.Column, we.Message)
	}

	we, _ = loadErr(t, "far.bench.yaml", strings.Replace(goodBench, "single.algal.json", "other.json", 1))
	if strings.Contains(we.Message, "did you mean") {
		t.Errorf("nothing is close to other.json, yet: %s", we.Message)
	}
}

// A commit's listing gives the workloads a walk of its checkout gives.
func TestDiscoverListedMatchesDiscover(t *testing.T) {
	t.Parallel()
	files := []string{"suites/a.bench.yaml", "suites/b.foundry.yml", "suites/notes.md", "suites/.hidden/c.bench.yaml",
		"suites/testdata/d.bench.yaml", "suites/deep/e.foundry.yaml", "other/f.bench.yaml", "suitesx/g.bench.yaml", "top.bench.yaml"}
	root := t.TempDir()
	for _, f := range files {
		p := filepath.Join(root, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, paths := range [][]string{{"suites"}, {"suites", "top.bench.yaml"}, {"."}, {"suites/a.bench.yaml"}} {
		var roots []string
		for _, p := range paths {
			roots = append(roots, filepath.Join(root, p))
		}
		walked, err := Discover(roots...)
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, w := range walked {
			rel, _ := filepath.Rel(root, w)
			want = append(want, filepath.ToSlash(rel))
		}
		if got := DiscoverListed(paths, files); !slices.Equal(got, want) {
			t.Errorf("%v: listed %v, walked %v", paths, got, want)
		}
	}
}
