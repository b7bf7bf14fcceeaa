package artifact_test

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/algal-assay/assay/ci/artifact"
	"github.com/algal-assay/assay/ci/prcheck"
	"github.com/algal-assay/assay/engine/fault"
)

// build runs one bench workload of the repository's suites in a copied
// tree and writes an artifact with that run as both sides.
func build(t *testing.T) (art string, src artifact.Source) {
	t.Helper()
	root := t.TempDir()
	tree := filepath.Join(root, "tree")
	for _, d := range []string{"suites", "fixtures"} {
		if err := os.CopyFS(filepath.Join(tree, d), os.DirFS(filepath.Join("..", "..", d))); err != nil {
			t.Fatal(err)
		}
	}
	commit := commitTree(t, tree)
	src = artifact.Source{Runs: filepath.Join(root, "runs"), Store: filepath.Join(root, "store"), Tree: tree, Commit: commit}
	problems, err := prcheck.RunTree(context.Background(), tree, []string{"suites/invoice-extraction.bench.yaml"}, src.Runs, src.Store, 2, io.Discard)
	if err != nil || len(problems) > 0 {
		t.Fatalf("run: %v %v", err, problems)
	}
	// An object no run cites must not travel.
	if err := os.MkdirAll(filepath.Join(src.Store, "values"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src.Store, "values", strings.Repeat("0", 64)+".json"), []byte("1"), 0o644); err != nil {
		t.Fatal(err)
	}
	art = filepath.Join(root, "art")
	if err := artifact.Write(context.Background(), art, src, src, []string{"suites/invoice-extraction.bench.yaml"}, "", commit); err != nil {
		t.Fatal(err)
	}
	return art, src
}

// commitTree makes tree a git repository with its files in one commit,
// as a checkout the check runs in, and returns the commit.
func commitTree(t *testing.T, tree string) string {
	t.Helper()
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@example.test", "commit", "-qm", "tree"}} {
		if out, err := exec.Command("git", append([]string{"-C", tree}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	out, err := exec.Command("git", "-C", tree, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

func objects(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && !strings.HasPrefix(d.Name(), ".") {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	})
	return out
}

// The artifact carries exactly what verifying it reads: it verifies alone,
// the uncited object stayed behind, and taking any carried object out
// makes it fail.
func TestArtifactCarriesExactlyTheReferencedObjects(t *testing.T) {
	art, src := build(t)
	a, err := artifact.Open(art)
	if err != nil {
		t.Fatal(err)
	}
	c, err := a.Verify(context.Background(), artifact.VerifyOptions{Tree: artifact.GitTree(src.Tree)})
	if err != nil || !c.OK() || len(c.Head.Results) != 1 {
		t.Fatalf("%v %v %+v", err, c.Failures(art), c)
	}
	carried := objects(t, filepath.Join(art, "head", "store"))
	all := objects(t, src.Store)
	if len(carried) == 0 || len(carried) >= len(all) {
		t.Fatalf("carried %d of %d store files", len(carried), len(all))
	}
	for _, o := range carried {
		if strings.HasPrefix(o, "values/"+strings.Repeat("0", 64)) {
			t.Fatal("an object no run cites was carried")
		}
	}
	// Sampled: the first, a middle and the last object.
	for _, i := range []int{0, len(carried) / 2, len(carried) - 1} {
		p := filepath.Join(art, "head", "store", carried[i])
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
		c, err := a.Verify(context.Background(), artifact.VerifyOptions{Tree: artifact.GitTree(src.Tree)})
		if err != nil {
			t.Fatal(err)
		}
		if c.OK() {
			t.Errorf("without %s the artifact still verifies", carried[i])
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The tree holds the workload and what it reads, not the whole repository.
	tree := objects(t, filepath.Join(art, "head", "tree"))
	joined := strings.Join(tree, "\n")
	for _, want := range []string{"suites/invoice-extraction.bench.yaml", "fixtures/extraction/cases.jsonl"} {
		if !strings.Contains(joined, want) {
			t.Errorf("tree lacks %s:\n%s", want, joined)
		}
	}
	if strings.Contains(joined, "ticket-triage.bench.yaml") || strings.Contains(joined, ".go") {
		t.Errorf("tree holds files no workload of the paths reads:\n%s", joined)
	}
}

func TestOpenRefusesWhatIsNotTheLayout(t *testing.T) {
	art, _ := build(t)
	wantInvalid := func(t *testing.T, what string) {
		t.Helper()
		_, err := artifact.Open(art)
		var f *fault.Error
		if !errors.As(err, &f) || f.Code != artifact.CodeInvalid || !strings.Contains(err.Error(), what) {
			t.Fatalf("err = %v, want %s naming %q", err, artifact.CodeInvalid, what)
		}
	}
	link := filepath.Join(art, "head", "tree", "secret.json")
	if err := os.Symlink("/etc/hostname", link); err != nil {
		t.Fatal(err)
	}
	wantInvalid(t, "is not a regular file")
	os.Remove(link)

	marker := filepath.Join(art, artifact.MarkerFile)
	good, _ := os.ReadFile(marker)
	for _, bad := range []struct{ body, what string }{
		{`{"layout":"other","paths":["suites"]}`, "layout"},
		{`{"layout":"assay.pr-artifact.v1","paths":["../../etc"]}`, "not a relative path"},
		{`{"layout":"assay.pr-artifact.v1","paths":["suites"],"archive":"/abs"}`, "archive"},
		{`{"layout":"assay.pr-artifact.v1","paths":["suites"],"extra":1}`, "unknown member"},
		{`{"layout":"assay.pr-artifact.v1","paths":[]}`, "names no workload path"},
	} {
		if err := os.WriteFile(marker, []byte(bad.body), 0o644); err != nil {
			t.Fatal(err)
		}
		wantInvalid(t, bad.what)
	}
	if err := os.WriteFile(marker, good, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(art, "base", "store")); err != nil {
		t.Fatal(err)
	}
	wantInvalid(t, "has no directory base/store")
}
