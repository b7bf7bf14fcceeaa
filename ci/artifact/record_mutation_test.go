package artifact_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	civerify "github.com/algal-assay/assay/ci/verify"
	"github.com/algal-assay/assay/runrecord"
	"gopkg.in/yaml.v3"
)

// recordMutations edits a run record (foundry-run.yml) every way a field
// can be edited, one at a time, through its YAML tree: every value
// changed as its type allows (each other status, another commit, a null,
// a flipped digit, a re-spelling), every key removed, an unknown key
// added to every mapping, every two neighbouring keys swapped, every two
// neighbouring phases and rows swapped, a phase and a row removed and
// duplicated, and every timestamp put out of order (started_at after
// finished_at, finished_at before started_at, each row's at before
// started_at, after finished_at and before the row above it). A timestamp
// moved within that order is not a mutation: it is what a slower run
// writes (docs/ci.md).
func recordMutations(t *testing.T, data []byte) []mutation {
	t.Helper()
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		t.Fatal(err)
	}
	encode := func(n *yaml.Node) []byte {
		var b bytes.Buffer
		enc := yaml.NewEncoder(&b)
		enc.SetIndent(2)
		if err := enc.Encode(n); err != nil {
			t.Fatal(err)
		}
		if err := enc.Close(); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	// Re-encoding the untouched tree gives the file back, so a mutation
	// differs from it by its edit alone.
	if got := encode(&root); !bytes.Equal(got, data) {
		t.Fatalf("the record does not re-encode to itself:\n%s\n---\n%s", data, got)
	}
	var out []mutation
	// edit applies f to a copy of the tree; the path names the field.
	edit := func(what string, f func(top *yaml.Node)) {
		c := deepCopy(&root)
		f(c.Content[0])
		out = append(out, mutation{what, encode(c)})
	}

	top := root.Content[0]
	started := mustStamp(t, value(top, "started_at"))
	finished := mustStamp(t, value(top, "finished_at"))
	stamp := func(tm time.Time) string { return tm.UTC().Format(time.RFC3339) }

	// Every mapping of the record, by path, in document order.
	type mapAt struct {
		path string
		get  func(top *yaml.Node) *yaml.Node
	}
	maps := []mapAt{{"", func(top *yaml.Node) *yaml.Node { return top }}}
	phases := value(top, "phases")
	for i, p := range phases.Content {
		maps = append(maps, mapAt{fmt.Sprintf("phases[%d]", i), func(top *yaml.Node) *yaml.Node { return value(top, "phases").Content[i] }})
		if rows := value(p, "artifacts"); rows != nil {
			for j := range rows.Content {
				maps = append(maps, mapAt{fmt.Sprintf("phases[%d].artifacts[%d]", i, j), func(top *yaml.Node) *yaml.Node {
					return value(value(top, "phases").Content[i], "artifacts").Content[j]
				}})
			}
		}
	}
	files := map[string]bool{}
	for _, p := range phases.Content {
		if rows := value(p, "artifacts"); rows != nil {
			for _, r := range rows.Content {
				files[value(r, "file").Value] = true
			}
		}
	}

	for _, m := range maps {
		orig := m.get(top)
		field := func(k string) string {
			if m.path == "" {
				return k
			}
			return m.path + "." + k
		}
		for ki := 0; ki+1 < len(orig.Content); ki += 2 {
			key, val := orig.Content[ki].Value, orig.Content[ki+1]
			set := func(what string, f func(v *yaml.Node)) {
				edit(field(key)+" "+what, func(top *yaml.Node) { f(m.get(top).Content[ki+1]) })
			}
			// Single fields changed as their type allows.
			for _, v := range changedValues(key, val, files, started, finished, stamp) {
				set(v.what, func(n *yaml.Node) { *n = *v.node })
			}
			// Removed.
			edit(field(key)+" removed", func(top *yaml.Node) {
				n := m.get(top)
				n.Content = slices.Delete(n.Content, ki, ki+2)
			})
			// Swapped with the next key.
			if ki+3 < len(orig.Content) {
				edit(fmt.Sprintf("%s and %s swapped", field(key), orig.Content[ki+2].Value), func(top *yaml.Node) {
					n := m.get(top)
					n.Content[ki], n.Content[ki+1], n.Content[ki+2], n.Content[ki+3] = n.Content[ki+2], n.Content[ki+3], n.Content[ki], n.Content[ki+1]
				})
			}
		}
		// An unknown key, and the record's own keys in another spelling.
		edit(field("extra")+" added", func(top *yaml.Node) {
			n := m.get(top)
			n.Content = append(n.Content, str("extra"), str("FAIL"))
		})
		if m.path == "" {
			for _, v := range []string{"true", "false"} {
				edit("foundry_modified: "+v+" added", func(top *yaml.Node) {
					i := slices.IndexFunc(top.Content, func(n *yaml.Node) bool { return n.Value == "foundry_head" })
					top.Content = slices.Insert(top.Content, i+2, str("foundry_modified"), &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: v})
				})
			}
		}
		if strings.HasPrefix(m.path, "phases[") && !strings.Contains(m.path, ".") {
			edit(field("n")+" spelled phase", func(top *yaml.Node) { m.get(top).Content[0].Value = "phase" })
			edit(field("phase")+" added beside n", func(top *yaml.Node) {
				n := m.get(top)
				n.Content = slices.Insert(n.Content, 2, str("phase"), &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: n.Content[1].Value})
			})
		}
	}

	// Entries reordered, removed and duplicated.
	for i := range phases.Content {
		if i+1 < len(phases.Content) {
			edit(fmt.Sprintf("phases[%d] and [%d] swapped", i, i+1), func(top *yaml.Node) {
				ps := value(top, "phases").Content
				ps[i], ps[i+1] = ps[i+1], ps[i]
			})
		}
		edit(fmt.Sprintf("phases[%d] removed", i), func(top *yaml.Node) {
			ps := value(top, "phases")
			ps.Content = slices.Delete(ps.Content, i, i+1)
		})
		rows := value(phases.Content[i], "artifacts")
		if rows == nil {
			continue
		}
		for j := range rows.Content {
			if j+1 < len(rows.Content) {
				edit(fmt.Sprintf("phases[%d].artifacts[%d] and [%d] swapped", i, j, j+1), func(top *yaml.Node) {
					rs := value(value(top, "phases").Content[i], "artifacts").Content
					rs[j], rs[j+1] = rs[j+1], rs[j]
				})
			}
			edit(fmt.Sprintf("phases[%d].artifacts[%d] removed", i, j), func(top *yaml.Node) {
				rs := value(value(top, "phases").Content[i], "artifacts")
				rs.Content = slices.Delete(rs.Content, j, j+1)
			})
			edit(fmt.Sprintf("phases[%d].artifacts[%d] duplicated", i, j), func(top *yaml.Node) {
				rs := value(value(top, "phases").Content[i], "artifacts")
				rs.Content = slices.Insert(rs.Content, j+1, deepCopy(rs.Content[j]))
			})
			// Before the row above it, yet not before started_at.
			if j > 0 {
				above := mustStamp(t, value(rows.Content[j-1], "at"))
				if at := above.Add(-time.Second); !at.Before(started) {
					edit(fmt.Sprintf("phases[%d].artifacts[%d].at before the row above", i, j), func(top *yaml.Node) {
						*value(value(value(top, "phases").Content[i], "artifacts").Content[j], "at") = *stampNode(stamp(at))
					})
				}
			}
		}
		edit(fmt.Sprintf("phases[%d].artifacts in flow style", i), func(top *yaml.Node) {
			value(value(top, "phases").Content[i], "artifacts").Style = yaml.FlowStyle
		})
	}
	edit("phases[last] duplicated as the next phase", func(top *yaml.Node) {
		ps := value(top, "phases")
		c := deepCopy(ps.Content[len(ps.Content)-1])
		n := value(c, "n")
		i, _ := strconv.Atoi(n.Value)
		n.Value = strconv.Itoa(i + 1)
		ps.Content = append(ps.Content, c)
	})
	edit("comment added", func(top *yaml.Node) { top.HeadComment = "edited" })
	return out
}

// valueEdit is one changed value of a field.
type valueEdit struct {
	what string
	node *yaml.Node
}

// changedValues are the values a field of a run record is changed to, one
// at a time: each other allowed value where the field has a set, another
// of the right type otherwise, a null, the same value re-spelled, and for
// a timestamp each place out of order.
func changedValues(key string, v *yaml.Node, files map[string]bool, started, finished time.Time, stamp func(time.Time) string) []valueEdit {
	var out []valueEdit
	add := func(what string, n *yaml.Node) { out = append(out, valueEdit{what, n}) }
	null := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}
	if v.Kind != yaml.ScalarNode {
		add("set to null", null)
		add("set to a string", str("x"))
		return out
	}
	switch {
	case key == "status":
		for _, s := range []string{runrecord.RunRunning, runrecord.RunComplete, runrecord.RunFailed, runrecord.RunCancelled, runrecord.PhasePending, runrecord.PhaseDone, runrecord.PhaseSkipped} {
			if s != v.Value {
				add("set to "+s, str(s))
			}
		}
	case key == "kind":
		for _, k := range []string{runrecord.KindStep, runrecord.KindLoop, runrecord.KindBranch} {
			if k != v.Value {
				add("set to "+k, str(k))
			}
		}
	case key == "selected":
		for _, s := range []string{"files", "generator"} {
			if s != v.Value {
				add("set to "+s, str(s))
			}
		}
	case key == "file":
		for f := range files {
			if f != v.Value {
				add("set to another file of the run ("+f+")", str(f))
				break
			}
		}
		add("set to ../"+v.Value, str("../"+v.Value))
	case key == "assembly_sha256" || key == "foundry_head":
		b := []byte(v.Value)
		if b[0] == '0' {
			b[0] = '1'
		} else {
			b[0] = '0'
		}
		add("one digit changed", quotedStr(string(b)))
		add("unquoted", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v.Value})
		add("upper-cased", quotedStr(strings.ToUpper(v.Value)))
	case v.Tag == "!!timestamp":
		switch key {
		case "started_at":
			add("after finished_at", stampNode(stamp(finished.Add(time.Hour))))
		case "finished_at":
			add("before started_at", stampNode(stamp(started.Add(-time.Hour))))
		default:
			add("before started_at", stampNode(stamp(started.Add(-time.Hour))))
			add("after finished_at", stampNode(stamp(finished.Add(time.Hour))))
		}
		tm, _ := time.Parse(time.RFC3339, v.Value)
		add("re-spelled with an offset", stampNode(tm.In(time.FixedZone("", 3600)).Format(time.RFC3339)))
		add("quoted", quotedStr(v.Value))
	case v.Tag == "!!int":
		i, _ := strconv.Atoi(v.Value)
		add("plus one", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(i + 1)})
		if i > 0 {
			add("minus one", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(i - 1)})
		}
		add("quoted", quotedStr(v.Value))
	default:
		add("changed", str(v.Value+"x"))
		add("upper-cased", str(strings.ToUpper(v.Value)))
	}
	if v.Tag != "!!null" {
		add("set to null", null)
	}
	return out
}

func str(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }

func quotedStr(s string) *yaml.Node {
	n := str(s)
	n.Style = yaml.DoubleQuotedStyle
	return n
}

func stampNode(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!timestamp", Value: s}
}

// value is the value of key in mapping n (nil when absent).
func value(n *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

func deepCopy(n *yaml.Node) *yaml.Node {
	c := *n
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, k := range n.Content {
		c.Content[i] = deepCopy(k)
	}
	return &c
}

func mustStamp(t *testing.T, n *yaml.Node) time.Time {
	t.Helper()
	if n == nil {
		t.Fatal("a timestamp is missing")
	}
	tm, err := time.Parse(time.RFC3339, n.Value)
	if err != nil {
		t.Fatal(err)
	}
	return tm
}

// spreadStamps rewrites run's record with one second between its
// timestamps (started_at, each row's at, finished_at), an order a slower
// run could write, so every row can be moved before the row above it
// without leaving the run's span, whatever the clock said: the figure is
// then the same on every machine. It returns the record's bytes.
func spreadStamps(t *testing.T, run string) []byte {
	t.Helper()
	v, err := runrecord.Read(run, runrecord.Options{})
	if err != nil || v.Record == nil {
		t.Fatalf("%s: %v %+v", run, err, v)
	}
	rec := v.Record
	at := rec.StartedAt
	for i := range rec.Phases {
		for j := range rec.Phases[i].Artifacts {
			at = at.Add(time.Second)
			rec.Phases[i].Artifacts[j].At = at
		}
	}
	at = at.Add(time.Second)
	rec.FinishedAt = &at
	b, err := runrecord.Encode(rec)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(run, runrecord.RecordFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return b
}

// Every mutation of every run record of a PR-check artifact's head is
// caught by ci verify of the artifact's side (its commit known), and the
// failure names the record. Run with -v for the figure (docs/ci.md).
func TestRunRecordMutationsCaught(t *testing.T) {
	t.Parallel()
	runs, opts := headRuns(t)
	if len(runs) != 4 {
		t.Fatalf("head runs: %v", runs)
	}
	tried, caught := 0, 0
	for _, run := range runs {
		path := filepath.Join(run, runrecord.RecordFile)
		orig := spreadStamps(t, run)
		res, err := civerify.Verify(context.Background(), []string{run}, opts)
		if err != nil || res.Failed() != 0 {
			t.Fatalf("%s does not verify before any mutation: %v %+v", run, err, res)
		}
		seen := map[string]bool{}
		for _, m := range recordMutations(t, orig) {
			if bytes.Equal(m.data, orig) {
				t.Errorf("%s: %s leaves the record as it was", filepath.Base(run), m.what)
				continue
			}
			if seen[string(m.data)] {
				continue // the same bytes by another edit
			}
			seen[string(m.data)] = true
			if err := os.WriteFile(path, m.data, 0o644); err != nil {
				t.Fatal(err)
			}
			res, err := civerify.Verify(context.Background(), []string{run}, opts)
			tried++
			switch {
			case err != nil:
				t.Errorf("%s: %s: %v", filepath.Base(run), m.what, err)
			case res.Failed() == 0:
				t.Errorf("%s: %s passes", filepath.Base(run), m.what)
			case !strings.Contains(strings.Join(res.Results[0].Mismatches, "\n"), runrecord.RecordFile):
				t.Errorf("%s: %s fails without naming the record: %v", filepath.Base(run), m.what, res.Results[0].Mismatches)
			default:
				caught++
			}
		}
		if err := os.WriteFile(path, orig, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("run record | foundry-run.yml | %d | %d", tried, caught)
}
