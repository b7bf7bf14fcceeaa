package vm

import (
	"testing"

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
