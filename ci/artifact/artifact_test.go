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
	"github.com/algal-assay/assay/engine/canon"
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
	writeArtifact(t, art, src, []string{"suites/invoice-extraction.bench.yaml"}, commit)
	return art, src
}

// testPresentation is what the tests' artifacts are rendered with.
var testPresentation = artifact.Presentation{BaseLabel: "main 0123456789ab", HeadLabel: "HEAD 89abcdef0123", Command: "assay ci pr --base-ref main", Pointer: "Full report: the job summary."}

// writeArtifact writes src as both sides of an artifact at art, with the
// four files the check renders from it.
func writeArtifact(t *testing.T, art string, src artifact.Source, paths []string, commit string) {
	t.Helper()
	if err := artifact.Write(context.Background(), art, src, src, paths, "", commit, testPresentation); err != nil {
		t.Fatal(err)
	}
	a, err := artifact.Open(art)
	if err != nil {
		t.Fatal(err)
	}
	files, err := a.Rederive(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := artifact.WriteRendered(art, files); err != nil {
		t.Fatal(err)
	}
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
	t.Parallel()
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
	t.Parallel()
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

// Only what the check writes may sit at the artifact's root: any other
// file or directory is a failure naming it, for `ci verify` and the
// poster alike; pr.json and its older form pr-number are the check's and
// must read as a pull request.
func TestArtifactRootHoldsOnlyWhatTheCheckWrites(t *testing.T) {
	t.Parallel()
	art, src := build(t)
	ctx := context.Background()
	root := func() []string {
		t.Helper()
		a, err := artifact.Open(art)
		if err != nil {
			t.Fatal(err)
		}
		c, err := a.Verify(ctx, artifact.VerifyOptions{Tree: artifact.GitTree(src.Tree)})
		if err != nil {
			t.Fatal(err)
		}
		if c.OK() != (len(c.Root) == 0) {
			t.Fatalf("OK %v with root failures %v (and %v)", c.OK(), c.Root, c.Failures(art))
		}
		return c.Root
	}
	if r := root(); len(r) != 0 {
		t.Fatalf("a pristine artifact: %v", r)
	}
	for _, f := range []struct{ name, body string }{{"pr.json", `{"number":3}` + "\n"}, {"pr-number", "3\n"}} {
		if err := os.WriteFile(filepath.Join(art, f.name), []byte(f.body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if r := root(); len(r) != 0 {
		t.Fatalf("pr.json and pr-number: %v", r)
	}
	if err := os.WriteFile(filepath.Join(art, "pr-number"), []byte("4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := root(); len(r) != 1 || !strings.Contains(r[0], "says PR 3 but pr-number says 4") {
		t.Fatalf("pr.json and pr-number disagree: %v", r)
	}
	os.Remove(filepath.Join(art, "pr-number"))
	for _, stray := range []string{"report.html", "runs/", ".hidden"} {
		p := filepath.Join(art, strings.TrimSuffix(stray, "/"))
		if strings.HasSuffix(stray, "/") {
			if err := os.MkdirAll(filepath.Join(p, "x"), 0o755); err != nil {
				t.Fatal(err)
			}
		} else if err := os.WriteFile(p, []byte("<p>Pass</p>"), 0o644); err != nil {
			t.Fatal(err)
		}
		if r := root(); len(r) != 1 || !strings.Contains(r[0], `"`+strings.TrimSuffix(stray, "/")+`" at the artifact's root`) {
			t.Errorf("%s: %v", stray, r)
		}
		if err := os.RemoveAll(p); err != nil {
			t.Fatal(err)
		}
	}
}

// artifact.json's presentation is read strictly: every member present and
// of its type, nothing else, and file links only under an http(s) URL.
func TestOpenRefusesABadPresentation(t *testing.T) {
	t.Parallel()
	art, _ := build(t)
	marker := filepath.Join(art, artifact.MarkerFile)
	good, err := os.ReadFile(marker)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []struct {
		edit func(p map[string]any)
		what string
	}{
		{func(p map[string]any) { p["extra"] = "x" }, `presentation: unknown member "extra"`},
		{func(p map[string]any) { delete(p, "pointer") }, "presentation.pointer: want a string"},
		{func(p map[string]any) { p["head_label"] = 3.0 }, "presentation.head_label: want a string"},
		{func(p map[string]any) { p["problems"] = "none" }, "presentation.problems: want a list of strings"},
		{func(p map[string]any) { p["notes"] = []any{"a", 1.0} }, "presentation.notes[1]: want a string"},
		{func(p map[string]any) { p["allow_empty"] = "yes" }, "presentation.allow_empty: want true or false"},
		{func(p map[string]any) { p["blob_base"] = "javascript:alert(1)//" }, "presentation.blob_base"},
	} {
		v, err := canon.Parse(good, 0)
		if err != nil {
			t.Fatal(err)
		}
		bad.edit(v.(map[string]any)["presentation"].(map[string]any))
		b, _ := canon.Encode(v)
		if err := os.WriteFile(marker, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		var f *fault.Error
		if _, err := artifact.Open(art); !errors.As(err, &f) || f.Code != artifact.CodeInvalid || !strings.Contains(err.Error(), bad.what) {
			t.Errorf("err = %v, want %s naming %q", err, artifact.CodeInvalid, bad.what)
		}
	}
	v, _ := canon.Parse(good, 0)
	delete(v.(map[string]any), "presentation")
	b, _ := canon.Encode(v)
	if err := os.WriteFile(marker, append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := artifact.Open(art); err == nil || !strings.Contains(err.Error(), `member "presentation" is missing`) {
		t.Errorf("without a presentation: %v", err)
	}
}
