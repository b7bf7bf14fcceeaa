package artifact_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/algal-assay/assay/ci/artifact"
	"github.com/algal-assay/assay/ci/prcheck"
	civerify "github.com/algal-assay/assay/ci/verify"
	"github.com/algal-assay/assay/engine/canon"
)

// A mutation is one edit of a file's bytes.
type mutation struct {
	what string
	data []byte
}

// jsonMutations edits a JSON document one way at a time: every leaf
// changed (strings, numbers, booleans, nulls), every member removed,
// a member added at the top and in the first nested object, and two
// list entries swapped, each written back in the canonical form the run
// writes, plus the same document with its members reordered.
func jsonMutations(data []byte) []mutation {
	v, err := canon.Parse(data, 0)
	if err != nil {
		return nil
	}
	var out []mutation
	emit := func(what string, m any) {
		b, err := canon.Encode(m)
		if err == nil {
			out = append(out, mutation{what, append(b, '\n')})
		}
	}
	var leaves, members, lists []string
	var walk func(x any, at string)
	walk = func(x any, at string) {
		switch t := x.(type) {
		case map[string]any:
			for _, k := range canon.SortedKeys(t) {
				members = append(members, at+"/"+k)
				walk(t[k], at+"/"+k)
			}
		case []any:
			if len(t) > 1 {
				lists = append(lists, at)
			}
			for i, e := range t {
				walk(e, fmt.Sprintf("%s/%d", at, i))
			}
		default:
			leaves = append(leaves, at)
		}
	}
	walk(v, "")
	for _, at := range sample(leaves, 10) {
		c := clone(v)
		set(c, at, func(x any) any {
			switch t := x.(type) {
			case string:
				return t + "x"
			case float64:
				return t + 1
			case bool:
				return !t
			default:
				return 0.0
			}
		})
		emit("leaf "+at+" changed", c)
	}
	for _, at := range sample(members, 6) {
		c := clone(v)
		set(c, at, nil) // nil removes
		emit("member "+at+" removed", c)
	}
	c := clone(v)
	if m, ok := c.(map[string]any); ok {
		m["extra"] = "FAIL"
		emit("member /extra added", c)
	}
	for _, at := range sample(members, 200) {
		c := clone(v)
		inner, ok := get(c, at).(map[string]any)
		if ok {
			inner["extra"] = true
			emit("member "+at+"/extra added", c)
			break
		}
	}
	for _, at := range sample(lists, 2) {
		c := clone(v)
		l := get(c, at).([]any)
		l[0], l[1] = l[1], l[0]
		emit("list "+at+" reordered", c)
	}
	// The same members in another order: not the bytes the run writes.
	if m, ok := v.(map[string]any); ok && len(m) > 1 {
		keys := canon.SortedKeys(m)
		var b bytes.Buffer
		b.WriteString("{")
		for i := len(keys) - 1; i >= 0; i-- {
			kb, _ := canon.Encode(keys[i])
			vb, _ := canon.Encode(m[keys[i]])
			b.Write(kb)
			b.WriteString(":")
			b.Write(vb)
			if i > 0 {
				b.WriteString(",")
			}
		}
		b.WriteString("}\n")
		out = append(out, mutation{"members reordered", b.Bytes()})
	}
	return out
}

// textMutations edits a text file (Markdown, HTML, YAML) line by line:
// a line changed, removed, two lines swapped, a line added (FAIL text, an
// unknown key, appended HTML).
func textMutations(data []byte, yaml bool) []mutation {
	lines := strings.SplitAfter(string(data), "\n")
	var out []mutation
	join := func(what string, ls []string) { out = append(out, mutation{what, []byte(strings.Join(ls, ""))}) }
	idx := make([]string, len(lines))
	for i := range lines {
		idx[i] = fmt.Sprint(i)
	}
	for _, s := range sample(idx, 8) {
		i, _ := strconv.Atoi(s)
		if strings.TrimSpace(lines[i]) == "" {
			continue
		}
		ls := slices.Clone(lines)
		ls[i] = changeLine(ls[i], yaml)
		join(fmt.Sprintf("line %d changed", i+1), ls)
		ls = slices.Delete(slices.Clone(lines), i, i+1)
		join(fmt.Sprintf("line %d removed", i+1), ls)
		if i+1 < len(lines) && lines[i] != lines[i+1] {
			ls = slices.Clone(lines)
			ls[i], ls[i+1] = ls[i+1], ls[i]
			join(fmt.Sprintf("lines %d and %d swapped", i+1, i+2), ls)
		}
	}
	if yaml {
		join("unknown key added at the top", append([]string{"extra: 1\n"}, lines...))
		for i, l := range lines {
			if strings.HasPrefix(l, "  - n: ") {
				ls := slices.Insert(slices.Clone(lines), i+1, "    extra: 1\n")
				join("unknown key added to a phase", ls)
				break
			}
		}
		for i, l := range lines {
			if strings.HasPrefix(l, "      - id: ") {
				ls := slices.Insert(slices.Clone(lines), i+1, "        extra: 1\n")
				join("unknown key added to an artifacts row", ls)
				break
			}
		}
		join("comment added", append(slices.Clone(lines), "# edited\n"))
	} else {
		join("FAIL text appended", append(slices.Clone(lines), "\n**FAIL** cheap-single fails\n"))
		join("HTML appended", append(slices.Clone(lines), "<p class=\"fail\">FAIL</p>\n"))
	}
	return out
}

var (
	yamlValue = regexp.MustCompile(`^(\s*-?\s*[a-z_0-9]+: )(.*)$`)
	stampLine = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`)
)

// changeLine changes a line's value: a YAML value as its type allows (a
// timestamp out of order: started_at later, anything else earlier), any
// other line by a character.
func changeLine(l string, yaml bool) string {
	body := strings.TrimRight(l, "\n")
	if m := yamlValue.FindStringSubmatch(body); yaml && m != nil {
		v := strings.Trim(m[2], `"`)
		switch {
		case stampLine.MatchString(v):
			if strings.Contains(m[1], "started_at") {
				return m[1] + "2099-01-01T00:00:00Z\n"
			}
			return m[1] + "2000-01-01T00:00:00Z\n"
		case v == "null":
			return m[1] + `"` + strings.Repeat("e", 40) + `"` + "\n"
		case regexp.MustCompile(`^\d+$`).MatchString(v):
			return m[1] + v + "1\n"
		case v == "complete":
			return m[1] + "failed\n"
		case v == "done":
			return m[1] + "skipped\n"
		}
		return m[1] + v + "x\n"
	}
	if body == "" {
		return "x\n"
	}
	r := []rune(body)
	if r[len(r)/2] == 'x' {
		r[len(r)/2] = 'y'
	} else {
		r[len(r)/2] = 'x'
	}
	return string(r) + "\n"
}

// sample keeps at most n of xs, spread evenly, in order.
func sample(xs []string, n int) []string {
	if len(xs) <= n {
		return xs
	}
	out := make([]string, 0, n)
	for i := range n {
		out = append(out, xs[i*len(xs)/n])
	}
	return out
}

func clone(v any) any {
	b, _ := canon.Encode(v)
	c, _ := canon.Parse(b, 0)
	return c
}

func get(v any, at string) any {
	for _, p := range strings.Split(strings.TrimPrefix(at, "/"), "/") {
		if p == "" {
			continue
		}
		switch t := v.(type) {
		case map[string]any:
			v = t[p]
		case []any:
			i, _ := strconv.Atoi(p)
			v = t[i]
		}
	}
	return v
}

// set replaces the value at at with f(old), or removes it when f is nil.
func set(v any, at string, f func(any) any) {
	parts := strings.Split(strings.TrimPrefix(at, "/"), "/")
	parent := get(v, "/"+strings.Join(parts[:len(parts)-1], "/"))
	last := parts[len(parts)-1]
	switch t := parent.(type) {
	case map[string]any:
		if f == nil {
			delete(t, last)
		} else {
			t[last] = f(t[last])
		}
	case []any:
		i, _ := strconv.Atoi(last)
		if f != nil {
			t[i] = f(t[i])
		}
	}
}

// runFileKind names the kind of a run directory file, for the figures.
func runFileKind(name string) string {
	switch {
	case name == "foundry-run.yml":
		return "foundry-run.yml"
	case name == "_assembly.json":
		return "_assembly.json"
	case name == "config.json":
		return "config.json"
	case strings.HasPrefix(name, "scripted-"):
		return "scripted table"
	case name == "report.json", name == "budget.json":
		return "report.json"
	case strings.HasPrefix(name, "system-"), strings.HasPrefix(name, "candidate-"):
		return "contender copy"
	default:
		return name
	}
}

// Every mutation of every file of every head run directory of a PR-check
// artifact over the repository's suites is caught by the run's
// verification. Run with -v for the figures per kind (docs/ci.md).
func TestRunDirectoryMutationsCaught(t *testing.T) {
	t.Parallel()
	runs, opts := headRuns(t)
	tried, caught := map[string]int{}, map[string]int{}
	if len(runs) != 4 {
		t.Fatalf("head runs: %v", runs)
	}
	for _, run := range runs {
		res, err := civerify.Verify(context.Background(), []string{run}, opts)
		if err != nil || res.Failed() != 0 {
			t.Fatalf("%s does not verify before any mutation: %v %+v", run, err, res)
		}
		entries, _ := os.ReadDir(run)
		for _, e := range entries {
			path := filepath.Join(run, e.Name())
			orig, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var ms []mutation
			switch filepath.Ext(e.Name()) {
			case ".json":
				ms = jsonMutations(orig)
			case ".yml":
				ms = textMutations(orig, true)
			default:
				ms = textMutations(orig, false)
			}
			kind := runFileKind(e.Name())
			for _, m := range ms {
				if bytes.Equal(m.data, orig) {
					continue
				}
				if err := os.WriteFile(path, m.data, 0o644); err != nil {
					t.Fatal(err)
				}
				res, err := civerify.Verify(context.Background(), []string{run}, opts)
				tried[kind]++
				if err == nil && res.Failed() > 0 {
					caught[kind]++
				} else {
					t.Errorf("%s/%s: %s passes (%v)", filepath.Base(run), e.Name(), m.what, err)
				}
			}
			if err := os.WriteFile(path, orig, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	report(t, "run directory", tried, caught)
}

// buildSuites is build over every workload of the repository's suites.
func buildSuites(t *testing.T) (art string, src artifact.Source) {
	t.Helper()
	root := t.TempDir()
	tree := filepath.Join(root, "tree")
	for _, d := range []string{"suites", "fixtures"} {
		if err := os.CopyFS(filepath.Join(tree, d), os.DirFS(filepath.Join("..", "..", d))); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"suites_test.go", "selftest_test.go", "doc.go"} {
		_ = os.Remove(filepath.Join(tree, "suites", f))
	}
	commit := commitTree(t, tree)
	src = artifact.Source{Runs: filepath.Join(root, "runs"), Store: filepath.Join(root, "store"), Tree: tree, Commit: commit}
	problems, err := prcheck.RunTree(context.Background(), tree, []string{"suites"}, src.Runs, src.Store, 2, io.Discard)
	if err != nil || len(problems) > 0 {
		t.Fatalf("run: %v %v", err, problems)
	}
	art = filepath.Join(root, "art")
	writeArtifact(t, art, src, []string{"suites"}, commit)
	return art, src
}

func report(t *testing.T, what string, tried, caught map[string]int) {
	t.Helper()
	kinds := make([]string, 0, len(tried))
	for k := range tried {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		t.Logf("%s | %s | %d | %d", what, k, tried[k], caught[k])
	}
}

// Every mutation of the artifact's own files is caught: artifact.json,
// the tree files (workloads, fixtures) and the store objects make its
// verification fail; the check's renderings (comment.md, report.md,
// diff.json, pr.html) fail `ci verify`'s re-derivation and are never read
// by the poster, so the comment composed from the artifact stays byte for
// byte what it is. Run with -v for
// the figures per kind (docs/ci.md).
func TestArtifactMutationsCaught(t *testing.T) {
	t.Parallel()
	art, src := build(t)
	ctx := context.Background()
	vo := artifact.VerifyOptions{Tree: artifact.GitTree(src.Tree)}
	co := artifact.CommentOptions{Marker: "<!-- assay:pr-check -->", HeadSHA: src.Commit, Tree: vo.Tree}
	pristine, err := artifact.ComposeComment(ctx, art, co)
	if err != nil || !pristine.Verified {
		t.Fatalf("the artifact does not verify before any mutation: %v %+v", err, pristine)
	}
	// As `assay ci verify` does: open, verify both sides, and re-derive
	// the rendered files.
	verifies := func() bool {
		a, err := artifact.Open(art)
		if err != nil {
			return false
		}
		c, err := a.Verify(ctx, vo)
		if err != nil || !c.OK() {
			return false
		}
		rendered, err := a.CheckRendered(ctx)
		if err != nil {
			return false
		}
		for _, r := range rendered {
			if !r.OK {
				return false
			}
		}
		return true
	}
	if !verifies() {
		t.Fatal("the artifact does not verify before any mutation")
	}
	tried, caught := map[string]int{}, map[string]int{}
	try := func(kind, path string, ms []mutation, held func() bool) {
		orig, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			if bytes.Equal(m.data, orig) {
				continue
			}
			if err := os.WriteFile(path, m.data, 0o644); err != nil {
				t.Fatal(err)
			}
			tried[kind]++
			if held() {
				caught[kind]++
			} else {
				t.Errorf("%s: %s passes", path, m.what)
			}
		}
		if err := os.WriteFile(path, orig, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fails := func() bool { return !verifies() }
	try("artifact.json", filepath.Join(art, artifact.MarkerFile), jsonMutations(mustRead(t, filepath.Join(art, artifact.MarkerFile))), fails)
	for _, side := range []string{artifact.Head, artifact.Base} {
		for _, rel := range []string{"suites/invoice-extraction.bench.yaml", "fixtures/extraction/extract-once.algal.json"} {
			p := filepath.Join(art, side, "tree", filepath.FromSlash(rel))
			ms := textMutations(mustRead(t, p), true)
			if strings.HasSuffix(rel, ".json") {
				ms = jsonMutations(mustRead(t, p))
			}
			try("tree file", p, ms, fails)
		}
		objs, _ := filepath.Glob(filepath.Join(art, side, "store", "*", "*.json"))
		for _, p := range sample(objs, 3) {
			try("store object", p, jsonMutations(mustRead(t, p)), fails)
		}
	}
	// The check's renderings: whatever pull-request code writes there,
	// the posted comment is the one composed from the evidence, and
	// `ci verify` fails (rendered_mutation_test.go has every field).
	a, err := artifact.Open(art)
	if err != nil {
		t.Fatal(err)
	}
	want, err := a.Rederive(ctx)
	if err != nil {
		t.Fatal(err)
	}
	unchangedAndCaught := func(name string) func() bool {
		return func() bool {
			c, err := artifact.ComposeComment(ctx, art, co)
			if err != nil || c.Body != pristine.Body {
				return false
			}
			return !want.Check(art)[slices.Index(artifact.RenderedFiles, name)].OK
		}
	}
	for _, name := range artifact.RenderedFiles {
		p := filepath.Join(art, name)
		ms := textMutations(mustRead(t, p), false)
		if name == artifact.DiffFile {
			ms = jsonMutations(mustRead(t, p))
		}
		try(name, p, ms, unchangedAndCaught(name))
	}
	report(t, "artifact", tried, caught)
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// headRuns builds the PR-check artifact over the repository's suites and
// returns its head run directories and the options that verify them as
// the artifact's head side (its commit known).
func headRuns(t *testing.T) ([]string, civerify.Options) {
	t.Helper()
	art, src := buildSuites(t)
	a, err := artifact.Open(art)
	if err != nil {
		t.Fatal(err)
	}
	ev, ws, err := a.Evidence(artifact.Head)
	if err != nil {
		t.Fatal(err)
	}
	opts := civerify.Options{Evidence: ev.Store, StoreDir: ev.StoreDir, Workloads: ws, Tree: a.Side(artifact.Head).Tree, Commit: src.Commit}
	runs, _ := filepath.Glob(filepath.Join(art, "head", "runs", "*", "*"))
	return runs, opts
}
