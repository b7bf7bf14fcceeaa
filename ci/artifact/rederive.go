package artifact

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/algal-assay/assay/ci/diff"
	ghci "github.com/algal-assay/assay/ci/github"
	"github.com/algal-assay/assay/ci/verify"
)

// KindRendered labels a rendered root file in a ci/verify report.
const KindRendered = "rendered"

// rootNames is everything the check writes at the artifact's root.
var rootNames = append([]string{MarkerFile, ghci.ArtifactPRJSON, ghci.ArtifactPRNumber, Base, Head}, RenderedFiles...)

// strays lists what sits at the artifact's root besides what the check
// writes, and what is wrong with the pull request it names: a file no
// reader checks could still be downloaded and believed.
func (a *Artifact) strays() []string {
	entries, err := os.ReadDir(a.Dir)
	if err != nil {
		return []string{fmt.Sprintf("the artifact's root cannot be listed: %v", err)}
	}
	var out []string
	for _, e := range entries {
		if m := strayEntry(e); m != "" {
			out = append(out, m)
		}
	}
	if m := a.prProblem(); m != "" {
		out = append(out, m)
	}
	return out
}

// prProblem says what is wrong with the pull request the artifact names
// in pr.json or pr-number ("" when nothing is, or it names none).
func (a *Artifact) prProblem() string {
	_, errJSON := os.Lstat(filepath.Join(a.Dir, ghci.ArtifactPRJSON))
	_, errNum := os.Lstat(filepath.Join(a.Dir, ghci.ArtifactPRNumber))
	if errJSON != nil && errNum != nil {
		return ""
	}
	if _, err := ghci.ReadArtifact(a.Dir); err != nil {
		return "the pull request the artifact names cannot be read: " + err.Error()
	}
	return ""
}

// strayEntry says what is wrong with an entry of the artifact's root: a
// name the check never writes, or a side that is not a directory (or a
// file that is); "" when nothing is.
func strayEntry(e os.DirEntry) string {
	if !slices.Contains(rootNames, e.Name()) {
		what := "file"
		if e.IsDir() {
			what = "directory"
		}
		return fmt.Sprintf("%s at the artifact's root is a %s the check never writes (it writes %s)", strconv.Quote(e.Name()), what, strings.Join(rootNames, ", "))
	}
	if (e.Name() == Base || e.Name() == Head) != e.IsDir() {
		return fmt.Sprintf("%s at the artifact's root is of the wrong type", e.Name())
	}
	return ""
}

// Rederive renders the check's files again, with this binary, from the
// artifact alone: the diff of its evidence (Diff, every verdict
// re-derived) under the labels of its presentation, the check's problems
// and notes added, then Render. The check rendered its own files with the
// same function from the same inputs, so untouched files are these bytes.
func (a *Artifact) Rederive(ctx context.Context) (*Rendered, error) {
	p := a.Presentation
	d, err := a.Diff(ctx, nil, diff.Options{BaseLabel: p.BaseLabel, HeadLabel: p.HeadLabel})
	if err != nil {
		return nil, err
	}
	d.Problems = append(d.Problems, p.Problems...)
	d.Notes = append(d.Notes, p.Notes...)
	RequireWorkloads(d, a.Paths, p.AllowEmpty)
	marker, err := ghci.Marker(ghci.DefaultKey)
	if err != nil {
		return nil, err
	}
	return Render(d, p, marker, "")
}

// CheckRendered holds the rendered files at the artifact's root to what
// Rederive renders (Check).
func (a *Artifact) CheckRendered(ctx context.Context) ([]verify.Result, error) {
	want, err := a.Rederive(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		var out []verify.Result
		for _, name := range RenderedFiles {
			out = append(out, verify.Result{Path: filepath.Join(a.Dir, name), Kind: KindRendered,
				Mismatches: []string{fmt.Sprintf("%s cannot be re-derived from the evidence: %v", name, err)}})
		}
		return out, nil
	}
	return want.Check(a.Dir), nil
}

// Check holds the rendered files in dir to r: one result per file,
// failing with the first difference (for diff.json, the JSON path of the
// first differing field) or because the file is missing.
func (r *Rendered) Check(dir string) []verify.Result {
	var out []verify.Result
	for _, name := range RenderedFiles {
		path := filepath.Join(dir, name)
		res := verify.Result{Path: path, Kind: KindRendered}
		got, err := readRendered(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			res.Mismatches = []string{name + " is missing: the check writes it"}
		case err != nil:
			res.Mismatches = []string{fmt.Sprintf("%s cannot be read: %v", name, err)}
		case !bytes.Equal(got, r.File(name)):
			res.Mismatches = []string{firstDifference(name, got, r.File(name))}
		default:
			sum := sha256.Sum256(got)
			res.OK, res.Digest = true, "sha256:"+hex.EncodeToString(sum[:])
		}
		out = append(out, res)
	}
	return out
}

// readRendered reads a rendered file, refusing anything but a regular
// file and anything larger than a rendering can be.
func readRendered(path string) ([]byte, error) {
	st, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file (%s)", st.Mode().Type())
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, maxTotalBytes))
}

// firstDifference says where got first differs from want, the bytes
// re-derived: for JSON the path of the first differing value, for text
// the first differing line.
func firstDifference(name string, got, want []byte) string {
	if strings.HasSuffix(name, ".json") {
		return name + ": " + jsonDifference(got, want)
	}
	return name + ": " + textDifference(got, want)
}

func jsonDifference(got, want []byte) string {
	g, err := decodeJSON(got)
	if err != nil {
		return "not JSON (" + err.Error() + "); re-derived " + strconv.Itoa(len(want)) + " bytes"
	}
	w, err := decodeJSON(want)
	if err != nil {
		return "the re-derived document is not JSON: " + err.Error()
	}
	if msg := valueDifference("", g, w); msg != "" {
		return msg
	}
	return fmt.Sprintf("the values re-derived, in another form than the check writes (first differing byte at offset %d)", commonPrefix(got, want))
}

// object is a JSON object with its members in document order, so the
// first difference is the first in the file.
type object struct {
	keys []string
	vals map[string]any
}

// decodeJSON decodes one JSON value, objects as *object, numbers as
// json.Number (their text, as written).
func decodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	d := decoder{dec}
	v, err := d.value(0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("more than one value")
	}
	return v, nil
}

// decoder reads JSON values token by token.
type decoder struct{ *json.Decoder }

// value reads one value at the given nesting depth.
func (d decoder) value(depth int) (any, error) {
	if depth > 10_000 {
		return nil, errors.New("nested too deeply")
	}
	tok, err := d.Token()
	if err != nil {
		return nil, err
	}
	delim, ok := tok.(json.Delim)
	if !ok {
		return tok, nil
	}
	if delim == '[' {
		return d.list(depth)
	}
	return d.object(depth)
}

// list reads a list's entries and its closing bracket.
func (d decoder) list(depth int) (any, error) {
	l := []any{}
	for d.More() {
		v, err := d.value(depth + 1)
		if err != nil {
			return nil, err
		}
		l = append(l, v)
	}
	_, err := d.Token()
	return l, err
}

// object reads an object's members, each once, and its closing brace.
func (d decoder) object(depth int) (any, error) {
	o := &object{vals: map[string]any{}}
	for d.More() {
		k, err := d.Token()
		if err != nil {
			return nil, err
		}
		key, _ := k.(string)
		v, err := d.value(depth + 1)
		if err != nil {
			return nil, err
		}
		if _, dup := o.vals[key]; dup {
			return nil, fmt.Errorf("member %q twice", key)
		}
		o.keys = append(o.keys, key)
		o.vals[key] = v
	}
	_, err := d.Token()
	return o, err
}

// valueDifference is "" when g equals w, else the first difference in the
// re-derived document's order.
func valueDifference(at string, g, w any) string {
	name := at
	if name == "" {
		name = "the document"
	}
	switch wt := w.(type) {
	case *object:
		gt, ok := g.(*object)
		if !ok {
			return fmt.Sprintf("%s is %s, re-derived an object", name, show(g))
		}
		return objectDifference(at, gt, wt)
	case []any:
		gt, ok := g.([]any)
		if !ok {
			return fmt.Sprintf("%s is %s, re-derived a list", name, show(g))
		}
		return listDifference(at, name, gt, wt)
	}
	if !sameLeaf(g, w) {
		return fmt.Sprintf("%s is %s, re-derived %s", name, show(g), show(w))
	}
	return ""
}

// objectDifference is valueDifference of two objects: the re-derived
// members in order, then a member only the file has.
func objectDifference(at string, g, w *object) string {
	for _, k := range w.keys {
		gv, ok := g.vals[k]
		if !ok {
			return fmt.Sprintf("%s is missing, re-derived %s", member(at, k), show(w.vals[k]))
		}
		if msg := valueDifference(member(at, k), gv, w.vals[k]); msg != "" {
			return msg
		}
	}
	for _, k := range g.keys {
		if _, ok := w.vals[k]; !ok {
			return fmt.Sprintf("%s is %s, which is not re-derived (no such member)", member(at, k), show(g.vals[k]))
		}
	}
	return ""
}

// listDifference is valueDifference of two lists: the entries both have
// in order, then their lengths.
func listDifference(at, name string, g, w []any) string {
	for i := range min(len(g), len(w)) {
		if msg := valueDifference(fmt.Sprintf("%s[%d]", at, i), g[i], w[i]); msg != "" {
			return msg
		}
	}
	if len(g) != len(w) {
		return fmt.Sprintf("%s has %d entries, re-derived %d", name, len(g), len(w))
	}
	return ""
}

func sameLeaf(g, w any) bool {
	gb, err1 := json.Marshal(g)
	wb, err2 := json.Marshal(w)
	return err1 == nil && err2 == nil && bytes.Equal(gb, wb) && fmt.Sprintf("%T", g) == fmt.Sprintf("%T", w)
}

func member(at, k string) string {
	if at == "" {
		return k
	}
	return at + "." + k
}

// show renders a JSON value short, on one line.
func show(v any) string {
	var b strings.Builder
	var enc func(v any)
	enc = func(v any) {
		switch t := v.(type) {
		case *object:
			b.WriteString("{")
			for i, k := range t.keys {
				if i > 0 {
					b.WriteString(",")
				}
				b.WriteString(strconv.Quote(k) + ":")
				enc(t.vals[k])
			}
			b.WriteString("}")
		case []any:
			b.WriteString("[")
			for i, e := range t {
				if i > 0 {
					b.WriteString(",")
				}
				enc(e)
			}
			b.WriteString("]")
		default:
			j, _ := json.Marshal(t)
			b.Write(j)
		}
	}
	enc(v)
	return clip(b.String())
}

func clip(s string) string {
	const limit = 80
	if utf8.RuneCountInString(s) <= limit {
		return s
	}
	r := []rune(s)
	return string(r[:limit]) + "…"
}

// around clips two differing lines to where they first differ: a long
// common start is elided, so the excerpts show the difference.
func around(g, w string) (string, string) {
	gr, wr := []rune(g), []rune(w)
	n := 0
	for n < len(gr) && n < len(wr) && gr[n] == wr[n] {
		n++
	}
	if n <= 40 {
		return clip(g), clip(w)
	}
	from := n - 20
	return "…" + clip(string(gr[from:])), "…" + clip(string(wr[from:]))
}

func commonPrefix(a, b []byte) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

func textDifference(got, want []byte) string {
	gl, wl := lines(got), lines(want)
	for i := range min(len(gl), len(wl)) {
		if gl[i] != wl[i] {
			g, w := around(gl[i], wl[i])
			return fmt.Sprintf("line %d is %s, re-derived %s", i+1, strconv.Quote(g), strconv.Quote(w))
		}
	}
	if len(gl) > len(wl) {
		return fmt.Sprintf("line %d, %s, is not re-derived (the re-derived file ends before it)", len(wl)+1, strconv.Quote(clip(gl[len(wl)])))
	}
	return fmt.Sprintf("ends at line %d; re-derived goes on with %s", len(gl), strconv.Quote(clip(wl[len(gl)])))
}

// lines splits b after each line break; a final break ends the last line
// rather than starting an empty one.
func lines(b []byte) []string {
	l := strings.SplitAfter(string(b), "\n")
	if len(l) > 0 && l[len(l)-1] == "" {
		l = l[:len(l)-1]
	}
	return l
}
