package vm

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/effect"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/mailbox"
	"github.com/algal-assay/assay/engine/manifest"
	"github.com/algal-assay/assay/engine/store"
)

const gateJSON = `{"contract":"algal.organism.v1","key":"organism:gated","name":"G",
 "interface":{"inputs":{"diff":{"cell":"pr","port":"diff"}},"outputs":{"subject":{"cell":"merge","port":"out"}}},
 "cells":[{"id":"pr","kind":"input","outputs":{"diff":"text"}},
  {"id":"review","kind":"agent","prompt":"p","inputs":{"diff":"text"},"output":{"kind":"text"}},
  {"id":"gate","kind":"gate","prompt":"ok?","inputs":{"summary":"text"},"output":{"kind":"choice","labels":["approve","reject"]}},
  {"id":"merge","kind":"agent","prompt":"p","inputs":{"decision":"text"},"output":{"kind":"text"}}],
 "edges":[{"from":{"cell":"pr","port":"diff"},"to":{"cell":"review","port":"diff"}},
  {"from":{"cell":"review","port":"out"},"to":{"cell":"gate","port":"summary"}},
  {"from":{"cell":"gate","port":"out"},"to":{"cell":"merge","port":"decision"},"guard":{"equals":"approve"}}]}`

// approvalsHost admits the file-backed approvals executor ahead of a
// scripted fixture whose queues hold one answer per cell, so any live
// re-issue of an already answered request would come back unbound.
func approvalsHost(t *testing.T, st store.Store, approvals string, responses ...string) *Host {
	table := `{"review":["tiny"],"merge":["feat: x"],"gate":"reject"}`
	if len(responses) > 0 {
		table = responses[0]
	}
	sc, err := effect.NewScripted("scripted", obj(t, table))
	if err != nil {
		t.Fatal(err)
	}
	return &Host{Store: st, Router: effect.NewRouter(effect.NewApprovals(approvals), sc)}
}

func effectDigestOf(t *testing.T, rec map[string]any, p string) string {
	t.Helper()
	d, _ := cell(t, rec, p)["effectDigest"].(string)
	if d == "" {
		// Suspended records carry no effectDigest: take it from the event.
		for _, e := range rec["events"].([]any) {
			m := e.(map[string]any)
			if m["kind"] == "effect" && m["path"] == p {
				d, _ = m["digest"].(string)
			}
		}
	}
	return d
}

func TestGateSuspendsThenResumesWithSameRequest(t *testing.T) {
	t.Parallel()
	st := store.NewMemStore()
	m := mustManifest(t, gateJSON)
	approvals := filepath.Join(t.TempDir(), "approvals.json")
	if err := os.WriteFile(approvals, []byte(`{"other-gate":"approve"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	host := approvalsHost(t, st, approvals)
	cp := runAndVerify(t, m, `{"pr":{"diff":"+1"}}`, host)
	if cp["outcome"] != "suspended" {
		t.Fatalf("outcome %v", cp["outcome"])
	}
	want(t, "gate record", cell(t, cp, "gate")["status"], `"suspended"`)
	absent(t, cp, "merge")
	effs := effects(cp)
	last := effs[len(effs)-1].(map[string]any)
	if last["error"].(map[string]any)["code"] != "EFFECT_SUSPENDED" || last["retryable"] != false || last["executor"] != "approvals" {
		t.Fatalf("suspended effect: %s", enc(last))
	}
	suspendedDigest := last["requestDigest"]
	// Still no decision: resume suspends again, with the same request.
	again, err := Resume(cp, m, approvalsHost(t, st, approvals))
	if err != nil || again["outcome"] != "suspended" {
		t.Fatalf("resume without a decision: %v %v", err, again["outcome"])
	}
	// Decide; resume replays review (its queue holds one answer: a live
	// re-issue would be unbound) and re-issues exactly the gate request.
	if err := os.WriteFile(approvals, []byte(`{"gate":"approve"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	// The live fixture has no review answer: only the replay can serve it.
	host = approvalsHost(t, st, approvals, `{"merge":"feat: x"}`)
	done, err := Resume(cp, m, host)
	if err != nil {
		t.Fatal(err)
	}
	if done["outcome"] != "complete" {
		t.Fatalf("resumed outcome %v %s", done["outcome"], enc(done["failure"]))
	}
	if effectDigestOf(t, done, "gate") != suspendedDigest {
		t.Fatal("resume must re-issue the suspended request with the same digest")
	}
	want(t, "review replayed", cell(t, done, "review")["outputs"], `{"out":"tiny"}`)
	want(t, "merge", cell(t, done, "merge")["outputs"], `{"out":"feat: x"}`)
	rep, err := Verify(done, m, VerifyOptions{Store: st})
	if err != nil || !rep.OK {
		t.Fatalf("resumed receipt verifies: %v %v", err, rep.Mismatches)
	}
	// A checkpoint that does not verify is refused.
	bad := canon.Clone(cp).(map[string]any)
	bad["outcome"] = "complete"
	if _, err := Resume(bad, m, host); err == nil {
		t.Fatal("tampered checkpoint accepted")
	}
}

func TestNestedSuspensionSuspendsEnclosingCell(t *testing.T) {
	t.Parallel()
	st := store.NewMemStore()
	child := storedManifest(t, st, gateJSON)
	m := mustManifest(t, organism("outer",
		`{"id":"in","kind":"input","outputs":{"d":"text"}},{"id":"wrap","kind":"organism","manifest":"`+child.Digest+`"},
		 {"id":"after","kind":"fn","fn":"echo.v1"}`,
		edge("in", "d", "wrap", "diff")+","+edge("wrap", "subject", "after", "value")))
	approvals := filepath.Join(t.TempDir(), "approvals.json")
	cp := runAndVerify(t, m, `{"in":{"d":"+1"}}`, approvalsHost(t, st, approvals))
	if cp["outcome"] != "suspended" {
		t.Fatalf("outcome %v", cp["outcome"])
	}
	want(t, "enclosing", cell(t, cp, "wrap")["status"], `"suspended"`)
	want(t, "inner", cell(t, cp, "wrap/gate")["status"], `"suspended"`)
	absent(t, cp, "after")
	if err := os.WriteFile(approvals, []byte(`{"gate":"approve"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	done, err := Resume(cp, m, approvalsHost(t, st, approvals))
	if err != nil || done["outcome"] != "complete" {
		t.Fatalf("resume: %v %v", err, done["outcome"])
	}
	want(t, "after", cell(t, done, "after")["outputs"], `{"value":"feat: x"}`)
	subtreeWork(t, done, "wrap")
}

const receiveJSON = `{"contract":"algal.organism.v1","key":"organism:wait","name":"W",
 "cells":[{"id":"in","kind":"input","outputs":{"inbox":{"type":"cap","capability":"mailbox-receive"}}},
  {"id":"wait","kind":"tool","tool":"mailbox.receive.v1"},
  {"id":"show","kind":"fn","fn":"echo.v1"}],
 "edges":[{"from":{"cell":"in","port":"inbox"},"to":{"cell":"wait","port":"mailbox"}},
  {"from":{"cell":"wait","port":"message"},"to":{"cell":"show","port":"value"}}]}`

func mailboxHost(st store.Store, svc *mailbox.Service) *Host {
	return &Host{Store: st, Router: effect.NewRouter(mailbox.NewTools(svc))}
}

func TestMailboxReceiveSuspendsAndResumesAfterSend(t *testing.T) {
	t.Parallel()
	st := store.NewMemStore()
	svc := mailbox.Open(t.TempDir())
	box, err := svc.Create("inbox", 4, 1000)
	if err != nil {
		t.Fatal(err)
	}
	m := mustManifest(t, receiveJSON)
	args := `{"in":{"inbox":"` + box.ReceiveHandle + `"}}`
	cp := runAndVerify(t, m, args, mailboxHost(st, svc))
	if cp["outcome"] != "suspended" {
		t.Fatalf("outcome %v %s", cp["outcome"], enc(cp["failure"]))
	}
	e := effects(cp)[0].(map[string]any)
	want(t, "suspended tool effect", e["error"], `{"code":"EFFECT_SUSPENDED","message":"mailbox \"inbox\" is empty"}`)
	want(t, "wake", e["wake"], `["`+box.ReceiveHandle+`"]`)
	if e["executor"] != "tool:mailbox.receive.v1" || e["retryable"] != false {
		t.Fatalf("record %s", enc(e))
	}
	key, _ := mailbox.NewKey()
	id, _, err := svc.Send(box.SendHandle, map[string]any{"approve": true}, key)
	if err != nil {
		t.Fatal(err)
	}
	done, err := Resume(cp, m, mailboxHost(st, svc))
	if err != nil || done["outcome"] != "complete" {
		t.Fatalf("resume: %v %v", err, done["outcome"])
	}
	if effectDigestOf(t, done, "wait") != e["requestDigest"] {
		t.Fatal("resume must re-issue the same receive request")
	}
	want(t, "delivered", cell(t, done, "wait")["outputs"], `{"id":"`+id+`","message":{"approve":true}}`)
	want(t, "downstream", cell(t, done, "show")["outputs"], `{"value":{"approve":true}}`)
	// Verification serves the recorded receipt: with a new message waiting
	// it neither consumes it nor needs the mailbox host at all.
	k2, _ := mailbox.NewKey()
	if _, _, err := svc.Send(box.SendHandle, "next", k2); err != nil {
		t.Fatal(err)
	}
	rep, err := Verify(done, m, VerifyOptions{Store: st})
	if err != nil || !rep.OK {
		t.Fatalf("verify: %v %v", err, rep.Mismatches)
	}
	if n, _ := svc.Pending(box.ReceiveHandle); n != 1 {
		t.Fatalf("verification touched the live mailbox: %d pending", n)
	}
	// Without a store directory the host is not admitted: CAPABILITY_DENIED.
	rec := runAndVerify(t, m, args, mailboxHost(st, nil))
	if f := rec["failure"].(map[string]any); f["code"] != "CAPABILITY_DENIED" || f["path"] != "wait" {
		t.Fatalf("no host: %s", enc(f))
	}
	// With no mailbox host admitted at all the tool is unknown.
	rec, err = Run(m, obj(t, args), &Host{Store: st})
	if err != nil || rec["failure"].(map[string]any)["code"] != "TOOL_UNKNOWN" {
		t.Fatalf("unadmitted: %v %s", err, enc(rec["failure"]))
	}
}

func TestMailboxSendToolDeliversOnce(t *testing.T) {
	t.Parallel()
	st := store.NewMemStore()
	svc := mailbox.Open(t.TempDir())
	box, _ := svc.Create("out", 4, 1000)
	m := mustManifest(t, organism("send",
		`{"id":"in","kind":"input","outputs":{"to":{"type":"cap","capability":"mailbox-send"},"msg":"json"}},
		 {"id":"post","kind":"tool","tool":"mailbox.send.v1"}`,
		edge("in", "to", "post", "mailbox")+","+edge("in", "msg", "post", "message")))
	args := `{"in":{"to":"` + box.SendHandle + `","msg":{"n":1}}}`
	first := runAndVerify(t, m, args, mailboxHost(st, svc))
	second := runAndVerify(t, m, args, mailboxHost(st, svc))
	if first["outcome"] != "complete" || enc(cell(t, first, "post")["outputs"]) != enc(cell(t, second, "post")["outputs"]) {
		t.Fatalf("sends: %s / %s", enc(cell(t, first, "post")), enc(cell(t, second, "post")))
	}
	if n, _ := svc.Pending(box.ReceiveHandle); n != 1 {
		t.Fatalf("the same tool request must deliver once, %d pending", n)
	}
	// A revoked send handle is CAPABILITY_DENIED, recorded as the tool's error.
	if err := svc.Revoke(box.SendHandle); err != nil {
		t.Fatal(err)
	}
	rec := runAndVerify(t, m, `{"in":{"to":"`+box.SendHandle+`","msg":{"n":2}}}`, mailboxHost(st, svc))
	if rec["failure"].(map[string]any)["code"] != "CAPABILITY_DENIED" {
		t.Fatalf("revoked: %s", enc(rec["failure"]))
	}
}

// TestUpstreamApprovalWait runs the upstream vm/approval-wait example (a
// mailbox receive behind an interface) through suspend, send and resume.
func TestUpstreamApprovalWait(t *testing.T) {
	t.Parallel()
	dir := upstreamDir(t)
	m, err := manifest.ReadFile(filepath.Join(dir, "vm", "approval-wait.algal.json"))
	if err != nil {
		t.Fatal(err)
	}
	st := store.NewMemStore()
	svc := mailbox.Open(t.TempDir())
	box, _ := svc.Create("approvals", 8, 65536)
	args := `{"input":{"inbox":"` + box.ReceiveHandle + `","proposal":"ship v2"}}`
	cp := runAndVerify(t, m, args, mailboxHost(st, svc))
	if cp["outcome"] != "suspended" {
		t.Fatalf("outcome %v", cp["outcome"])
	}
	k, _ := mailbox.NewKey()
	if _, _, err := svc.Send(box.SendHandle, "approved", k); err != nil {
		t.Fatal(err)
	}
	done, err := Resume(cp, m, mailboxHost(st, svc))
	if err != nil || done["outcome"] != "complete" {
		t.Fatalf("resume: %v %v", err, done)
	}
	if cell(t, done, "receive")["outputs"].(map[string]any)["message"] != "approved" {
		t.Fatalf("receive: %s", enc(cell(t, done, "receive")))
	}
}

func TestResumeAfterSuspension(t *testing.T) {
	t.Parallel()
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
