package vm

import (
	"fmt"
	"testing"

	"github.com/algal-assay/assay/engine/manifest"
	"github.com/algal-assay/assay/engine/store"
)

func TestEventLogBound(t *testing.T) {
	m := mustManifest(t, organism("loop",
		`{"id":"in","kind":"input","outputs":{"t":"text"}},
		 {"id":"a","kind":"agent","prompt":"p","inputs":{"t":"text"},"output":{"kind":"text"},"retry":{"attempts":8}}`,
		edge("in", "t", "a", "t")))
	rec := runAndVerify(t, m, `{"in":{"t":"x"}}`, scriptedHost(t, store.NewMemStore(), `{"a":[1,2,3,"ok"]}`))
	if len(rec["events"].([]any)) != 1+2+4+1 {
		t.Fatalf("events: %s", enc(rec["events"]))
	}
	r := &runner{events: make([]any, 4096)}
	defer func() {
		p := recover()
		if a, ok := p.(hostAbort); !ok || a.err.Code != "BUDGET_EXHAUSTED" {
			t.Fatalf("a 4097th event must abort the run: %v", p)
		}
	}()
	r.event("cell.commit", "x", "", "")
}

// The admission cache keeps at most its limit, dropping the oldest first.
func TestAdmitCacheBounded(t *testing.T) {
	c := newAdmitCache(4)
	ms := make([]*manifest.Manifest, 6)
	for i := range ms {
		ms[i] = &manifest.Manifest{}
		c.add(ms[i])
		c.add(ms[i]) // a repeat is not a second entry
	}
	if n := c.len(); n != 4 {
		t.Fatalf("cache holds %d manifests, want 4", n)
	}
	for i, m := range ms {
		if got, want := c.has(m), i >= 2; got != want {
			t.Errorf("manifest %d cached %v, want %v", i, got, want)
		}
	}
}

// Runs fill the process-wide cache only with plain manifests, and many
// distinct manifests never grow it past maxAdmitted.
func TestAdmittedStaysBounded(t *testing.T) {
	withFn := mustManifest(t, organism("host-fn", `{"id":"a","kind":"fn","fn":"host.v1"}`, ``))
	host := &Host{Fns: map[string]Fn{"host.v1": func(map[string]any) (map[string]any, int, error) {
		return map[string]any{"value": 1.0}, 0, nil
	}}, Signatures: map[string]manifest.Signature{"host.v1": {Outputs: []manifest.Port{{Name: "value", Type: manifest.TypeJSON}}, Cost: 1}}}
	if _, err := Run(withFn, nil, host); err != nil {
		t.Fatal(err)
	}
	if admitted.has(withFn) {
		t.Error("a manifest admitted against host functions must not be cached")
	}
	var last *manifest.Manifest
	for i := range maxAdmitted + 20 {
		last = mustManifest(t, organism(fmt.Sprintf("bounded-%d", i), `{"id":"c","kind":"const","outputs":{"v":{"type":"json","value":1}}}`, ``))
		if _, err := Run(last, nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	if n := admitted.len(); n > maxAdmitted {
		t.Fatalf("admission cache holds %d manifests, over %d", n, maxAdmitted)
	}
	if !admitted.has(last) {
		t.Error("the newest plain manifest must be cached")
	}
}
