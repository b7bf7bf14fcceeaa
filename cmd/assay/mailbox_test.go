package main

import (
	"path/filepath"
	"strings"
	"testing"
)

const cliWait = `{"contract":"algal.organism.v1","key":"organism:wait","name":"W",
 "cells":[{"id":"in","kind":"input","outputs":{"inbox":{"type":"cap","capability":"mailbox-receive"}}},
  {"id":"wait","kind":"tool","tool":"mailbox.receive.v1"}],
 "edges":[{"from":{"cell":"in","port":"inbox"},"to":{"cell":"wait","port":"mailbox"}}]}`

func TestMailboxCLIReceiveSuspendsAndResumes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st := filepath.Join(dir, "store")
	code, out, errb := runCLI(t, "mailbox", "create", "inbox", "--dir", st)
	if code != 0 {
		t.Fatalf("create: %s", errb)
	}
	box := decodeObject(t, out)
	if box["name"] != "inbox" || box["maxMessages"] != 64.0 || box["maxMessageBytes"] != 65536.0 || box["pending"] != 64.0 ||
		!strings.HasPrefix(box["send"].(string), "cap:mailbox-send:") || !strings.HasPrefix(box["receive"].(string), "cap:mailbox-receive:") {
		t.Fatalf("create: %s", out)
	}
	m := putFile(t, dir, "wait.algal.json", cliWait)
	args := putFile(t, dir, "args.json", `{"in":{"inbox":"`+box["receive"].(string)+`"}}`)
	cp := filepath.Join(dir, "cp.json")
	code, out, errb = runCLI(t, "run", m, "--args", args, "--dir", st, "--out", cp)
	if code != exitNo || decodeObject(t, out)["outcome"] != "suspended" {
		t.Fatalf("run: %d %s %s", code, out, errb)
	}
	// Resuming before any send suspends again.
	if code, out, _ = runCLI(t, "resume", cp, "--dir", st); code != exitNo || decodeObject(t, out)["outcome"] != "suspended" {
		t.Fatalf("early resume: %s", out)
	}
	key := "sha256:" + strings.Repeat("ab", 32)
	// Upstream's spelling: the message is a file.
	wake := putFile(t, dir, "wake.json", `{"ok":true}`)
	code, out, errb = runCLI(t, "mailbox", "send", box["send"].(string), wake, "--idempotency-key", key, "--dir", st)
	if code != 0 || decodeObject(t, out)["duplicate"] != false {
		t.Fatalf("send: %s %s", out, errb)
	}
	id := decodeObject(t, out)["id"]
	// The same key again is the same delivery, delivered once.
	code, out, _ = runCLI(t, "mailbox", "send", box["send"].(string), "--value", `{"ok":true}`, "--idempotency-key", key, "--dir", st)
	if code != 0 || decodeObject(t, out)["duplicate"] != true || decodeObject(t, out)["id"] != id {
		t.Fatalf("duplicate send: %s", out)
	}
	done := filepath.Join(dir, "done.json")
	code, out, errb = runCLI(t, "resume", cp, m, "--dir", st, "--out", done)
	if code != 0 {
		t.Fatalf("resume: %s", errb)
	}
	rec := decodeObject(t, out)
	wait := rec["cells"].(map[string]any)["wait"].(map[string]any)
	if rec["outcome"] != "complete" || wait["outputs"].(map[string]any)["id"] != id {
		t.Fatalf("resumed: %s", out)
	}
	// Delivered once: a second resume of the original checkpoint finds the
	// mailbox empty again.
	if _, out, _ = runCLI(t, "resume", cp, "--dir", st); decodeObject(t, out)["outcome"] != "suspended" {
		t.Fatalf("the duplicate send was delivered twice: %s", out)
	}
	// Verification serves the record: it needs no mailbox at all.
	if code, _, errb = runCLI(t, "verify", done, m); code != 0 {
		t.Fatalf("verify: %s", errb)
	}
	// Revoke the send handle; the receive handle keeps working.
	if code, _, errb = runCLI(t, "mailbox", "revoke", box["send"].(string), "--dir", st); code != 0 {
		t.Fatalf("revoke: %s", errb)
	}
	code, _, errb = runCLI(t, "mailbox", "send", box["send"].(string), "--value", `1`, "--dir", st)
	if code != exitError || stderrCode(t, errb) != "CAPABILITY_DENIED" {
		t.Fatalf("revoked send: %d %s", code, errb)
	}
	// Bounds are usage errors.
	for _, bad := range [][]string{{"--pending", "0"}, {"--max-messages", "1025"}, {"--message-bytes", "250001"}, {"--max-message-bytes", "0"}} {
		if code, _, _ = runCLI(t, append([]string{"mailbox", "create", "other", "--dir", st}, bad...)...); code != 2 {
			t.Fatalf("%v: exit %d", bad, code)
		}
	}
	if code, _, _ = runCLI(t, "mailbox", "send", box["send"].(string), "--value", `1`, "--idempotency-key", "nope", "--dir", st); code != 2 {
		t.Fatalf("bad key: exit %d", code)
	}
	if code, _, _ = runCLI(t, "mailbox", "send", box["send"].(string), wake, "--value", `1`, "--dir", st); code != 2 {
		t.Fatalf("file and --value: exit %d", code)
	}
}

func TestMailboxCLIReceiveAndList(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st := filepath.Join(dir, "store")
	_, out, _ := runCLI(t, "mailbox", "create", "jobs", "--dir", st, "--max-messages", "2", "--max-message-bytes", "64")
	box := decodeObject(t, out)
	if box["maxMessages"] != 2.0 || box["maxMessageBytes"] != 64.0 {
		t.Fatalf("create: %s", out)
	}
	recv := box["receive"].(string)
	if code, out, _ := runCLI(t, "mailbox", "receive", recv, "--dir", st); code != exitNo || decodeObject(t, out)["empty"] != true {
		t.Fatalf("empty receive: exit %d %s", code, out)
	}
	if code, _, serr := runCLIInput(t, `{"job":1}`, "mailbox", "send", box["send"].(string), "-", "--dir", st); code != 0 {
		t.Fatalf("send from stdin: exit %d %s", code, serr)
	}
	_, out, _ = runCLI(t, "mailbox", "list", "--dir", st)
	boxes := decodeObject(t, out)["mailboxes"].([]any)
	if len(boxes) != 1 || boxes[0].(map[string]any)["name"] != "jobs" || boxes[0].(map[string]any)["pending"] != 1.0 {
		t.Fatalf("list: %s", out)
	}
	code, out, errb := runCLI(t, "mailbox", "receive", recv, "--dir", st)
	if code != 0 || !strings.Contains(out, `"message":{"job":1}`) {
		t.Fatalf("receive: exit %d %s %s", code, out, errb)
	}
	// A send handle cannot receive.
	if code, _, errb := runCLI(t, "mailbox", "receive", box["send"].(string), "--dir", st); code != exitError {
		t.Fatalf("receive with a send handle: exit %d %s", code, errb)
	}
}
