package vm

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/effect"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/store"
)

func toolsHost(t *testing.T, st store.Store, responses string) *Host {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "lookup.json"), []byte(`{"{\"q\":\"wisp\"}":{"hit":"sprig"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	tools, err := effect.ParseTools(parseJSON(t, `{"lookup.v1":{"signature":{"inputs":{"q":"text"},"outputs":{"hit":"text"},
	  "effect":"read","cost":7,"maxOutputBytes":64},"exec":"scripted:lookup.json"}}`), dir)
	if err != nil {
		t.Fatal(err)
	}
	h := scriptedHost(t, st, responses)
	h.Router.Tools = tools
	return h
}

func TestHostTools(t *testing.T) {
	st := store.NewMemStore()
	m := mustManifest(t, organism("tool",
		`{"id":"in","kind":"input","outputs":{"q":"text"}},{"id":"look","kind":"tool","tool":"lookup.v1"}`,
		edge("in", "q", "look", "q")))
	h := toolsHost(t, st, `{}`)
	rec := runAndVerify(t, m, `{"in":{"q":"wisp"}}`, h)
	req := map[string]any{"contract": "algal.tool-effect.v1", "path": "look", "tool": "lookup.v1", "effect": "read", "inputs": map[string]any{"q": "wisp"}}
	d, _ := canon.Digest(req)
	want(t, "tool record", effects(rec), `[{"requestDigest":"`+d+`","executor":"tool:lookup.v1","output":{"hit":"sprig"}}]`)
	want(t, "tool cell", cell(t, rec, "look"), `{"status":"committed","work":`+itoa(100+7+len(`{"hit":"sprig"}`))+`,"effectDigest":"`+d+`","outputs":{"hit":"sprig"}}`)
	if work(rec)["agentCalls"] != 0.0 {
		t.Fatal("tool effects do not count against maxAgentCalls")
	}

	// An agent calling a host tool records a tool effect under <path>/t<turn>.
	ag := mustManifest(t, organism("agent-tool",
		`{"id":"in","kind":"input","outputs":{"q":"text"}},
		 {"id":"a","kind":"agent","prompt":"p","inputs":{"q":"text"},"output":{"kind":"text"},"tools":["lookup.v1"]}`,
		edge("in", "q", "a", "q")))
	rec = runAndVerify(t, ag, `{"in":{"q":"wisp"}}`, toolsHost(t, st, `{"a":[{"tool":"lookup.v1","inputs":{"q":"wisp"}},"sprig"]}`))
	req["path"] = "a/t0"
	d, _ = canon.Digest(req)
	es := effects(rec)
	if len(es) != 3 || es[1].(map[string]any)["requestDigest"] != d || es[1].(map[string]any)["executor"] != "tool:lookup.v1" {
		t.Fatalf("agent tool effect: %s", enc(es))
	}
	want(t, "toolCalls", cell(t, rec, "a")["toolCalls"], `[{"fn":"lookup.v1","inputs":{"q":"wisp"},"output":{"hit":"sprig"}}]`)
	// A scripted tool miss is TOOL_FAILED.
	rec = runAndVerify(t, m, `{"in":{"q":"other"}}`, h)
	if f := rec["failure"].(map[string]any); f["code"] != "TOOL_FAILED" {
		t.Fatal(enc(f))
	}
}

func TestMaxEffectMsAndContextBound(t *testing.T) {
	m := mustManifest(t, organism("slow",
		`{"id":"in","kind":"input","outputs":{"t":"text"}},
		 {"id":"a","kind":"agent","prompt":"p","inputs":{"t":"text"},"output":{"kind":"text"},"budget":{"maxEffectMs":20}}`,
		edge("in", "t", "a", "t")))
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

	tight := mustManifest(t, organism("tight",
		`{"id":"in","kind":"input","outputs":{"t":"text"}},
		 {"id":"a","kind":"agent","prompt":"p","inputs":{"t":"text"},"output":{"kind":"text"},"budget":{"maxContextBytes":20}}`,
		edge("in", "t", "a", "t")))
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

func TestCompactionReceipt(t *testing.T) {
	m := mustManifest(t, organism("compact",
		`{"id":"in","kind":"input","outputs":{"r":"json"}},
		 {"id":"ag","kind":"agent","prompt":"p","inputs":{"r":"json"},"output":{"kind":"text"},"tools":["pick.v1"],
		  "compact":{"maxLogBytes":60,"keepRecent":1}}`,
		edge("in", "r", "ag", "r")))
	call := func(f string) string {
		return `{"tool":"pick.v1","inputs":{"record":{"name":"wisp","kind":"sprig"},"field":"` + f + `"}}`
	}
	rec := runAndVerify(t, m, `{"in":{"r":{}}}`, scriptedHost(t, store.NewMemStore(),
		`{"ag":[`+call("name")+`,`+call("kind")+`,{"answers":{"keep_0":{"noul":0.1}}},"done"]}`))
	es := effects(rec)
	if len(es) != 4 {
		t.Fatalf("want 2 tool turns, 1 compaction, 1 final: %s", enc(es))
	}
	c := cell(t, rec, "ag")
	want(t, "out", c["outputs"], `{"out":"done"}`)
	// toolCalls is the log after triage: the dropped entry is gone.
	if tc := c["toolCalls"].([]any); len(tc) != 1 || tc[0].(map[string]any)["inputs"].(map[string]any)["field"] != "kind" {
		t.Fatalf("toolCalls after compaction: %s", enc(tc))
	}
	if work(rec)["agentCalls"] != 4.0 {
		t.Fatal("compaction counts against maxAgentCalls")
	}
}

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

func TestResumeAfterSuspension(t *testing.T) {
	m := mustManifest(t, organism("approve",
		`{"id":"in","kind":"input","outputs":{"t":"text"}},
		 {"id":"draft","kind":"agent","prompt":"p","inputs":{"t":"text"},"output":{"kind":"text"}},
		 {"id":"ok","kind":"gate","prompt":"p","inputs":{"d":"text"},"output":{"kind":"choice","labels":["yes","no"]}}`,
		edge("in", "t", "draft", "t")+","+edge("draft", "out", "ok", "d")))
	st := store.NewMemStore()
	calls := 0
	model := &fixedExec{id: "model", fn: func(effect.Request) (effect.Response, error) {
		calls++
		return effect.Response{Output: "draft text"}, nil
	}}
	pending := &fixedExec{id: "human", desc: effect.Descriptor{Effects: effect.GateEffects}, fn: func(effect.Request) (effect.Response, error) {
		return effect.Response{}, &fault.Error{Code: "EFFECT_SUSPENDED", Message: "awaiting"}
	}}
	cp := runAndVerify(t, m, `{"in":{"t":"x"}}`, &Host{Store: st, Router: effect.NewRouter(model, pending)})
	if cp["outcome"] != "suspended" {
		t.Fatal(cp["outcome"])
	}
	decided := &fixedExec{id: "human", desc: effect.Descriptor{Effects: effect.GateEffects}, fn: func(effect.Request) (effect.Response, error) {
		return effect.Response{Output: "yes"}, nil
	}}
	rec, err := Resume(cp, m, &Host{Store: st, Router: effect.NewRouter(model, decided)})
	if err != nil {
		t.Fatal(err)
	}
	if rec["outcome"] != "complete" || calls != 1 {
		t.Fatalf("resume: outcome %v, model calls %d (the prefix must replay)", rec["outcome"], calls)
	}
	want(t, "gate", cell(t, rec, "ok")["outputs"], `{"out":"yes"}`)
	rep, err := Verify(rec, m, VerifyOptions{Store: st})
	if err != nil || !rep.OK {
		t.Fatalf("resumed receipt must verify: %v %v", err, rep.Mismatches)
	}
	cp["outcome"] = "complete"
	if _, err := Resume(cp, m, &Host{Store: st}); err == nil {
		t.Fatal("a tampered checkpoint must not resume")
	}
}

func TestForeignErrorCodeIsRecordedAsEffectFailed(t *testing.T) {
	m := mustManifest(t, organism("foreign",
		`{"id":"in","kind":"input","outputs":{"t":"text"}},
		 {"id":"a","kind":"agent","prompt":"p","inputs":{"t":"text"},"output":{"kind":"text"}}`,
		edge("in", "t", "a", "t")))
	odd := &fixedExec{id: "odd", fn: func(effect.Request) (effect.Response, error) {
		return effect.Response{}, &fault.Error{Code: "QUOTA", Message: "slow down"}
	}}
	rec := runAndVerify(t, m, `{"in":{"t":"x"}}`, &Host{Store: store.NewMemStore(), Router: effect.NewRouter(odd)})
	want(t, "error", effects(rec)[0].(map[string]any)["error"], `{"code":"EFFECT_FAILED","message":"QUOTA: slow down"}`)
}
