package vm

import (
	"fmt"
	"runtime"
	"testing"
	"weak"

	"github.com/algal-assay/assay/engine/effect"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/manifest"
	"github.com/algal-assay/assay/engine/receipt"
	"github.com/algal-assay/assay/engine/store"
)

func TestEventLogBound(t *testing.T) {
	t.Parallel()
	m := oneAgent(t, "loop", `"retry":{"attempts":8}`)
	rec := runAndVerify(t, m, `{"in":{"t":"x"}}`, scriptedHost(t, store.NewMemStore(), `{"a":[1,2,3,"ok"]}`))
	if len(rec["events"].([]any)) != 1+2+4+1 {
		t.Fatalf("events: %s", enc(rec["events"]))
	}
	// The 4097th event is a host fault: it is not appended, and every
	// later event is dropped too.
	r := &runner{events: make([]receipt.Event, 4096)}
	r.event("cell.commit", "x", "", "")
	r.event("run.end", "", "", "complete")
	if r.abort == nil || r.abort.Code != "BUDGET_EXHAUSTED" || r.abort.Message != "receipt event count exceeds 4096" {
		t.Fatalf("a 4097th event must abort the run: %v", r.abort)
	}
	if len(r.events) != 4096 {
		t.Fatalf("%d events after the bound", len(r.events))
	}

	// Through a whole execution: the fault comes back as the run's error,
	// with no outcome.
	full := mustManifest(t, organism("two", `{"id":"a","kind":"const","outputs":{"v":{"type":"json","value":1}}},{"id":"b","kind":"fn","fn":"echo.v1"}`, edge("a", "v", "b", "value")))
	r = &runner{host: &Host{Store: store.NewMemStore()}, budgets: full.Budgets, cells: map[string]*receipt.Cell{},
		events: make([]receipt.Event, 4095), sigs: map[string]*cellSig{}, fetched: map[string]string{}}
	outcome, err := r.execute(full, nil)
	if outcome != "" || fault.CodeOf(err) != "BUDGET_EXHAUSTED" || err.Error() != "receipt event count exceeds 4096" {
		t.Fatalf("execute over the event bound: %q, %v", outcome, err)
	}
	if _, ok := r.cells["b"]; ok {
		t.Fatal("no cell may activate after the event bound")
	}
}

// A router error (a host fault from an executor) ends the run with that
// error: no receipt, no further attempt or effect, nothing downstream and
// no on:fail handler runs.
func TestRouterFaultAbortsRun(t *testing.T) {
	t.Parallel()
	m := mustManifest(t, organism("host-fault",
		`{"id":"in","kind":"input","outputs":{"t":"text"}},
		 {"id":"a","kind":"agent","prompt":"p","inputs":{"t":"text"},"output":{"kind":"text"},"retry":{"attempts":4}},
		 {"id":"b","kind":"agent","prompt":"q","inputs":{"m":"json"},"output":{"kind":"text"}}`,
		edge("in", "t", "a", "t")+","+`{"from":{"cell":"a","port":"out"},"to":{"cell":"b","port":"m"},"on":"fail"}`))
	ex := &fixedExec{id: "m", desc: effect.Descriptor{Effects: []string{"agent"}}, fn: func(effect.Request) (effect.Response, error) {
		return effect.Response{}, &fault.Error{Code: fault.IOFailed, Message: "executor lost its store", Host: true}
	}}
	rec, err := Run(m, obj(t, `{"in":{"t":"x"}}`), &Host{Router: effect.NewRouter(ex)})
	if rec != nil || fault.CodeOf(err) != fault.IOFailed || err.Error() != "executor lost its store" {
		t.Fatalf("run after a router fault: %v, %v", rec, err)
	}
	if len(ex.seen) != 1 {
		t.Fatalf("the executor saw %d requests after a host fault, want 1", len(ex.seen))
	}
}

// The admission cache keeps at most its limit, dropping the oldest first.
func TestAdmitCacheBounded(t *testing.T) {
	t.Parallel()
	c := newAdmitCache(4)
	ms := make([]*manifest.Manifest, 6)
	for i := range ms {
		ms[i] = &manifest.Manifest{Digest: fmt.Sprintf("sha256:%064x", i)}
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

// The cache is keyed by manifest digest: every parsed copy of one
// manifest (each workload of a batch parses its own) shares one entry, a
// copy parsed after the first run is already admitted, and the cache
// keeps no parsed manifest alive. A manifest without a digest (not made by
// manifest.Parse) is never cached.
func TestAdmitCacheSharesParsedCopies(t *testing.T) {
	t.Parallel()
	c := newAdmitCache(4)
	src := organism("shared-copies", `{"id":"c","kind":"const","outputs":{"v":{"type":"json","value":1}}}`, ``)
	first, second := mustManifest(t, src), mustManifest(t, src)
	if first == second || first.Digest != second.Digest || first.Digest == "" {
		t.Fatalf("two parses: same value %v, digests %q %q", first == second, first.Digest, second.Digest)
	}
	c.add(first)
	c.add(second)
	if n := c.len(); n != 1 {
		t.Fatalf("two parsed copies of one manifest take %d entries, want 1", n)
	}
	if third := mustManifest(t, src); !c.has(third) {
		t.Error("a copy parsed later must be admitted already")
	}
	other := mustManifest(t, organism("shared-other", `{"id":"c","kind":"const","outputs":{"v":{"type":"json","value":2}}}`, ``))
	if c.has(other) {
		t.Error("a different manifest must not be admitted")
	}
	held := weak.Make(first) // first and second are dead from here on
	runtime.GC()
	if held.Value() != nil {
		t.Error("the cache keeps a parsed manifest alive")
	}
	bare := &manifest.Manifest{}
	c.add(bare)
	if c.has(bare) || c.len() != 1 {
		t.Errorf("a manifest without a digest is cached (%d entries)", c.len())
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
