package vm

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/algal-assay/assay/engine/effect"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/store"
)

func TestMaxEffectMsAndContextBound(t *testing.T) {
	t.Parallel()
	m := oneAgent(t, "slow", `"budget":{"maxEffectMs":20}`)
	slow := &fixedExec{id: "slow", fn: nil}
	slow.fn = func(effect.Request) (effect.Response, error) {
		time.Sleep(200 * time.Millisecond)
		return effect.Response{Output: "late"}, nil
	}
	rec, err := Run(m, obj(t, `{"in":{"t":"x"}}`), &Host{Store: store.NewMemStore(), Router: effect.NewRouter(ctxExec{slow})})
	if err != nil {
		t.Fatal(err)
	}
	e := effects(rec)[0].(map[string]any)
	if e["error"].(map[string]any)["code"] != "BUDGET_EXHAUSTED" || e["retryable"] != false {
		t.Fatalf("timeout record: %s", enc(e))
	}
	// The bound is enforcement only: the request carries no maxEffectMs.
	if strings.Contains(enc(slow.seen[0]), "maxEffectMs") {
		t.Fatal("maxEffectMs leaked into the request")
	}

	tight := oneAgent(t, "tight", `"budget":{"maxContextBytes":20}`)
	rec = runAndVerify(t, tight, `{"in":{"t":"a long enough input"}}`, scriptedHost(t, store.NewMemStore(), `{"a":"x"}`))
	n := contextBytes(t, `{"inputs":{"t":"a long enough input"},"turn":0}`)
	want(t, "context bound", rec["failure"], `{"code":"BUDGET_EXHAUSTED","message":"context view `+itoa(n)+`B exceeds maxContextBytes 20B","path":"a"}`)
	if len(effects(rec)) != 0 {
		t.Fatal("an over-bound context must not be sent")
	}
}

// ctxExec honours cancellation the way a live executor does.
type ctxExec struct{ *fixedExec }

func (c ctxExec) Execute(ctx context.Context, req effect.Request) (effect.Response, error) {
	// Record the request on the caller's goroutine: the answer may still
	// be computing when the caller has given up and the test reads seen.
	c.seen = append(c.seen, req)
	done := make(chan effect.Response, 1)
	go func() { r, _ := c.fn(req); done <- r }()
	select {
	case r := <-done:
		return r, nil
	case <-ctx.Done():
		return effect.Response{}, ctx.Err()
	}
}

func TestViewContext(t *testing.T) {
	t.Parallel()
	m := mustManifest(t, organism("view",
		`{"id":"in","kind":"input","outputs":{"a":"text","b":"text"}},
		 {"id":"prep","kind":"fn","fn":"uppercase.v1"},
		 {"id":"ag","kind":"agent","prompt":"p","inputs":{"a":"text","b":"text","p":"text"},"output":{"kind":"text"},
		  "view":{"inputs":["a"],"note":"n","cells":[{"cell":"prep","ports":["value"]}],"graph":true}}`,
		edge("in", "a", "prep", "value")+","+edge("in", "a", "ag", "a")+","+edge("in", "b", "ag", "b")+","+edge("prep", "value", "ag", "p")))
	ex := &fixedExec{id: "m", fn: func(effect.Request) (effect.Response, error) { return effect.Response{Output: "ok"}, nil }}
	runAndVerify(t, m, `{"in":{"a":"x","b":"hidden"}}`, &Host{Store: store.NewMemStore(), Router: effect.NewRouter(ex)})
	want(t, "context", ex.seen[0]["context"], `{"inputs":{"a":"x"},"turn":0,"note":"n",
	 "cells":{"prep":{"status":"committed","outputs":{"value":"X"}}},"graph":{"edges":[{"from":"prep.value","to":"ag.p"}]}}`)
}

func TestForeignErrorCodeIsRecordedAsEffectFailed(t *testing.T) {
	t.Parallel()
	m := oneAgent(t, "foreign", "")
	odd := &fixedExec{id: "odd", fn: func(effect.Request) (effect.Response, error) {
		return effect.Response{}, &fault.Error{Code: "QUOTA", Message: "slow down"}
	}}
	rec := runAndVerify(t, m, `{"in":{"t":"x"}}`, &Host{Store: store.NewMemStore(), Router: effect.NewRouter(odd)})
	want(t, "error", effects(rec)[0].(map[string]any)["error"], `{"code":"EFFECT_FAILED","message":"QUOTA: slow down"}`)
}
