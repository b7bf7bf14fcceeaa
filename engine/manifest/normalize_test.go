package manifest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/internal/jsontest"
)

func mustParse(t testing.TB, src string) *Manifest {
	t.Helper()
	m, err := Parse([]byte(src))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return m
}

// The remote-inner manifest as an author writes it; upstream's bundle
// names its normalized form sha256:94b94c4f…, so this pins digest parity
// without the upstream checkout.
const remoteInner = `{
  "contract": "algal.organism.v1", "key": "organism:remote-inner", "name": "RemoteInner",
  "cells": [
    {"id": "in", "kind": "input", "outputs": {"q": "text"}},
    {"id": "answer", "kind": "agent", "inputs": {"q": "text"}, "prompt": "Answer the question in one line.", "output": {"kind": "text"}}
  ],
  "edges": [{"from": {"cell": "in", "port": "q"}, "to": {"cell": "answer", "port": "q"}}],
  "interface": {"inputs": {"q": {"cell": "in", "port": "q"}}, "outputs": {"a": {"cell": "answer", "port": "out"}}}
}`

func TestDigestParityRemoteInner(t *testing.T) {
	t.Parallel()
	m := mustParse(t, remoteInner)
	const want = "sha256:94b94c4f1e559cf9c9d9218e9c2dab6deb0ad804d848c3f275f32d1b7a217e6a"
	if m.Digest != want {
		t.Fatalf("digest %s, want %s\n%s", m.Digest, want, m.Canonical)
	}
	if canon.DigestBytes(m.Canonical) != m.Digest {
		t.Fatal("Digest is not the digest of Canonical")
	}
	// Normalizing the normalized form is the identity.
	again, err := ParseValue(m.Value)
	if err != nil || again.Digest != m.Digest {
		t.Fatalf("re-normalize: %v %s", err, again.Digest)
	}
}

func TestNormalizationDefaults(t *testing.T) {
	t.Parallel()
	m := mustParse(t, `{"contract":"algal.organism.v1","key":"organism:n","name":"N",
	 "budgets":{"maxSteps":9},
	 "interface":{"outputs":{}},
	 "cells":[
	  {"id":"in","kind":"input","outputs":{"q":"text","j":{"type":"json","optional":false}}},
	  {"id":"a","kind":"agent","inputs":{},"prompt":"p","output":{"kind":"text"}},
	  {"id":"c","kind":"classifier","inputs":{"q":"text"},"prompt":"p","output":{"kind":"choice","labels":["x","y"]},
	   "view":{"inputs":["q"],"cells":["in",{"cell":"in2","ports":["q"]}]}},
	  {"id":"m","kind":"recall","query":{"contract":"algal.expr.v1","program":"topic"}},
	  {"id":"d","kind":"decide","questions":{"k":{"type":"noul","instructions":"i"}}},
	  {"id":"e","kind":"expr","inputs":{},"expr":{"contract":"algal.expr.v1","program":1},"output":{"kind":"json","schema":{}}}
	 ]}`)
	cases := []struct{ what, got, want string }{
		{"budgets", jsontest.Canonical(t, m.Value["budgets"]), `{"maxAgentCalls":16,"maxContextBytes":65536,"maxDepth":4,"maxOutputBytes":65536,"maxSteps":9,"maxWork":1000000}`},
		{"edges", jsontest.Canonical(t, m.Value["edges"]), `[]`},
		{"interface", jsontest.Canonical(t, m.Value["interface"]), `{"inputs":{},"outputs":{}}`},
		{"input ports", jsontest.Canonical(t, m.Cells[0].Value["outputs"]), `{"j":{"optional":false,"type":"json"},"q":{"type":"text"}}`},
		{"agent", jsontest.Canonical(t, m.Cells[1].Value), `{"id":"a","kind":"agent","output":{"kind":"text"},"prompt":"p","view":{"inputs":"*"}}`},
		{"classifier view", jsontest.Canonical(t, m.Cells[2].Value["view"]), `{"cells":[{"cell":"in"},{"cell":"in2","ports":["q"]}],"inputs":["q"]}`},
		{"recall keeps inputs, no k/embedder", jsontest.Canonical(t, m.Cells[3].Value), `{"id":"m","inputs":{},"kind":"recall","query":{"contract":"algal.expr.v1","program":"topic"}}`},
		{"decide view", jsontest.Canonical(t, m.Cells[4].Value), `{"id":"d","kind":"decide","questions":{"k":{"instructions":"i","type":"noul"}},"view":{"inputs":"*"}}`},
		{"expr drops empty inputs", jsontest.Canonical(t, m.Cells[5].Value), `{"expr":{"contract":"algal.expr.v1","program":1},"id":"e","kind":"expr","output":{"kind":"json","schema":{}}}`},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.what, c.got, c.want)
		}
	}
	if m.Budgets.MaxSteps != 9 || m.Budgets.MaxWork != 1_000_000 {
		t.Errorf("typed budgets %+v", m.Budgets)
	}
	if r := m.Cells[3].Recall; r.EffectiveK() != 8 || r.EffectiveEmbedder() != "local" || r.K != 0 {
		t.Errorf("recall defaults %+v", r)
	}
	if v := m.Cells[2].Agent.View; v.AllInputs || len(v.Cells) != 2 || v.Cells[1].Ports[0] != "q" {
		t.Errorf("typed view %+v", v)
	}
}

// graphSource is a small graph; extra is appended to its edge list.
func graphSource(extra string) string {
	return `{"contract":"algal.organism.v1","key":"organism:g","name":"G",
	 "cells":[
	  {"id":"out","kind":"fn","fn":"tag.v1"},
	  {"id":"route","kind":"classifier","inputs":{"ticket":"text"},"prompt":"p",
	   "output":{"kind":"choice","labels":["bug","feature"],"onMiss":"bug"},"shadow":{"take":"bug"},
	   "retry":{"attempts":3},"route":{"provider":"jev"},"budget":{"maxTurns":2,"maxEffectMs":5}},
	  {"id":"in","kind":"input","outputs":{"ticket":"text"}},
	  {"id":"join","kind":"fn","fn":"join.v1"},
	  {"id":"guard","kind":"fn","fn":"echo.v1"},
	  {"id":"sink","kind":"fn","fn":"echo.v1"}
	 ],
	 "edges":[
	  {"from":{"cell":"in","port":"ticket"},"to":{"cell":"route","port":"ticket"}},
	  {"from":{"cell":"route","port":"out"},"to":{"cell":"out","port":"tag"},"guard":{"equals":"bug"}},
	  {"from":{"cell":"in","port":"ticket"},"to":{"cell":"out","port":"value"}},
	  {"from":{"cell":"route","port":"out"},"to":{"cell":"join","port":"items"}},
	  {"from":{"cell":"in","port":"ticket"},"to":{"cell":"join","port":"items"}},
	  {"from":{"cell":"route","port":"out"},"to":{"cell":"guard","port":"value"},"guard":{"expr":{"contract":"algal.expr.v1","program":["eq",["get","value"],"bug"]}}}` + extra + `
	 ]}`
}

func TestCompiledGraph(t *testing.T) {
	t.Parallel()
	m := mustParse(t, graphSource(`,{"from":{"cell":"route","port":"out"},"to":{"cell":"sink","port":"value"},"on":"fail"}`))
	c, err := Compile(m, Options{})
	if err != nil {
		t.Fatal(err)
	}
	route, _ := m.Cell("route")
	if route.Index != 1 || route.Agent == nil || route.Agent.Retry != 3 || route.Agent.Shadow != "bug" ||
		route.Agent.Route.Provider != "jev" || route.Agent.Budget.MaxTurns != 2 || route.Agent.Output.OnMiss != "bug" {
		t.Fatalf("typed classifier %+v", route.Agent)
	}
	if got := c.Order; len(got) != 6 || got[0] != 2 || got[1] != 1 || got[2] != 0 || got[3] != 3 {
		t.Fatalf("order %v, want [2 1 0 3 4 5]", got)
	}
	e := c.Edges[3]
	if e.Producer.Type != TypeChoice || !e.Consumer.Many || e.Consumer.Type != TypeText || e.FromIndex != 1 || e.ToIndex != 3 {
		t.Fatalf("edge 3 %+v", e)
	}
	if g := c.Edges[1].Guard; g.Kind != GuardLabel || g.Equals != "bug" {
		t.Fatalf("guard %+v", g)
	}
	if g := c.Edges[5].Guard; g.Kind != GuardExpr || g.Expr.Compiled == nil {
		t.Fatalf("expr guard %+v", g)
	}
	if !c.Edges[6].OnFail || c.Edges[6].Consumer.Type != TypeJSON {
		t.Fatalf("fail edge %+v", c.Edges[6])
	}
	if in := c.Inbound[3]; len(in) != 2 || in[0] != 3 || in[1] != 4 {
		t.Fatalf("inbound of join %v", in)
	}
	if out := c.Outbound[2]; len(out) != 3 {
		t.Fatalf("outbound of in %v", out)
	}
	sig, _ := c.Signature("out")
	if p, ok := sig.Input("tag"); !ok || p.Type != TypeText || sig.Cost != 10 {
		t.Fatalf("tag.v1 signature %+v", sig)
	}
	if c.Stats.Instances != 1 || c.Stats.Cells != 6 || c.Stats.Edges != 7 || c.Stats.Bytes != len(m.Canonical) {
		t.Fatalf("stats %+v", c.Stats)
	}

	for _, bad := range []struct{ extra, code string }{
		{`,{"from":{"cell":"route","port":"out"},"to":{"cell":"join","port":"sep"},"on":"fail"}`, fault.TypeMismatch},
		{`,{"from":{"cell":"route","port":"out"},"to":{"cell":"guard","port":"value"},"on":"fail"}`, fault.ManifestInvalid},
		{`,{"from":{"cell":"route","port":"out"},"to":{"cell":"join","port":"items"},"on":"fail"}`, fault.TypeMismatch},
	} {
		if _, err := Compile(mustParse(t, graphSource(bad.extra)), Options{}); err == nil || err.(*fault.Error).Code != bad.code {
			t.Errorf("%s: got %v, want %s", bad.extra, err, bad.code)
		}
	}
}

func TestFileAdmission(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := filepath.Join(dir, "good.algal.json")
	if err := os.WriteFile(good, []byte(remoteInner), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.algal.json")
	if err := os.Symlink(good, link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.algal.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.algal.json")
	if err := os.WriteFile(big, []byte(strings.Replace(remoteInner, `"RemoteInner"`, `"`+strings.Repeat(" ", MaxManifestBytes)+`"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	bom := filepath.Join(dir, "bom.algal.json")
	if err := os.WriteFile(bom, append([]byte{0xEF, 0xBB, 0xBF}, remoteInner...), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.algal.json")
	if err := os.WriteFile(bad, []byte(strings.Replace(remoteInner, "RemoteInner", "Remote\xffInner", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	// Normalization can grow a manifest (port shorthand, defaults); the
	// bound applies to the normalized form too.
	var cells []string
	for i := 0; i < 63; i++ {
		ports := make([]string, 32)
		for j := range ports {
			ports[j] = fmt.Sprintf(`"p%063d":"text"`, j)
		}
		cells = append(cells, fmt.Sprintf(`{"id":"c%d","kind":"input","outputs":{%s}}`, i, strings.Join(ports, ",")))
	}
	head := `{"contract":"algal.organism.v1","key":"organism:g","name":"G","cells":[` + strings.Join(cells, ",") +
		`,{"id":"k","kind":"const","outputs":{"v":{"type":"text","value":"`
	grow := head + strings.Repeat("z", MaxManifestBytes-len(head)-100) + `"}}}]}`

	for _, p := range []string{good, link} {
		if m, err := ReadFile(p); err != nil || m.Digest != "sha256:94b94c4f1e559cf9c9d9218e9c2dab6deb0ad804d848c3f275f32d1b7a217e6a" {
			t.Errorf("%s: %v", p, err)
		}
	}
	for _, c := range []struct{ path, code string }{
		{dir, "IO_FAILED"}, {fifo, "IO_FAILED"}, {big, "BUDGET_EXHAUSTED"}, {bom, "PARSE_FAILED"}, {bad, "PARSE_FAILED"},
	} {
		_, err := ReadFile(c.path)
		if fault.CodeOf(err) != c.code {
			t.Errorf("%s: got %v, want %s", filepath.Base(c.path), err, c.code)
		}
	}
	if len(grow) > MaxManifestBytes {
		t.Fatalf("fixture too large before normalization: %d", len(grow))
	}
	_, err := Parse([]byte(grow))
	if e, ok := err.(*fault.Error); !ok || e.Code != fault.BudgetExhausted || !strings.Contains(e.Message, "normalized") {
		t.Errorf("normalized growth past the bound: %v (raw %d bytes)", err, len(grow))
	}
}
