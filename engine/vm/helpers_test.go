package vm

import (
	"context"
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/effect"
	"github.com/algal-assay/assay/engine/internal/jsontest"
	"github.com/algal-assay/assay/engine/manifest"
	"github.com/algal-assay/assay/engine/store"
)

func parseJSON(t testing.TB, s string) any { t.Helper(); return jsontest.Parse(t, s) }

func mustManifest(t testing.TB, s string) *manifest.Manifest {
	t.Helper()
	m, err := manifest.ParseValue(parseJSON(t, s))
	if err != nil {
		t.Fatalf("manifest: %v", err)
	}
	return m
}

// storedManifest admits s and puts it in st, as a child manifest the
// organism under test embeds.
func storedManifest(t testing.TB, st store.Store, s string) *manifest.Manifest {
	t.Helper()
	m := mustManifest(t, s)
	if _, err := st.Put(store.Manifests, m.Value); err != nil {
		t.Fatal(err)
	}
	return m
}

func obj(t testing.TB, s string) map[string]any { t.Helper(); return jsontest.Object(t, s) }

// scriptedHost is a host with one scripted executor over responses.
func scriptedHost(t testing.TB, st store.Store, responses string) *Host {
	t.Helper()
	sc, err := effect.NewScripted("scripted", obj(t, responses))
	if err != nil {
		t.Fatal(err)
	}
	return &Host{Store: st, Router: effect.NewRouter(sc)}
}

// runAndVerify runs m and checks that the receipt verifies.
func runAndVerify(t testing.TB, m *manifest.Manifest, args string, host *Host) map[string]any {
	t.Helper()
	rec, err := Run(m, obj(t, args), host)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	rep, err := Verify(rec, m, VerifyOptions{Store: host.Store, Fns: host.Fns, Signatures: host.Signatures, ToolSignatures: hostTools(t, host)})
	if err != nil {
		t.Fatalf("verify: %v", err)
	}
	if !rep.OK {
		t.Fatalf("receipt does not verify: %v", rep.Mismatches)
	}
	roundTrip(t, rec, m.Key)
	return rec
}

func cell(t testing.TB, rec map[string]any, path string) map[string]any {
	t.Helper()
	c, ok := rec["cells"].(map[string]any)[path].(map[string]any)
	if !ok {
		t.Fatalf("no cell record %q in %s", path, enc(rec["cells"]))
	}
	return c
}

func enc(v any) string { return jsontest.Text(v) }

func want(t testing.TB, what string, got any, w string) { t.Helper(); jsontest.Want(t, what, got, w) }

func work(rec map[string]any) map[string]any { return rec["work"].(map[string]any) }

func effects(rec map[string]any) []any { return rec["effects"].([]any) }

// fixedExec is a test executor: it answers with a function of the request.
type fixedExec struct {
	id   string
	desc effect.Descriptor
	fn   func(req effect.Request) (effect.Response, error)
	seen []effect.Request
}

func (f *fixedExec) ID() string                  { return f.id }
func (f *fixedExec) Describe() effect.Descriptor { return f.desc }
func (f *fixedExec) Execute(_ context.Context, req effect.Request) (effect.Response, error) {
	f.seen = append(f.seen, req)
	return f.fn(req)
}

func hasEvent(rec map[string]any, kind, path string) bool {
	for _, e := range rec["events"].([]any) {
		m := e.(map[string]any)
		if m["kind"] == kind && (path == "" || m["path"] == path) {
			return true
		}
	}
	return false
}

func contextBytes(t testing.TB, ctx string) int {
	b, err := canon.Canonicalize([]byte(ctx), 0)
	if err != nil {
		t.Fatal(err)
	}
	return len(b)
}

const triageJSON = `{"contract":"algal.organism.v1","key":"organism:triage","name":"Ticket triage",
 "budgets":{"maxSteps":64,"maxAgentCalls":4,"maxWork":100000},
 "interface":{"inputs":{"ticket":{"cell":"ticket","port":"text"}},"outputs":{"summary":{"cell":"result","port":"value"}}},
 "cells":[{"id":"ticket","kind":"input","outputs":{"text":"text"}},
  {"id":"route","kind":"classifier","inputs":{"ticket":"text"},"prompt":"Classify.",
   "output":{"kind":"choice","labels":["bug","feature","question"],"onMiss":"question"},"route":{"preset":"classify-small"}},
  {"id":"as-bug","kind":"fn","fn":"tag.v1"},{"id":"as-feature","kind":"fn","fn":"tag.v1"},
  {"id":"as-question","kind":"fn","fn":"tag.v1"},{"id":"result","kind":"fn","fn":"coalesce.v1"}],
 "edges":[{"from":{"cell":"ticket","port":"text"},"to":{"cell":"route","port":"ticket"}},
  {"from":{"cell":"route","port":"out"},"to":{"cell":"as-bug","port":"tag"},"guard":{"equals":"bug"}},
  {"from":{"cell":"route","port":"out"},"to":{"cell":"as-feature","port":"tag"},"guard":{"equals":"feature"}},
  {"from":{"cell":"route","port":"out"},"to":{"cell":"as-question","port":"tag"},"guard":{"equals":"question"}},
  {"from":{"cell":"ticket","port":"text"},"to":{"cell":"as-bug","port":"value"}},
  {"from":{"cell":"ticket","port":"text"},"to":{"cell":"as-feature","port":"value"}},
  {"from":{"cell":"ticket","port":"text"},"to":{"cell":"as-question","port":"value"}},
  {"from":{"cell":"as-bug","port":"value"},"to":{"cell":"result","port":"a"}},
  {"from":{"cell":"as-feature","port":"value"},"to":{"cell":"result","port":"b"}},
  {"from":{"cell":"as-question","port":"value"},"to":{"cell":"result","port":"c"}}]}`

// roundJSON is one refinement round (an editor drafts, a critic says
// revise or ship): the body repeat cells run.
const roundJSON = `{"contract":"algal.organism.v1","key":"organism:round","name":"R",
 "interface":{"inputs":{"draft":{"cell":"in","port":"draft"}},"outputs":{"draft":{"cell":"editor","port":"out"},"verdict":{"cell":"critic","port":"out"}}},
 "cells":[{"id":"in","kind":"input","outputs":{"draft":"text"}},
  {"id":"editor","kind":"agent","prompt":"p","inputs":{"draft":"text"},"output":{"kind":"text"}},
  {"id":"critic","kind":"classifier","prompt":"p","inputs":{"draft":"text"},"output":{"kind":"choice","labels":["revise","ship"]}}],
 "edges":[{"from":{"cell":"in","port":"draft"},"to":{"cell":"editor","port":"draft"}},
  {"from":{"cell":"editor","port":"out"},"to":{"cell":"critic","port":"draft"}}]}`

// organism builds a manifest from cells and edges JSON fragments.
func organism(key, cells, edges string, extra ...string) string {
	var b strings.Builder
	b.WriteString(`{"contract":"algal.organism.v1","key":"organism:` + key + `","name":"T","cells":[` + cells + `],"edges":[` + edges + `]`)
	for _, e := range extra {
		b.WriteString("," + e)
	}
	b.WriteString("}")
	return b.String()
}

// oneAgent is an organism whose input t feeds one text agent a; fields
// are a's further JSON fields (`"budget":{...}`), or empty.
func oneAgent(t testing.TB, key, fields string) *manifest.Manifest {
	t.Helper()
	a := `{"id":"a","kind":"agent","prompt":"p","inputs":{"t":"text"},"output":{"kind":"text"}`
	if fields != "" {
		a += "," + fields
	}
	return mustManifest(t, organism(key, `{"id":"in","kind":"input","outputs":{"t":"text"}},`+a+"}", edge("in", "t", "a", "t")))
}

func edge(from, fport, to, tport string, rest ...string) string {
	s := `{"from":{"cell":"` + from + `","port":"` + fport + `"},"to":{"cell":"` + to + `","port":"` + tport + `"}`
	for _, r := range rest {
		s += "," + r
	}
	return s + "}"
}

func hostTools(t testing.TB, h *Host) map[string]manifest.Signature {
	m, err := toolSignatures(h)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
