package vm

import (
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/effect"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/store"
)

func TestTriageReceipt(t *testing.T) {
	t.Parallel()
	m := mustManifest(t, triageJSON)
	rec := runAndVerify(t, m, `{"ticket":{"text":"app crashes"}}`, scriptedHost(t, store.NewMemStore(), `{"route":"bug"}`))
	if rec["outcome"] != "complete" || rec["manifestDigest"] != m.Digest || rec["manifestKey"] != "organism:triage" {
		t.Fatalf("identity/outcome wrong: %v %v", rec["outcome"], rec["manifestDigest"])
	}
	// The request is exactly the contract's shape; its digest binds the
	// effect record and the cell's effectDigest.
	req := parseJSON(t, `{"contract":"algal.effect.v1","cellId":"route","kind":"classifier","prompt":"Classify.",
	 "context":{"inputs":{"ticket":"app crashes"},"turn":0},
	 "output":{"kind":"choice","labels":["bug","feature","question"],"onMiss":"question"},
	 "budget":{"maxContextBytes":65536,"maxOutputBytes":65536},"route":{"preset":"classify-small"}}`)
	d, _ := canon.Digest(req)
	want(t, "effects", effects(rec), `[{"requestDigest":"`+d+`","executor":"scripted","output":"bug"}]`)
	ctx := contextBytes(t, `{"inputs":{"ticket":"app crashes"},"turn":0}`)
	routeWork := 100 + 500 + ctx + len(`"bug"`)
	want(t, "route", cell(t, rec, "route"), `{"status":"committed","work":`+itoa(routeWork)+`,"effectDigest":"`+d+`","outputs":{"out":"bug"}}`)
	want(t, "as-bug", cell(t, rec, "as-bug"), `{"status":"committed","work":110,"outputs":{"value":"BUG: app crashes"}}`)
	want(t, "as-feature", cell(t, rec, "as-feature"), `{"status":"skipped","work":0}`)
	want(t, "result", cell(t, rec, "result"), `{"status":"committed","work":110,"outputs":{"value":"BUG: app crashes"}}`)
	want(t, "work", work(rec), `{"steps":4,"agentCalls":1,"units":`+itoa(100+routeWork+110+110)+`}`)
	evs := rec["events"].([]any)
	want(t, "first event", evs[0], `{"seq":0,"kind":"run.start","digest":"`+m.Digest+`"}`)
	want(t, "last event", evs[len(evs)-1], `{"seq":`+itoa(len(evs)-1)+`,"kind":"run.end","outcome":"complete"}`)
	if _, ok := rec["failure"]; ok {
		t.Fatal("complete run carries a failure")
	}
}

func itoa(n int) string { return string(canon.FormatNumber(nil, float64(n))) }

func TestOnMissAndShadow(t *testing.T) {
	t.Parallel()
	m := mustManifest(t, triageJSON)
	rec := runAndVerify(t, m, `{"ticket":{"text":"x"}}`, scriptedHost(t, store.NewMemStore(), `{"route":"banana"}`))
	want(t, "onMiss", cell(t, rec, "route")["outputs"], `{"out":"question"}`)

	shadow := mustManifest(t, organism("shadow",
		`{"id":"in","kind":"input","outputs":{"t":"text"}},
		 {"id":"route","kind":"classifier","prompt":"p","inputs":{"t":"text"},"output":{"kind":"choice","labels":["a","b"]},"shadow":{"take":"a"}}`,
		edge("in", "t", "route", "t")))
	rec = runAndVerify(t, shadow, `{"in":{"t":"x"}}`, scriptedHost(t, store.NewMemStore(), `{"route":"b"}`))
	c := cell(t, rec, "route")
	want(t, "shadow commit", c["outputs"], `{"out":"a"}`)
	want(t, "shadowOut", c["shadowOut"], `"b"`)
	rec = runAndVerify(t, shadow, `{"in":{"t":"x"}}`, scriptedHost(t, store.NewMemStore(), `{"route":"a"}`))
	if _, ok := cell(t, rec, "route")["shadowOut"]; ok {
		t.Fatal("shadowOut recorded although the model agreed with take")
	}
}

func TestChoiceMissWithoutOnMissFails(t *testing.T) {
	t.Parallel()
	m := mustManifest(t, organism("miss",
		`{"id":"in","kind":"input","outputs":{"t":"text"}},
		 {"id":"route","kind":"classifier","prompt":"p","inputs":{"t":"text"},"output":{"kind":"choice","labels":["a","b"]}}`,
		edge("in", "t", "route", "t")))
	rec := runAndVerify(t, m, `{"in":{"t":"x"}}`, scriptedHost(t, store.NewMemStore(), `{"route":{"x":1}}`))
	want(t, "failure", rec["failure"], `{"code":"EFFECT_UNPARSEABLE","message":"cell \"route\": output {\"x\":1} is not a declared label","path":"route"}`)
	want(t, "record", cell(t, rec, "route")["status"], `"failed"`)
	if rec["outcome"] != "failed" {
		t.Fatal(rec["outcome"])
	}
}

func TestRetryReissuesSameRequest(t *testing.T) {
	t.Parallel()
	m := mustManifest(t, organism("retry",
		`{"id":"in","kind":"input","outputs":{"t":"text"}},
		 {"id":"route","kind":"classifier","prompt":"p","inputs":{"t":"text"},"output":{"kind":"choice","labels":["a","b"]},"retry":{"attempts":3}}`,
		edge("in", "t", "route", "t")))
	rec := runAndVerify(t, m, `{"in":{"t":"x"}}`, scriptedHost(t, store.NewMemStore(), `{"route":["zz","zz","b"]}`))
	es := effects(rec)
	if len(es) != 3 {
		t.Fatalf("want 3 attempts, got %s", enc(es))
	}
	d := es[0].(map[string]any)["requestDigest"]
	for _, e := range es {
		if e.(map[string]any)["requestDigest"] != d {
			t.Fatal("retry changed the request")
		}
	}
	want(t, "out", cell(t, rec, "route")["outputs"], `{"out":"b"}`)
	if work(rec)["agentCalls"] != 3.0 {
		t.Fatalf("agentCalls %v", work(rec)["agentCalls"])
	}
	// Exhausted attempts fail the cell with the last error.
	rec = runAndVerify(t, m, `{"in":{"t":"x"}}`, scriptedHost(t, store.NewMemStore(), `{"route":["zz","zz","zz"]}`))
	if rec["outcome"] != "failed" || len(effects(rec)) != 3 {
		t.Fatalf("outcome %v effects %d", rec["outcome"], len(effects(rec)))
	}
}

func TestUnboundAndRouting(t *testing.T) {
	t.Parallel()
	cls := func(route string) string {
		return organism("routing",
			`{"id":"in","kind":"input","outputs":{"t":"text"}},
			 {"id":"c","kind":"classifier","prompt":"p","inputs":{"t":"text"},"output":{"kind":"choice","labels":["a","b"]}`+route+`}`,
			edge("in", "t", "c", "t"))
	}
	// No executors: the exact unbound record, not retryable.
	m := mustManifest(t, cls(""))
	rec := runAndVerify(t, m, `{"in":{"t":"x"}}`, &Host{Store: store.NewMemStore()})
	e := effects(rec)[0].(map[string]any)
	delete(e, "requestDigest")
	want(t, "unbound", e, `{"executor":"unbound","retryable":false,"error":{"code":"EFFECT_UNBOUND","message":"no host-admitted executor for this request"}}`)

	model := &fixedExec{id: "model", desc: effect.Descriptor{}, fn: func(effect.Request) (effect.Response, error) { return effect.Response{Output: "a"}, nil }}
	gateOnly := &fixedExec{id: "human", desc: effect.Descriptor{Effects: effect.GateEffects}, fn: func(effect.Request) (effect.Response, error) { return effect.Response{Output: "b"}, nil }}
	sc, _ := effect.NewScripted("scripted", obj(t, `{"c":"b"}`))
	cases := []struct {
		name, route string
		execs       []effect.Executor
		executor    string
	}{
		{"unrouted first admitting", "", []effect.Executor{gateOnly, model, sc}, "model"},
		{"routed exact id", `,"route":{"provider":"model"}`, []effect.Executor{sc, model}, "model"},
		{"routed provider: prefix", `,"route":{"provider":"x"}`, []effect.Executor{&fixedExec{id: "provider:x", fn: model.fn}}, "provider:x"},
		{"named executor without the kind fails closed", `,"route":{"preset":"human"}`, []effect.Executor{gateOnly, sc}, "unbound"},
		{"route miss falls to wildcard", `,"route":{"preset":"nobody"}`, []effect.Executor{model, sc}, "scripted"},
		{"route miss without wildcard", `,"route":{"preset":"nobody"}`, []effect.Executor{model}, "unbound"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := mustManifest(t, cls(c.route))
			rec := runAndVerify(t, m, `{"in":{"t":"x"}}`, &Host{Store: store.NewMemStore(), Router: effect.NewRouter(c.execs...)})
			if got := effects(rec)[0].(map[string]any)["executor"]; got != c.executor {
				t.Fatalf("executor %v, want %s", got, c.executor)
			}
		})
	}
}

func TestToolLoop(t *testing.T) {
	t.Parallel()
	m := mustManifest(t, organism("tools",
		`{"id":"in","kind":"input","outputs":{"rec":"json"}},
		 {"id":"agent","kind":"agent","prompt":"p","inputs":{"rec":"json"},"output":{"kind":"text"},"tools":["pick.v1"]}`,
		edge("in", "rec", "agent", "rec")))
	rec := runAndVerify(t, m, `{"in":{"rec":{"name":"wisp"}}}`, scriptedHost(t, store.NewMemStore(),
		`{"agent":[{"tool":"pick.v1","inputs":{"record":{"name":"wisp"},"field":"name"}},"wisp it is"]}`))
	c := cell(t, rec, "agent")
	want(t, "toolCalls", c["toolCalls"], `[{"fn":"pick.v1","inputs":{"record":{"name":"wisp"},"field":"name"},"output":{"value":"wisp"}}]`)
	want(t, "out", c["outputs"], `{"out":"wisp it is"}`)
	if len(effects(rec)) != 2 || work(rec)["agentCalls"] != 2.0 {
		t.Fatalf("want 2 turns: %s", enc(rec["work"]))
	}
	// The cell's effectDigest is the final turn's request, which carries
	// the tool log at turn 1.
	last := effects(rec)[1].(map[string]any)["requestDigest"]
	if c["effectDigest"] != last {
		t.Fatal("effectDigest is not the final turn's request")
	}
	// Turn 0 context, turn 1 context with the log, tool cost 10.
	ctx0 := contextBytes(t, `{"inputs":{"rec":{"name":"wisp"}},"turn":0}`)
	ctx1 := contextBytes(t, `{"inputs":{"rec":{"name":"wisp"}},"turn":1,"toolLog":[{"fn":"pick.v1","inputs":{"record":{"name":"wisp"},"field":"name"},"output":{"value":"wisp"}}]}`)
	raw0 := len(enc(parseJSON(t, `{"tool":"pick.v1","inputs":{"record":{"name":"wisp"},"field":"name"}}`)))
	wantWork := 100 + 500 + ctx0 + raw0 + 10 + 500 + ctx1 + len(`"wisp it is"`)
	if c["work"] != float64(wantWork) {
		t.Fatalf("agent work %v, want %d", c["work"], wantWork)
	}

	// maxTurns exhaustion.
	m2 := mustManifest(t, organism("tools2",
		`{"id":"in","kind":"input","outputs":{"rec":"json"}},
		 {"id":"agent","kind":"agent","prompt":"p","inputs":{"rec":"json"},"output":{"kind":"text"},"tools":["pick.v1"],"budget":{"maxTurns":2}}`,
		edge("in", "rec", "agent", "rec")))
	call := `{"tool":"pick.v1","inputs":{"record":{},"field":"a"}}`
	rec = runAndVerify(t, m2, `{"in":{"rec":{}}}`, scriptedHost(t, store.NewMemStore(), `{"agent":[`+call+`,`+call+`,"late"]}`))
	want(t, "maxTurns", rec["failure"], `{"code":"BUDGET_EXHAUSTED","message":"cell \"agent\" produced no final output within maxTurns 2","path":"agent"}`)

	// An undeclared tool input is TYPE_MISMATCH; a missing one EFFECT_FAILED.
	rec = runAndVerify(t, m, `{"in":{"rec":{}}}`, scriptedHost(t, store.NewMemStore(), `{"agent":[{"tool":"pick.v1","inputs":{"record":{},"field":"a","x":1}}]}`))
	want(t, "undeclared", rec["failure"], `{"code":"TYPE_MISMATCH","message":"tool pick.v1 received undeclared input x","path":"agent"}`)
	rec = runAndVerify(t, m, `{"in":{"rec":{}}}`, scriptedHost(t, store.NewMemStore(), `{"agent":[{"tool":"pick.v1","inputs":{"record":{}}}]}`))
	want(t, "missing", rec["failure"], `{"code":"EFFECT_FAILED","message":"tool missing required input","path":"agent"}`)
}

func TestGuards(t *testing.T) {
	t.Parallel()
	m := mustManifest(t, organism("guards",
		`{"id":"in","kind":"input","outputs":{"r":"json"}},
		 {"id":"hi","kind":"fn","fn":"echo.v1"},
		 {"id":"big","kind":"fn","fn":"echo.v1"},
		 {"id":"low","kind":"fn","fn":"echo.v1"}`,
		edge("in", "r", "hi", "value", `"guard":{"field":"sev","equals":"high"}`)+","+
			edge("in", "r", "big", "value", `"guard":{"expr":{"contract":"algal.expr.v1","program":["gt",["get","value","n"],10]}}`)+","+
			edge("in", "r", "low", "value", `"guard":{"expr":{"contract":"algal.expr.v1","program":["lte",["get","value","n"],10]}}`)))
	rec := runAndVerify(t, m, `{"in":{"r":{"sev":"high","n":12}}}`, &Host{Store: store.NewMemStore()})
	want(t, "hi", cell(t, rec, "hi")["status"], `"committed"`)
	want(t, "big", cell(t, rec, "big")["status"], `"committed"`)
	want(t, "low", cell(t, rec, "low")["status"], `"skipped"`)
	// Guard fuel is charged although the edge into low is dead: units
	// exceed the activations' 100 + 10 each.
	if u := work(rec)["units"].(float64); u <= 100+110+110 {
		t.Fatalf("guard fuel not charged: %v", u)
	}
	// A field guard on a non-object is a dead edge, not an error.
	rec = runAndVerify(t, m, `{"in":{"r":"text"}}`, &Host{Store: store.NewMemStore()})
	if rec["outcome"] != "failed" || !strings.HasPrefix(rec["failure"].(map[string]any)["message"].(string), "guard expr ") {
		t.Fatalf("expr guard on text should fail GUARD_INVALID: %s", enc(rec["failure"]))
	}
	want(t, "hi skipped", cell(t, rec, "hi")["status"], `"skipped"`)
	f := rec["failure"].(map[string]any)
	if f["code"] != "GUARD_INVALID" || f["path"] != "big" {
		t.Fatalf("GUARD_INVALID must name the receiving cell: %s", enc(f))
	}
	if _, ok := rec["cells"].(map[string]any)["big"]; ok {
		t.Fatal("the receiving cell must not activate")
	}

	nb := mustManifest(t, organism("nonbool",
		`{"id":"in","kind":"input","outputs":{"r":"json"}},{"id":"e","kind":"fn","fn":"echo.v1"}`,
		edge("in", "r", "e", "value", `"guard":{"expr":{"contract":"algal.expr.v1","program":["get","value"]}}`)))
	rec = runAndVerify(t, nb, `{"in":{"r":3}}`, &Host{Store: store.NewMemStore()})
	want(t, "non-boolean", rec["failure"], `{"code":"GUARD_INVALID","message":"guard expr must produce boolean, got number","path":"e"}`)
}

func TestFailEdgesAndFirstFailureWins(t *testing.T) {
	t.Parallel()
	m := mustManifest(t, organism("recover",
		`{"id":"in","kind":"input","outputs":{"v":"json"}},
		 {"id":"k","kind":"const","outputs":{"x":{"type":"json","value":2}}},
		 {"id":"check","kind":"fn","fn":"assert.v1"},
		 {"id":"handler","kind":"fn","fn":"echo.v1"}`,
		edge("in", "v", "check", "value")+","+edge("k", "x", "check", "expect")+","+
			edge("check", "value", "handler", "value", `"on":"fail"`)))
	rec := runAndVerify(t, m, `{"in":{"v":1}}`, &Host{Store: store.NewMemStore()})
	if rec["outcome"] != "complete" {
		t.Fatalf("handled failure must not fail the run: %s", enc(rec["failure"]))
	}
	want(t, "failed record", cell(t, rec, "check"), `{"status":"failed","work":110,"failure":{"code":"FN_FAILED","message":"assert.v1: value 1 != expect 2"}}`)
	want(t, "delivered", cell(t, rec, "handler")["outputs"], `{"value":{"code":"FN_FAILED","message":"assert.v1: value 1 != expect 2"}}`)
	// Success: the fail edge dies and the handler skips.
	rec = runAndVerify(t, m, `{"in":{"v":2}}`, &Host{Store: store.NewMemStore()})
	want(t, "handler skipped", cell(t, rec, "handler")["status"], `"skipped"`)

	two := mustManifest(t, organism("two",
		`{"id":"a","kind":"const","outputs":{"x":{"type":"json","value":"n"}}},
		 {"id":"f1","kind":"fn","fn":"inc.v1"},{"id":"f2","kind":"fn","fn":"inc.v1"}`,
		edge("a", "x", "f1", "value")+","+edge("a", "x", "f2", "value")))
	rec = runAndVerify(t, two, ``, &Host{Store: store.NewMemStore()})
	want(t, "first wins", rec["failure"], `{"code":"FN_FAILED","message":"inc.v1: value must be a finite number","path":"f1"}`)
	if _, ok := rec["cells"].(map[string]any)["f2"]; ok {
		t.Fatal("the sweep must stop at the first unhandled failure")
	}
}

func TestBudgets(t *testing.T) {
	t.Parallel()
	chain := func(budgets string) string {
		return organism("budget",
			`{"id":"a","kind":"const","outputs":{"x":{"type":"json","value":1}}},
			 {"id":"b","kind":"fn","fn":"inc.v1"},{"id":"c","kind":"fn","fn":"inc.v1"}`,
			edge("a", "x", "b", "value")+","+edge("b", "value", "c", "value"), `"budgets":`+budgets)
	}
	rec := runAndVerify(t, mustManifest(t, chain(`{"maxSteps":2}`)), ``, &Host{Store: store.NewMemStore()})
	want(t, "maxSteps", rec["failure"], `{"code":"BUDGET_EXHAUSTED","message":"maxSteps exhausted","path":"c"}`)
	if _, ok := rec["cells"].(map[string]any)["c"]; ok {
		t.Fatal("a cell failing the steps check gets no record")
	}
	rec = runAndVerify(t, mustManifest(t, chain(`{"maxWork":150}`)), ``, &Host{Store: store.NewMemStore()})
	want(t, "maxWork", rec["failure"], `{"code":"BUDGET_EXHAUSTED","message":"maxWork exhausted","path":"b"}`)
	want(t, "overshooting cell commits", cell(t, rec, "b")["status"], `"committed"`)

	calls := mustManifest(t, organism("calls",
		`{"id":"in","kind":"input","outputs":{"t":"text"}},
		 {"id":"c1","kind":"classifier","prompt":"p","inputs":{"t":"text"},"output":{"kind":"choice","labels":["a"]}},
		 {"id":"c2","kind":"classifier","prompt":"p","inputs":{"t":"text"},"output":{"kind":"choice","labels":["a"]}},
		 {"id":"h","kind":"fn","fn":"echo.v1"}`,
		edge("in", "t", "c1", "t")+","+edge("in", "t", "c2", "t")+","+edge("c2", "out", "h", "value", `"on":"fail"`),
		`"budgets":{"maxAgentCalls":1}`))
	rec = runAndVerify(t, calls, `{"in":{"t":"x"}}`, scriptedHost(t, store.NewMemStore(), `{"c1":"a","c2":"a"}`))
	want(t, "c2 failed", cell(t, rec, "c2"), `{"status":"failed","work":100,"failure":{"code":"BUDGET_EXHAUSTED","message":"maxAgentCalls exhausted"}}`)
	if rec["outcome"] != "complete" {
		t.Fatal("maxAgentCalls is an activation error a fail edge can catch")
	}
	// Output over maxOutputBytes counts as a failed attempt and adds no units.
	big := oneAgent(t, "big", `"budget":{"maxOutputBytes":8}`)
	rec = runAndVerify(t, big, `{"in":{"t":"x"}}`, scriptedHost(t, store.NewMemStore(), `{"a":"far too long"}`))
	want(t, "maxOutputBytes", rec["failure"], `{"code":"BUDGET_EXHAUSTED","message":"effect output 14B exceeds maxOutputBytes 8B","path":"a"}`)
	ctx := contextBytes(t, `{"inputs":{"t":"x"},"turn":0}`)
	if cell(t, rec, "a")["work"] != float64(100+500+ctx) {
		t.Fatalf("over-bound output must add nothing: %v", cell(t, rec, "a")["work"])
	}
}

func TestSkipRules(t *testing.T) {
	t.Parallel()
	m := mustManifest(t, organism("skip",
		`{"id":"in","kind":"input","outputs":{"a":"json","b":"json"}},
		 {"id":"both","kind":"fn","fn":"assert.v1"},
		 {"id":"any","kind":"fn","fn":"coalesce.v1"},
		 {"id":"after","kind":"fn","fn":"echo.v1"}`,
		edge("in", "a", "both", "value")+","+edge("in", "b", "both", "expect")+","+
			edge("in", "a", "any", "a")+","+edge("in", "b", "any", "b")+","+edge("both", "value", "after", "value")))
	rec := runAndVerify(t, m, `{"in":{"b":5}}`, &Host{Store: store.NewMemStore()})
	want(t, "required missing", cell(t, rec, "both"), `{"status":"skipped","work":0}`)
	want(t, "downstream dies", cell(t, rec, "after"), `{"status":"skipped","work":0}`)
	want(t, "optional ok", cell(t, rec, "any")["outputs"], `{"value":5}`)
	if !hasEvent(rec, "cell.skip", "both") {
		t.Fatal("no cell.skip event")
	}
	rec = runAndVerify(t, m, ``, &Host{Store: store.NewMemStore()})
	want(t, "nothing delivered", cell(t, rec, "any"), `{"status":"skipped","work":0}`)
}

func TestExprCell(t *testing.T) {
	t.Parallel()
	m := mustManifest(t, organism("rate",
		`{"id":"in","kind":"input","outputs":{"t":"json"}},
		 {"id":"rate","kind":"expr","inputs":{"t":"json"},"expr":{"contract":"algal.expr.v1",
		   "program":["if",["gt",["get","t","amount"],1000],"high","std"]},"output":{"kind":"choice","labels":["high","std"]}}`,
		edge("in", "t", "rate", "t")))
	rec := runAndVerify(t, m, `{"in":{"t":{"amount":5000}}}`, &Host{Store: store.NewMemStore()})
	c := cell(t, rec, "rate")
	want(t, "out", c["outputs"], `{"out":"high"}`)
	if w := c["work"].(float64); w <= 100 {
		t.Fatalf("expr fuel not charged: %v", w)
	}
	rec = runAndVerify(t, m, `{"in":{"t":"nope"}}`, &Host{Store: store.NewMemStore()})
	f := rec["failure"].(map[string]any)
	if f["code"] != "EXPR_FAILED" || !strings.HasPrefix(f["message"].(string), "expr {") {
		t.Fatalf("expr error: %s", enc(f))
	}
}

func TestStoreLoadSlot(t *testing.T) {
	t.Parallel()
	st := store.NewMemStore()
	m := mustManifest(t, organism("mem",
		`{"id":"in","kind":"input","outputs":{"doc":"json"}},
		 {"id":"pin","kind":"store"},{"id":"get","kind":"load"},
		 {"id":"count","kind":"slot","name":"count","mode":"read","default":0},
		 {"id":"inc","kind":"fn","fn":"inc.v1"},
		 {"id":"save","kind":"slot","name":"count","mode":"write"}`,
		edge("in", "doc", "pin", "data")+","+edge("pin", "ref", "get", "ref")+","+
			edge("count", "data", "inc", "value")+","+edge("inc", "value", "save", "data")))
	rec := runAndVerify(t, m, `{"in":{"doc":{"a":1}}}`, &Host{Store: st})
	ref, _ := canon.Digest(map[string]any{"a": 1.0})
	want(t, "pin", cell(t, rec, "pin"), `{"status":"committed","work":107,"outputs":{"ref":"`+ref+`"}}`)
	want(t, "get", cell(t, rec, "get"), `{"status":"committed","work":107,"outputs":{"data":{"a":1}}}`)
	want(t, "read default", cell(t, rec, "count"), `{"status":"committed","work":100,"outputs":{"data":0},"slot":{"name":"count","mode":"read"}}`)
	want(t, "write", cell(t, rec, "save"), `{"status":"committed","work":101,"outputs":{"data":1},"slot":{"name":"count","mode":"write"}}`)
	second := runAndVerify(t, m, `{"in":{"doc":{"a":1}}}`, &Host{Store: st})
	want(t, "second read", cell(t, second, "count")["outputs"], `{"data":1}`)
	// The slot moved on, yet both receipts still verify: reads replay
	// from the record.
	for _, r := range []map[string]any{rec, second} {
		rep, err := Verify(r, m, VerifyOptions{Store: st})
		if err != nil || !rep.OK {
			t.Fatalf("slot replay: %v %v", err, rep.Mismatches)
		}
	}
	// A read with neither value nor default fails INPUT_MISSING.
	empty := mustManifest(t, organism("empty", `{"id":"r","kind":"slot","name":"never","mode":"read"}`, ``))
	rec = runAndVerify(t, empty, ``, &Host{Store: st})
	want(t, "empty slot", rec["failure"], `{"code":"INPUT_MISSING","message":"slot cell \"r\": slot \"never\" is empty and declares no default","path":"r"}`)
}

func TestDecideCell(t *testing.T) {
	t.Parallel()
	m := mustManifest(t, organism("decide",
		`{"id":"in","kind":"input","outputs":{"p":"json"}},
		 {"id":"probe","kind":"decide","inputs":{"p":"json"},"questions":{
		   "keep":{"type":"noul","instructions":"Still relevant?"},
		   "lane":{"type":"choice","instructions":"Lane?","criteria":{"bug":null,"chore":null}}}}`,
		edge("in", "p", "probe", "p")))
	ok := `{"answers":{"keep":{"noul":0.9},"lane":{"choice":"bug","confidence":0.8,"probabilities":{"bug":0.8,"chore":0.2}}}}`
	rec := runAndVerify(t, m, `{"in":{"p":1}}`, scriptedHost(t, store.NewMemStore(), `{"probe":`+ok+`}`))
	want(t, "answers", cell(t, rec, "probe")["outputs"], `{"out":`+ok+`}`)
	for name, bad := range map[string]string{
		"extra":   `{"answers":{"keep":{"noul":0.9},"lane":{"choice":"bug","confidence":0.8,"probabilities":{}},"more":{"noul":1}}}`,
		"missing": `{"answers":{"keep":{"noul":0.9}}}`,
		"bad":     `{"answers":{"keep":{"noul":"yes"},"lane":{"choice":"bug","confidence":0.8,"probabilities":{}}}}`,
		"crit":    `{"answers":{"keep":{"noul":0.9},"lane":{"choice":"feature","confidence":0.8,"probabilities":{}}}}`,
	} {
		rec := runAndVerify(t, m, `{"in":{"p":1}}`, scriptedHost(t, store.NewMemStore(), `{"probe":`+bad+`}`))
		if f := rec["failure"].(map[string]any); f["code"] != "EFFECT_UNPARSEABLE" {
			t.Errorf("%s: %s", name, enc(f))
		}
	}
}

func TestRecallRerank(t *testing.T) {
	t.Parallel()
	st := store.NewMemStore()
	ra, _ := st.Put(store.Values, "alpha")
	rb, _ := st.Put(store.Values, "beta")
	hit := func(i int, ref string) string {
		return `{"id":"` + ref + `","source":"value:` + ref[7:] + `","seq":` + itoa(i) + `,"score":0.5,"text":"t","ref":"` + ref + `"}`
	}
	m := mustManifest(t, organism("rr",
		`{"id":"in","kind":"input","outputs":{"q":"text"}},
		 {"id":"mem","kind":"recall","inputs":{"q":"text"},"query":{"contract":"algal.expr.v1","program":["get","q"]},"k":4,
		  "rerank":{"route":{"provider":"jev"},"take":1}},
		 {"id":"full","kind":"load"}`,
		edge("in", "q", "mem", "q")+","+edge("mem", "ref", "full", "ref")))
	resp := `{"mem":[{"hits":[` + hit(0, ra) + `,` + hit(1, rb) + `]},{"answers":{"hit_0":{"noul":0.1},"hit_1":{"noul":0.9}}}]}`
	rec := runAndVerify(t, m, `{"in":{"q":"greek"}}`, scriptedHost(t, st, resp))
	c := cell(t, rec, "mem")
	want(t, "reranked", c["outputs"], `{"out":{"hits":[`+hit(1, rb)+`]},"ref":"`+rb+`"}`)
	if len(effects(rec)) != 2 || c["effectDigest"] != effects(rec)[1].(map[string]any)["requestDigest"] {
		t.Fatal("rerank effect must be recorded and named by effectDigest")
	}
	want(t, "loaded", cell(t, rec, "full")["outputs"], `{"data":"beta"}`)
	// A malformed hit is EFFECT_UNPARSEABLE.
	rec = runAndVerify(t, m, `{"in":{"q":"greek"}}`, scriptedHost(t, st, `{"mem":{"hits":[{"id":"x"}]}}`))
	if rec["failure"].(map[string]any)["code"] != "EFFECT_UNPARSEABLE" {
		t.Fatal(enc(rec["failure"]))
	}
}

func TestSuspension(t *testing.T) {
	t.Parallel()
	m := mustManifest(t, organism("gate",
		`{"id":"in","kind":"input","outputs":{"t":"text"}},
		 {"id":"ok","kind":"gate","prompt":"p","inputs":{"t":"text"},"output":{"kind":"choice","labels":["yes","no"]}},
		 {"id":"side","kind":"fn","fn":"echo.v1"}`,
		edge("in", "t", "ok", "t")+","+edge("in", "t", "side", "value")))
	later := &fixedExec{id: "human", desc: effect.Descriptor{Effects: effect.GateEffects}, fn: func(effect.Request) (effect.Response, error) {
		return effect.Response{}, &fault.Error{Code: "EFFECT_SUSPENDED", Message: "awaiting a decision"}
	}}
	rec := runAndVerify(t, m, `{"in":{"t":"x"}}`, &Host{Store: store.NewMemStore(), Router: effect.NewRouter(later)})
	if rec["outcome"] != "suspended" {
		t.Fatalf("outcome %v", rec["outcome"])
	}
	want(t, "suspended record", cell(t, rec, "ok")["status"], `"suspended"`)
	// A suspension halts the sweep: later cells do not activate.
	if _, ok := rec["cells"].(map[string]any)["side"]; ok {
		t.Fatal("the sweep must halt at a suspension")
	}
	if effects(rec)[0].(map[string]any)["retryable"] != false {
		t.Fatal("a suspended effect is not retryable")
	}
}

func TestPortBounds(t *testing.T) {
	t.Parallel()
	m := mustManifest(t, organism("bounds",
		`{"id":"in","kind":"input","outputs":{"r":{"type":"json","schema":{"type":"object","required":["a"]}}}},
		 {"id":"e","kind":"fn","fn":"echo.v1"}`,
		edge("in", "r", "e", "value")))
	rec := runAndVerify(t, m, `{"in":{"r":{"a":1}}}`, &Host{Store: store.NewMemStore()})
	if rec["outcome"] != "complete" {
		t.Fatal(enc(rec["failure"]))
	}
	big := strings.Repeat("x", MaxValueBytes)
	rec = runAndVerify(t, m, `{"in":{"r":{"a":"`+big+`"}}}`, &Host{Store: store.NewMemStore()})
	want(t, "port bytes", rec["failure"], `{"code":"BUDGET_EXHAUSTED","message":"output r: port value bytes","path":"in"}`)
	rec = runAndVerify(t, m, `{"in":{"r":{"b":1}}}`, &Host{Store: store.NewMemStore()})
	if f := rec["failure"].(map[string]any); f["code"] != "TYPE_MISMATCH" || f["path"] != "in" {
		t.Fatalf("schema: %s", enc(f))
	}
	rec = runAndVerify(t, m, `{"in":{"zz":1}}`, &Host{Store: store.NewMemStore()})
	want(t, "undeclared", rec["failure"], `{"code":"TYPE_MISMATCH","message":"cell in produced undeclared port zz","path":"in"}`)
}
