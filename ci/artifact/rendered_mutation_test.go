package artifact_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/algal-assay/assay/ci/artifact"
)

// An ordered JSON document, so a mutation can be written back in the
// exact form the check writes (diff.json's member order, two-space
// indent, no HTML escaping) and differ from it in the one field alone.
type object struct {
	keys []string
	vals map[string]any
}

func parseOrdered(t *testing.T, data []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var value func() any
	value = func() any {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		switch d := tok.(type) {
		case json.Delim:
			if d == '{' {
				o := &object{vals: map[string]any{}}
				for dec.More() {
					k, _ := dec.Token()
					key := k.(string)
					o.keys = append(o.keys, key)
					o.vals[key] = value()
				}
				_, _ = dec.Token()
				return o
			}
			l := []any{}
			for dec.More() {
				l = append(l, value())
			}
			_, _ = dec.Token()
			return l
		default:
			return d
		}
	}
	return value()
}

func encodeOrdered(v any) []byte {
	var b bytes.Buffer
	var enc func(any)
	enc = func(v any) {
		switch t := v.(type) {
		case *object:
			b.WriteString("{")
			for i, k := range t.keys {
				if i > 0 {
					b.WriteString(",")
				}
				enc(k)
				b.WriteString(":")
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
		case string:
			var s bytes.Buffer
			e := json.NewEncoder(&s)
			e.SetEscapeHTML(false)
			_ = e.Encode(t)
			b.Write(bytes.TrimSuffix(s.Bytes(), []byte("\n")))
		case json.Number:
			b.WriteString(t.String())
		case bool:
			b.WriteString(strconv.FormatBool(t))
		case nil:
			b.WriteString("null")
		}
	}
	enc(v)
	var out bytes.Buffer
	_ = json.Indent(&out, b.Bytes(), "", "  ")
	out.WriteString("\n")
	return out.Bytes()
}

func cloneOrdered(v any) any {
	switch t := v.(type) {
	case *object:
		c := &object{keys: slices.Clone(t.keys), vals: map[string]any{}}
		for k, x := range t.vals {
			c.vals[k] = cloneOrdered(x)
		}
		return c
	case []any:
		c := make([]any, len(t))
		for i, x := range t {
			c[i] = cloneOrdered(x)
		}
		return c
	}
	return v
}

// A step is a member name or a list index.
type step struct {
	key   string
	index int
}

func pathText(p []step) string {
	var b strings.Builder
	for _, s := range p {
		if s.key == "" {
			fmt.Fprintf(&b, "[%d]", s.index)
		} else {
			if b.Len() > 0 {
				b.WriteString(".")
			}
			b.WriteString(s.key)
		}
	}
	return b.String()
}

func at(v any, p []step) any {
	for _, s := range p {
		if s.key == "" {
			v = v.([]any)[s.index]
		} else {
			v = v.(*object).vals[s.key]
		}
	}
	return v
}

// replace sets the value at p (non-empty) to f(old), or removes the
// member when f returns removed.
var removed = &struct{}{}

func replace(doc any, p []step, f func(any) any) {
	parent, last := at(doc, p[:len(p)-1]), p[len(p)-1]
	if last.key == "" {
		l := parent.([]any)
		l[last.index] = f(l[last.index])
		return
	}
	o := parent.(*object)
	nv := f(o.vals[last.key])
	if nv == removed {
		delete(o.vals, last.key)
		o.keys = slices.DeleteFunc(o.keys, func(k string) bool { return k == last.key })
		return
	}
	o.vals[last.key] = nv
}

func changedLeaf(v any) any {
	switch t := v.(type) {
	case string:
		return t + "x"
	case json.Number:
		f, _ := t.Float64()
		return json.Number(strconv.FormatFloat(f+0.5, 'f', -1, 64))
	case bool:
		return !t
	default:
		return json.Number("0")
	}
}

// diffMutation is one edit of diff.json and the words the failure must
// carry to name where it is.
type diffMutation struct {
	what, names string
	data        []byte
}

// diffMutations edits diff.json one way at a time, each written in the
// check's own form: every leaf changed, every member removed, a member
// added to every object, the first two entries of every list swapped,
// the first two members of every object swapped, and the whole document
// in compact form.
func diffMutations(t *testing.T, data []byte) []diffMutation {
	doc := parseOrdered(t, data)
	if !bytes.Equal(encodeOrdered(doc), data) {
		t.Fatal("diff.json does not round-trip through the ordered encoder: the mutations would differ in form, not in the field")
	}
	var leaves, members, objects, lists [][]step
	var walk func(v any, p []step)
	walk = func(v any, p []step) {
		switch x := v.(type) {
		case *object:
			objects = append(objects, p)
			for _, k := range x.keys {
				q := append(slices.Clone(p), step{key: k})
				members = append(members, q)
				walk(x.vals[k], q)
			}
		case []any:
			if len(x) > 1 {
				lists = append(lists, p)
			}
			for i, e := range x {
				walk(e, append(slices.Clone(p), step{index: i}))
			}
		default:
			leaves = append(leaves, p)
		}
	}
	walk(doc, nil)
	var out []diffMutation
	emit := func(what, names string, d any) {
		out = append(out, diffMutation{what, names, encodeOrdered(d)})
	}
	for _, p := range leaves {
		c := cloneOrdered(doc)
		replace(c, p, changedLeaf)
		emit("leaf "+pathText(p)+" changed", pathText(p)+" is ", c)
	}
	for _, p := range members {
		c := cloneOrdered(doc)
		replace(c, p, func(any) any { return removed })
		emit("member "+pathText(p)+" removed", pathText(p)+" is missing", c)
	}
	for _, p := range objects {
		c := cloneOrdered(doc)
		o := at(c, p).(*object)
		o.keys, o.vals["forged"] = append(o.keys, "forged"), true
		emit("member "+pathText(append(slices.Clone(p), step{key: "forged"}))+" added", pathText(append(slices.Clone(p), step{key: "forged"}))+" is true, which is not re-derived", c)
	}
	for _, p := range lists {
		c := cloneOrdered(doc)
		l := at(c, p).([]any)
		if bytes.Equal(encodeOrdered(l[0]), encodeOrdered(l[1])) {
			continue
		}
		l[0], l[1] = l[1], l[0]
		emit("list "+pathText(p)+" reordered", pathText(p)+"[0]", c)
	}
	for _, p := range objects {
		c := cloneOrdered(doc)
		o := at(c, p).(*object)
		if len(o.keys) < 2 {
			continue
		}
		o.keys[0], o.keys[1] = o.keys[1], o.keys[0]
		emit("members of "+pathText(p)+" reordered", "in another form", c)
	}
	var compact bytes.Buffer
	_ = json.Compact(&compact, data)
	out = append(out, diffMutation{"compact form", "in another form", append(compact.Bytes(), '\n')})
	return out
}

// Every single-field change of the rendered diff.json (pValue, ci95,
// significant, passRateCI95 and margin among them), every added and
// removed member, reordered lists and members, and every line of
// report.md, comment.md and pr.html changed, removed, swapped, with text
// and HTML appended, fails `ci verify`, naming the file and, for
// diff.json, the JSON path of the field. The evidence is not mutated, so
// the re-derived files are rendered once (Rederive) and each mutation
// held to them (Check), as `ci verify` holds the uploaded files; the
// statistics fields also go the whole way through CheckRendered. Run with
// -v for the figures per kind (docs/ci.md).
func TestRenderedFileMutationsCaught(t *testing.T) {
	t.Parallel()
	art, _ := buildSuites(t)
	ctx := context.Background()
	a, err := artifact.Open(art)
	if err != nil {
		t.Fatal(err)
	}
	want, err := a.Rederive(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range want.Check(art) {
		if !r.OK {
			t.Fatalf("%s does not re-derive before any mutation: %v", r.Path, r.Mismatches)
		}
	}
	tried, caught := map[string]int{}, map[string]int{}
	result := func(name string) (bool, string) {
		r := want.Check(art)[slices.Index(artifact.RenderedFiles, name)]
		return r.OK, strings.Join(r.Mismatches, "; ")
	}
	write := func(p string, data []byte) {
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// diff.json, field by field.
	p := filepath.Join(art, artifact.DiffFile)
	orig := mustRead(t, p)
	statistics := map[string]bool{}
	for _, m := range diffMutations(t, orig) {
		w := strings.Fields(m.what)
		kind := "diff.json " + w[0] + " " + w[len(w)-1]
		if strings.HasPrefix(m.what, "members of") {
			kind = "diff.json members reordered"
		}
		write(p, m.data)
		tried[kind]++
		ok, msg := result(artifact.DiffFile)
		switch {
		case ok:
			t.Errorf("diff.json: %s passes", m.what)
		case !strings.HasPrefix(msg, "diff.json: ") || !strings.Contains(msg, m.names):
			t.Errorf("diff.json: %s: the failure %q does not name %q", m.what, msg, m.names)
		default:
			caught[kind]++
		}
		// The statistics, once each, the whole way: `ci verify`'s own
		// re-derivation from the evidence.
		for _, field := range []string{".change.pValue", ".change.ci95[0]", ".change.significant", ".passRateCI95[1]", ".margin.pValue", ".margin.significant"} {
			if strings.HasPrefix(m.what, "leaf ") && strings.HasSuffix(m.what, field+" changed") && !statistics[field] {
				statistics[field] = true
				rs, err := a.CheckRendered(ctx)
				if err != nil || rs[0].OK || !strings.Contains(rs[0].Mismatches[0], m.names) {
					t.Errorf("ci verify's re-derivation passes %s: %v %+v", m.what, err, rs[0])
				}
				t.Logf("%s: %s", m.what, rs[0].Mismatches[0])
			}
		}
	}
	write(p, orig)
	if len(statistics) != 6 {
		t.Errorf("the statistics fields tried: %v (the artifact's diff lacks some)", statistics)
	}

	// The text files, line by line.
	for _, name := range []string{artifact.ReportFile, artifact.CommentFile, artifact.HTMLFile} {
		p := filepath.Join(art, name)
		orig := mustRead(t, p)
		ls := strings.SplitAfter(string(orig), "\n")
		var ms []mutation
		join := func(what string, l []string) { ms = append(ms, mutation{what, []byte(strings.Join(l, ""))}) }
		for i := range ls {
			if ls[i] == "" {
				continue
			}
			c := slices.Clone(ls)
			c[i] = changeLine(c[i], false)
			join(fmt.Sprintf("line %d changed", i+1), c)
			join(fmt.Sprintf("line %d removed", i+1), slices.Delete(slices.Clone(ls), i, i+1))
			if i+1 < len(ls) && ls[i] != ls[i+1] && ls[i+1] != "" {
				c = slices.Clone(ls)
				c[i], c[i+1] = c[i+1], c[i]
				join(fmt.Sprintf("lines %d and %d swapped", i+1, i+2), c)
			}
		}
		join("FAIL text appended", append(slices.Clone(ls), "\n**FAIL** cheap-single fails\n"))
		join("HTML appended", append(slices.Clone(ls), "<script>document.body.innerHTML='FAIL'</script>\n"))
		if i := bytes.Index(orig, []byte("</body>")); i >= 0 {
			ms = append(ms, mutation{"HTML inserted before </body>", slices.Concat(orig[:i], []byte("<p class=\"fail\">FAIL</p>"), orig[i:])})
		}
		for _, m := range ms {
			if bytes.Equal(m.data, orig) {
				continue
			}
			write(p, m.data)
			tried[name]++
			ok, msg := result(name)
			switch {
			case ok:
				t.Errorf("%s: %s passes", name, m.what)
			case !strings.HasPrefix(msg, name+": "):
				t.Errorf("%s: %s: the failure %q does not name the file", name, m.what, msg)
			default:
				caught[name]++
			}
		}
		write(p, orig)
	}

	// Missing files.
	for _, name := range artifact.RenderedFiles {
		p := filepath.Join(art, name)
		orig := mustRead(t, p)
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
		tried["file removed"]++
		if ok, msg := result(name); !ok && strings.Contains(msg, name+" is missing") {
			caught["file removed"]++
		} else {
			t.Errorf("%s removed: %v %q", name, ok, msg)
		}
		write(p, orig)
	}
	report(t, "rendered", tried, caught)
}
